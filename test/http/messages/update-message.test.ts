/**
 * PATCH /messages/{id} and GET /messages/{id}/history over HTTP: Zulip's answers and
 * error codes (each refusal changing nothing), detached_uploads, the update_message
 * event as clients receive it (narrowed queues included), and message objects after an
 * edit: new content through the message caches, edit_history under the realm's
 * visibility policy. Moves: topic and channel changes with their event fields and
 * Notification Bot's notices after the event, the change_all time limit's error data.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../../src/engine/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../../support/http.js";

const clock = { now: 1_700_000_000 };
let s: TestServer;

beforeAll(async () => {
  s = await startServer({}, { now: () => clock.now });
});
afterAll(() => s.close());

async function send(user: User, content: string, topic = "lunch", to = "general"): Promise<number> {
  const r = await s.call(user, "POST", "/messages", { type: "stream", to, topic, content });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body["id"] as number;
}

const patch = (user: User, id: number | string, params: Record<string, unknown>) =>
  s.call(user, "PATCH", `/messages/${id}`, params);

async function register(user: User, params: Record<string, unknown> = {}): Promise<string> {
  const r = await s.call(user, "POST", "/register", params);
  expect(r.status).toBe(200);
  return r.body["queue_id"] as string;
}

async function events(user: User, queueId: string): Promise<Record<string, unknown>[]> {
  const r = await s.call(user, "GET", "/events", { queue_id: queueId, last_event_id: -1, dont_block: true });
  expect(r.status).toBe(200);
  return (r.body["events"] as Record<string, unknown>[]).filter((e) => e["type"] !== "heartbeat");
}

describe("PATCH /messages/{message_id}", () => {
  it("edits the content and answers detached_uploads", async () => {
    const { alice, bob } = s.seed;
    const id = await send(alice, "before");
    const r = await patch(alice, id, { content: "after" });
    expect([r.status, r.body]).toEqual([200, { result: "success", msg: "", detached_uploads: [] }]);
    const got = await s.call(bob, "GET", `/messages/${id}`);
    expect(got.body["raw_content"]).toBe("after");
  });

  it("lists the sender's uploads the edit unlinked", async () => {
    const { alice } = s.seed;
    const pathId = `${alice.realmId}/ef/${randomBytes(18).toString("base64url")}/notes.txt`;
    const upload = s.t.store.createAttachment(
      { ownerId: alice.id, pathId, name: "notes.txt", size: 5, contentType: "text/plain", image: null },
      null,
    );
    const id = await send(alice, `[notes](/user_uploads/${pathId})`);
    const r = await patch(alice, id, { content: "no more notes" });
    expect(r.body["detached_uploads"]).toEqual([
      {
        id: upload.id,
        name: "notes.txt",
        path_id: pathId,
        size: 5,
        create_time: upload.createTime * 1000,
        message_ids: [],
      },
    ]);
  });

  it("refuses with Zulip's errors and changes nothing", async () => {
    const { alice, bob, owner } = s.seed;
    const id = await send(alice, "mine");
    const secret = await send(alice, "hidden", "t", "secret");
    const cases: [User, string | number, Record<string, unknown>, string, string][] = [
      [bob, "abc", { content: "x" }, "BAD_REQUEST", "Invalid message(s)"],
      [bob, 9_999_999, { content: "x" }, "BAD_REQUEST", "Invalid message(s)"],
      [bob, secret, { content: "x" }, "BAD_REQUEST", "Invalid message(s)"],
      [owner, id, { content: "x" }, "BAD_REQUEST", "You don't have permission to edit this message"],
      [alice, id, {}, "BAD_REQUEST", "Nothing to change"],
      [alice, id, { topic: "lunch" }, "BAD_REQUEST", "Nothing to change"],
      [
        alice,
        id,
        { content: "x", propagate_mode: "change_all" },
        "BAD_REQUEST",
        "Invalid propagate_mode without topic edit",
      ],
      [alice, id, { content: "x", propagate_mode: "sideways" }, "BAD_REQUEST", "Invalid propagate_mode"],
      [alice, id, { content: "x", stream_id: "two" }, "BAD_REQUEST", "stream_id is not an integer"],
      [
        alice,
        id,
        { content: "x", stream_id: 1 },
        "BAD_REQUEST",
        "Cannot change message content while changing channel",
      ],
      [alice, id, { topic: "✔" }, "BAD_REQUEST", "General chat cannot be marked as resolved"],
      [
        alice,
        id,
        { topic: "x", send_notification_to_old_thread: "yes" },
        "BAD_REQUEST",
        "send_notification_to_old_thread is not a boolean",
      ],
      [bob, id, { topic: "x", stream_id: 999_999 }, "BAD_REQUEST", "Invalid channel ID"],
      [
        alice,
        id,
        { content: "x", prev_content_sha256: "0".repeat(64) },
        "EXPECTATION_MISMATCH",
        "'prev_content_sha256' value does not match the expected value.",
      ],
    ];
    for (const [user, target, params, code, msg] of cases)
      await expectRejectedUnchanged(s, () => patch(user, target, params), 400, code, msg);
    const stale = await patch(alice, id, { content: "x", prev_content_sha256: "0".repeat(64) });
    expect(stale.body["field_name"]).toBe("prev_content_sha256");
  });

  it("refuses edits past the realm's time limit (plus 20 s)", async () => {
    const { alice } = s.seed;
    const id = await send(alice, "timely");
    clock.now += 621;
    try {
      await expectRejectedUnchanged(
        s,
        () => patch(alice, id, { content: "late" }),
        400,
        "BAD_REQUEST",
        "The time limit for editing this message has passed",
      );
    } finally {
      clock.now -= 621;
    }
  });
});

describe("the update_message event", () => {
  it("reaches the message's recipients with their flags, narrowed queues included, and not the others", async () => {
    const { alice, bob, guest } = s.seed;
    const id = await send(alice, "plain");
    const bobs = await register(bob, { event_types: ["update_message"] });
    const narrowed = await register(bob, { narrow: [["topic", "elsewhere"]] });
    const guests = await register(guest);
    clock.now += 3;
    expect((await patch(alice, id, { content: "@**Bob** look" })).status).toBe(200);
    const channelId = s.seed.general.id;
    const rendered = (await s.call(bob, "GET", `/messages/${id}`)).body["message"] as Record<string, unknown>;
    const expected = {
      type: "update_message",
      user_id: alice.id,
      edit_timestamp: clock.now,
      message_id: id,
      message_ids: [id],
      rendering_only: false,
      flags: ["mentioned"],
      stream_name: "general",
      stream_id: channelId,
      orig_content: "plain",
      orig_rendered_content: "<p>plain</p>",
      content: "@**Bob** look",
      rendered_content: rendered["content"],
      is_me_message: false,
    };
    expect(await events(bob, bobs)).toEqual([{ ...expected, id: 0 }]);
    // Zulip filters only message events by a queue's narrow.
    expect((await events(bob, narrowed)).filter((e) => e["type"] === "update_message")).toEqual([
      { ...expected, id: 0 },
    ]);
    expect((await events(guest, guests)).filter((e) => e["type"] === "update_message")).toEqual([]);
  });
});

describe("moves", () => {
  it("moves a topic with change_all: the event carries Zulip's move fields, then come the notices", async () => {
    const { alice, bob } = s.seed;
    const a = await send(alice, "one", "trip");
    const b = await send(alice, "two", "trip");
    const queue = await register(bob);
    clock.now += 2;
    const r = await patch(bob, b, {
      subject: "voyage",
      propagate_mode: "change_all",
      send_notification_to_old_thread: "true",
    });
    expect([r.status, r.body]).toEqual([200, { result: "success", msg: "", detached_uploads: [] }]);
    // Zulip's order: topic policy changes (Alice follows the topic she started), the
    // update_message event, then Notification Bot's messages.
    const got = (await events(bob, queue)).filter((e) => e["type"] === "update_message" || e["type"] === "message");
    expect(got[0]).toEqual({
      type: "update_message",
      id: expect.any(Number),
      user_id: bob.id,
      edit_timestamp: clock.now,
      message_id: b,
      message_ids: [a, b],
      rendering_only: false,
      flags: [],
      stream_name: "general",
      stream_id: s.seed.general.id,
      propagate_mode: "change_all",
      orig_subject: "trip",
      subject: "voyage",
      topic_links: [],
    });
    const notices = got.slice(1).map((e) => {
      const message = e["message"] as Record<string, unknown>;
      return [e["type"], message["subject"], message["content"]];
    });
    const mention = `@_**Bob|${bob.id}**`;
    expect(notices).toEqual([
      ["message", "voyage", `This topic was moved here from #**general>trip** by ${mention}.`],
      ["message", "trip", `This topic was moved to #**general>voyage** by ${mention}.`],
    ]);
    const noticeId = (got[1]!["message"] as Record<string, unknown>)["id"] as number;
    const rendered = (await s.call(bob, "GET", `/messages/${noticeId}`)).body["message"] as Record<string, unknown>;
    expect(rendered["content"]).toContain(`<span class="user-mention silent" data-user-id="${bob.id}">Bob</span>`);
    expect(rendered["content"]).toContain(`class="stream-topic"`);
    const moved = await s.call(bob, "GET", `/messages/${a}`, { apply_markdown: "false" });
    const message = moved.body["message"] as Record<string, unknown>;
    expect(message["subject"]).toBe("voyage");
    expect(message["last_moved_timestamp"]).toBe(clock.now);
    expect(message["edit_history"]).toEqual([
      { user_id: bob.id, timestamp: clock.now, prev_topic: "trip", topic: "voyage" },
    ]);
  });

  it("moves to a private channel: members hear of it, non-members no longer see the messages", async () => {
    const { alice, bob, owner } = s.seed;
    const a = await send(alice, "for the few", "plans");
    const bobs = await register(bob);
    const alices = await register(alice);
    const r = await patch(owner, a, { stream_id: s.seed.secret.id, send_notification_to_new_thread: "false" });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const event = (await events(alice, alices)).find((e) => e["type"] === "update_message");
    expect(event).toMatchObject({
      type: "update_message",
      message_ids: [a],
      stream_id: s.seed.general.id,
      new_stream_id: s.seed.secret.id,
      orig_subject: "plans",
      propagate_mode: "change_one",
    });
    expect(event).not.toHaveProperty("subject");
    // Bob can no longer read it: to his queue (no bulk_message_deletion) it is deleted.
    const bobSees = await events(bob, bobs);
    expect(bobSees.filter((e) => e["type"] === "update_message")).toEqual([]);
    expect(bobSees.filter((e) => e["type"] === "delete_message")).toEqual([
      {
        type: "delete_message",
        id: expect.any(Number),
        message_id: a,
        message_type: "stream",
        stream_id: s.seed.general.id,
        topic: "plans",
      },
    ]);
    expect((await s.call(bob, "GET", `/messages/${a}`)).status).toBe(400);
  });

  it("tells a sender outside the channel that a change_later move took their message (beyond Zulip)", async () => {
    const { alice, owner } = s.seed;
    const sub = await s.call(owner, "POST", "/users/me/subscriptions", {
      subscriptions: JSON.stringify([{ name: "lobby" }]),
    });
    expect(sub.status, JSON.stringify(sub.body)).toBe(200);
    const target = await send(owner, "first", "plans", "lobby");
    const hers = await send(alice, "me too, from outside", "plans", "lobby");
    const queue = await register(alice);
    const r = await patch(owner, target, { topic: "dinner", propagate_mode: "change_later" });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    // Zulip asks only the target's rows and the channel's members: Alice has neither.
    const moved = (await events(alice, queue)).filter((e) => e["type"] === "update_message");
    expect(moved).toMatchObject([{ message_ids: [target, hers], orig_subject: "plans", subject: "dinner" }]);
  });

  it("answers MOVE_MESSAGES_TIME_LIMIT_EXCEEDED with what may move", async () => {
    const { alice, bob, owner } = s.seed;
    const old = await send(alice, "old", "ancient");
    clock.now += 3600;
    const recent = await send(alice, "recent", "ancient");
    await s.t.store.setRealmMessagePolicy(owner.id, { moveMessagesWithinStreamLimitSeconds: 600 });
    try {
      const body = await expectRejectedUnchanged(
        s,
        () => patch(bob, recent, { topic: "newer", propagate_mode: "change_all" }),
        400,
        "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED",
        "You only have permission to move the 1/2 most recent messages in this topic.",
      );
      expect(body).toMatchObject({
        first_message_id_allowed_to_move: recent,
        total_messages_in_topic: 2,
        total_messages_allowed_to_move: 1,
      });
      expect(old).toBeLessThan(recent);
    } finally {
      s.t.store.setRealmMessagePolicy(owner.id, { moveMessagesWithinStreamLimitSeconds: 604800 });
    }
  });
});

describe("message objects after an edit", () => {
  it("show the new content and edit_history through the caches, following the visibility policy", async () => {
    const { alice, bob, owner } = s.seed;
    const sent = clock.now;
    const id = await send(alice, "first", "history");
    const window = async () => {
      const r = await s.call(bob, "GET", "/messages", {
        anchor: id,
        num_before: 0,
        num_after: 0,
        narrow: [{ operator: "topic", operand: "history" }],
      });
      return (r.body["messages"] as Record<string, unknown>[])[0]!;
    };
    // Twice: the second answer comes from the caches.
    await window();
    expect((await window())["content"]).toBe("<p>first</p>");
    clock.now += 60;
    await patch(alice, id, { content: "second" });
    const edited = await window();
    expect(edited["content"]).toBe("<p>second</p>");
    expect(edited["last_edit_timestamp"]).toBe(sent + 60);
    expect(edited["edit_history"]).toEqual([
      { user_id: alice.id, timestamp: sent + 60, prev_content: "first", prev_rendered_content: "<p>first</p>" },
    ]);
    try {
      s.t.store.setRealmMessagePolicy(owner.id, { messageEditHistoryVisibilityPolicy: "moves" });
      expect((await window())["edit_history"]).toEqual([]);
      // Nor does GET history show the content change, its diff included.
      const history = (await s.call(bob, "GET", `/messages/${id}/history`)).body["message_history"];
      expect(history).toEqual([expect.not.objectContaining({ content_html_diff: expect.anything() })]);
      s.t.store.setRealmMessagePolicy(owner.id, { messageEditHistoryVisibilityPolicy: "none" });
      const hidden = await window();
      expect("edit_history" in hidden).toBe(false);
      expect(hidden["last_edit_timestamp"]).toBe(sent + 60);
      const one = (await s.call(bob, "GET", `/messages/${id}`)).body["message"] as Record<string, unknown>;
      expect("edit_history" in one).toBe(false);
    } finally {
      s.t.store.setRealmMessagePolicy(owner.id, { messageEditHistoryVisibilityPolicy: "all" });
    }
  });
});

describe("GET /messages/{message_id}/history", () => {
  it("answers Zulip's snapshots, oldest first; the empty topic as general chat unless asked", async () => {
    const { alice, bob, owner } = s.seed;
    const sent = clock.now;
    const id = await send(alice, "v1", "");
    clock.now += 5;
    await patch(alice, id, { content: "v2" });
    const r = await s.call(bob, "GET", `/messages/${id}/history`);
    expect(r.body).toEqual({
      result: "success",
      msg: "",
      message_history: [
        { topic: "general chat", content: "v1", rendered_content: "<p>v1</p>", timestamp: sent, user_id: alice.id },
        {
          topic: "general chat",
          content: "v2",
          rendered_content: "<p>v2</p>",
          timestamp: sent + 5,
          user_id: alice.id,
          prev_content: "v1",
          prev_rendered_content: "<p>v1</p>",
          content_html_diff:
            '<div><p><span class="highlight_text_inserted">v2</span></p> <p><span class="highlight_text_deleted">v1</span></p></div>',
        },
      ],
    });
    const raw = await s.call(bob, "GET", `/messages/${id}/history`, { allow_empty_topic_name: true });
    expect((raw.body["message_history"] as { topic: string }[]).map((h) => h.topic)).toEqual(["", ""]);
    const unedited = await send(alice, "never edited");
    expect((await s.call(bob, "GET", `/messages/${unedited}/history`)).body["message_history"]).toEqual([
      {
        topic: "lunch",
        content: "never edited",
        rendered_content: "<p>never edited</p>",
        timestamp: clock.now,
        user_id: alice.id,
      },
    ]);
    const secret = await send(alice, "hidden", "t", "secret");
    await expectRejectedUnchanged(
      s,
      () => s.call(bob, "GET", `/messages/${secret}/history`),
      400,
      "BAD_REQUEST",
      "Invalid message(s)",
    );
    s.t.store.setRealmMessagePolicy(owner.id, { messageEditHistoryVisibilityPolicy: "none" });
    try {
      await expectRejectedUnchanged(
        s,
        () => s.call(bob, "GET", `/messages/${id}/history`),
        400,
        "BAD_REQUEST",
        "Message edit history is disabled in this organization",
      );
    } finally {
      s.t.store.setRealmMessagePolicy(owner.id, { messageEditHistoryVisibilityPolicy: "all" });
    }
  });
});

describe("DELETE /messages/{message_id}/history", () => {
  const history = async (user: User, id: number) =>
    (await s.call(user, "GET", `/messages/${id}/history`)).body["message_history"] as Record<string, unknown>[];

  it("drops the earlier contents for whoever may delete the message, keeps moves and who did it", async () => {
    const { alice, bob } = s.seed;
    const id = await send(alice, "v1", "drafts");
    clock.now += 5;
    expect((await patch(alice, id, { content: "v2" })).status).toBe(200);
    expect((await patch(alice, id, { topic: "final" })).status).toBe(200);
    expect((await patch(alice, id, { content: "v3" })).status).toBe(200);
    await expectRejectedUnchanged(
      s,
      () => s.call(bob, "DELETE", `/messages/${id}/history`),
      400,
      "BAD_REQUEST",
      "You don't have permission to delete this message",
    );
    // Cached with the full history first: the deletion must reach the message cache.
    const fetchOne = async () =>
      (
        (await s.call(bob, "GET", "/messages", { anchor: id, num_before: 0, num_after: 0 })).body["messages"] as Record<
          string,
          unknown
        >[]
      )[0]!;
    expect((await fetchOne())["edit_history"]).toHaveLength(3);
    const ok = await s.call(alice, "DELETE", `/messages/${id}/history`);
    expect([ok.status, ok.body]).toEqual([200, { result: "success", msg: "" }]);
    const after = await history(bob, id);
    expect(after).toEqual([
      expect.objectContaining({ content: "v3", topic: "drafts", user_id: alice.id, history_deleted_by: alice.id }),
      expect.objectContaining({ content: "v3", topic: "final", prev_topic: "drafts" }),
    ]);
    expect(after.some((h) => "prev_content" in h || "content_html_diff" in h)).toBe(false);
    const message = await fetchOne();
    expect(message["edit_history"]).toEqual([
      { user_id: alice.id, timestamp: clock.now, prev_topic: "drafts", topic: "final" },
    ]);
    expect(message).not.toHaveProperty("last_edit_timestamp");
    // Nothing left to delete.
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "DELETE", `/messages/${id}/history`),
      400,
      "BAD_REQUEST",
      "Invalid message(s)",
    );
  });

  it("lets an administrator delete another's history; refuses unknown, hidden and unedited messages and late senders", async () => {
    const { alice, bob, owner } = s.seed;
    const edited = await send(bob, "first");
    expect((await patch(bob, edited, { content: "second" })).status).toBe(200);
    expect((await s.call(owner, "DELETE", `/messages/${edited}/history`)).status).toBe(200);
    expect((await history(alice, edited))[0]).toMatchObject({ content: "second", history_deleted_by: owner.id });
    const unedited = await send(alice, "as sent");
    const secret = await send(alice, "hidden", "t", "secret");
    expect((await patch(alice, secret, { content: "hidden too" })).status).toBe(200);
    for (const [user, target] of [
      [alice, "abc"],
      [alice, 9_999_999],
      [alice, unedited],
      [bob, secret],
    ] as const)
      await expectRejectedUnchanged(
        s,
        () => s.call(user, "DELETE", `/messages/${target}/history`),
        400,
        "BAD_REQUEST",
        "Invalid message(s)",
      );
    const late = await send(alice, "old");
    expect((await patch(alice, late, { content: "older" })).status).toBe(200);
    clock.now += 3600;
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "DELETE", `/messages/${late}/history`),
      400,
      "BAD_REQUEST",
      "The time limit for deleting this message has passed",
    );
  });
});
