import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";
import { fingerprint } from "../support/snapshot.js";
import { MessageJsonCache } from "../../src/http/views/message-cache.js";

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.close());

/** Asserts a 4xx with Zulip's code and message, and that nothing in the store changed. */
const rejects = (
  call: () => Promise<{ status: number; body: Record<string, unknown> }>,
  status: number,
  code: string,
  msg: string | RegExp,
) => expectRejectedUnchanged(s, call, status, code, msg);

describe("POST /messages", () => {
  it("sends channel messages by name and ID, and direct messages by IDs and emails", async () => {
    const { alice, bob, general } = s.seed;
    const a = await s.call(alice, "POST", "/messages", {
      type: "stream",
      to: "general",
      topic: "greetings",
      content: "hello **world**",
    });
    expect(a.status).toBe(200);
    expect(typeof a.body["id"]).toBe("number");
    const b = await s.call(alice, "POST", "/messages", {
      type: "channel",
      to: JSON.stringify(general.id),
      topic: "greetings",
      content: "by id",
    });
    expect(b.body["result"]).toBe("success");
    const c = await s.call(alice, "POST", "/messages", {
      type: "direct",
      to: JSON.stringify([bob.id]),
      content: "dm by id",
    });
    expect(c.body["result"]).toBe("success");
    const d = await s.call(alice, "POST", "/messages", { type: "private", to: bob.email, content: "dm by email" });
    expect(d.body["result"]).toBe("success");
    const fetched = await s.call(bob, "GET", "/messages", {
      anchor: "newest",
      num_before: 10,
      num_after: 0,
      apply_markdown: true,
    });
    const ids = (fetched.body["messages"] as { id: number }[]).map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining([a.body["id"], b.body["id"], c.body["id"], d.body["id"]]));
    const first = (fetched.body["messages"] as Record<string, unknown>[]).find((m) => m["id"] === a.body["id"])!;
    expect(first["content"]).toBe("<p>hello <strong>world</strong></p>");
    expect(first["display_recipient"]).toBe("general");
    expect(first["subject"]).toBe("greetings");
    expect(first["type"]).toBe("stream");
    expect(first["stream_id"]).toBe(general.id);
    expect(first["flags"]).toEqual([]);
  });

  it("maps the empty topic and (no topic) to general chat", async () => {
    const { alice, bob } = s.seed;
    const r = await s.call(alice, "POST", "/messages", {
      type: "stream",
      to: "general",
      topic: "(no topic)",
      content: "empty topic",
    });
    const one = await s.call(bob, "GET", `/messages/${String(r.body["id"])}`);
    expect((one.body["message"] as Record<string, unknown>)["subject"]).toBe("general chat");
    const raw = await s.call(bob, "GET", `/messages/${String(r.body["id"])}`, { allow_empty_topic_name: true });
    expect((raw.body["message"] as Record<string, unknown>)["subject"]).toBe("");
  });

  it("rejects bad input with Zulip's errors and changes nothing", async () => {
    const { alice } = s.seed;
    await rejects(
      () => s.call(alice, "POST", "/messages", { to: "general", content: "x" }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'type' argument",
    );
    await rejects(
      () => s.call(alice, "POST", "/messages", { type: "bogus", to: "general", content: "x" }),
      400,
      "BAD_REQUEST",
      "Invalid type",
    );
    await rejects(
      () => s.call(alice, "POST", "/messages", { type: "stream", to: "nowhere", topic: "t", content: "x" }),
      400,
      "STREAM_DOES_NOT_EXIST",
      "Channel 'nowhere' does not exist",
    );
    const body = await rejects(
      () => s.call(alice, "POST", "/messages", { type: "stream", to: "9999", topic: "t", content: "x" }),
      400,
      "STREAM_DOES_NOT_EXIST",
      "Channel with ID '9999' does not exist",
    );
    expect(body["stream_id"]).toBe(9999);
    await rejects(
      () => s.call(alice, "POST", "/messages", { type: "stream", to: "general", topic: "t", content: "   " }),
      400,
      "BAD_REQUEST",
      "Message must not be empty",
    );
    await rejects(
      () => s.call(alice, "POST", "/messages", { type: "stream", to: "general", topic: "t", content: "a\u0000b" }),
      400,
      "BAD_REQUEST",
      "Message must not contain null bytes",
    );
    await rejects(
      () => s.call(alice, "POST", "/messages", { type: "stream", to: "general", content: "x" }),
      400,
      "BAD_REQUEST",
      "Missing topic",
    );
    await rejects(
      () => s.call(alice, "POST", "/messages", { type: "direct", to: "[99999]", content: "x" }),
      400,
      "BAD_REQUEST",
      "Invalid user ID 99999",
    );
    await rejects(
      () => s.call(alice, "POST", "/messages", { type: "direct", to: "nobody@nowhere.dev", content: "x" }),
      400,
      "BAD_REQUEST",
      "Invalid email 'nobody@nowhere.dev'",
    );
    await rejects(
      () => s.call(alice, "POST", "/messages", { type: "stream", to: "[1,2]", topic: "t", content: "x" }),
      400,
      "BAD_REQUEST",
      "Expected exactly one channel",
    );
    await rejects(
      () =>
        s.call(alice, "POST", "/messages", {
          type: "stream",
          to: "general",
          topic: "t",
          content: "x",
          read_by_sender: "maybe",
        }),
      400,
      "BAD_REQUEST",
      "read_by_sender is not a boolean",
    );
    await rejects(
      () => s.call(s.seed.bob, "POST", "/messages", { type: "stream", to: "secret", topic: "t", content: "x" }),
      400,
      "STREAM_DOES_NOT_EXIST",
      "Channel 'secret' does not exist",
    );
    await rejects(
      () =>
        s.call(s.seed.bob, "POST", "/messages", {
          type: "stream",
          to: String(s.seed.secret.id),
          topic: "t",
          content: "x",
        }),
      400,
      "STREAM_DOES_NOT_EXIST",
      `Channel with ID '${s.seed.secret.id}' does not exist`,
    );
    await rejects(
      () =>
        s.call(alice, "POST", "/messages", { type: "stream", to: "general", topic: "t", content: "x", queue_id: "q" }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'local_id' argument",
    );
  });

  it("topic and subject together are REQUEST_CONFUSING_VAR", async () => {
    const body = await rejects(
      () =>
        s.call(s.seed.alice, "POST", "/messages", {
          type: "stream",
          to: "general",
          topic: "a",
          subject: "b",
          content: "x",
        }),
      400,
      "REQUEST_CONFUSING_VAR",
      "Can't decide between 'topic' and 'subject' arguments",
    );
    expect(body).toMatchObject({ var_name1: "topic", var_name2: "subject" });
  });

  it("the client parameter names the sending client, over the User-Agent", async () => {
    const { alice } = s.seed;
    const sent = await s.call(
      alice,
      "POST",
      "/messages",
      { type: "stream", to: "general", topic: "clients", content: "x", client: "my-script" },
      { headers: { "User-Agent": "ZulipMobile/27.2" } },
    );
    expect(sent.body["ignored_parameters_unsupported"]).toBeUndefined();
    const fetched = await s.call(alice, "GET", `/messages/${String(sent.body["id"])}`);
    expect((fetched.body["message"] as Record<string, unknown>)["client"]).toBe("my-script");
    const byAgent = await s.call(
      alice,
      "POST",
      "/messages",
      { type: "stream", to: "general", topic: "clients", content: "y", client: "" },
      { headers: { "User-Agent": "ZulipMobile/27.2" } },
    );
    const fetched2 = await s.call(alice, "GET", `/messages/${String(byAgent.body["id"])}`);
    expect((fetched2.body["message"] as Record<string, unknown>)["client"]).toBe("ZulipMobile");
  });

  it("truncates long content and topics like Zulip", async () => {
    const { alice } = s.seed;
    const r = await s.call(alice, "POST", "/messages", {
      type: "stream",
      to: "general",
      topic: "t".repeat(80),
      content: "y".repeat(10050),
    });
    const one = await s.call(alice, "GET", `/messages/${String(r.body["id"])}`, { apply_markdown: false });
    const m = one.body["message"] as Record<string, string>;
    expect([...m["content"]!].length).toBe(10000);
    expect(m["content"]!.endsWith("\n[message truncated]")).toBe(true);
    expect(m["subject"]).toBe("t".repeat(57) + "...");
  });
});

describe("GET /messages", () => {
  it("windows, narrows, found flags and anchors", async () => {
    const { owner, alice } = s.seed;
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await s.call(owner, "POST", "/messages", {
        type: "stream",
        to: "general",
        topic: "window",
        content: `m${i} searchable`,
      });
      ids.push(r.body["id"] as number);
    }
    const narrow = JSON.stringify([
      { operator: "channel", operand: "general" },
      { operator: "topic", operand: "WINDOW" },
    ]);
    const r = await s.call(alice, "GET", "/messages", { anchor: String(ids[2]), num_before: 1, num_after: 1, narrow });
    expect((r.body["messages"] as { id: number }[]).map((m) => m.id)).toEqual([ids[1], ids[2], ids[3]]);
    expect(r.body).toMatchObject({
      anchor: ids[2],
      found_anchor: true,
      found_oldest: false,
      found_newest: false,
      history_limited: false,
    });
    const newest = await s.call(alice, "GET", "/messages", { anchor: "newest", num_before: 100, num_after: 0, narrow });
    expect(newest.body).toMatchObject({
      anchor: 10000000000000000,
      found_newest: true,
      found_oldest: true,
      found_anchor: false,
    });
    const legacy = await s.call(alice, "GET", "/messages", {
      anchor: "newest",
      num_before: 2,
      num_after: 0,
      narrow: JSON.stringify([
        ["stream", "general"],
        ["topic", "window"],
      ]),
    });
    expect((legacy.body["messages"] as { id: number }[]).map((m) => m.id)).toEqual([ids[3], ids[4]]);
    const search = await s.call(alice, "GET", "/messages", {
      anchor: "newest",
      num_before: 10,
      num_after: 0,
      narrow: JSON.stringify([{ operator: "search", operand: "m3" }]),
    });
    const found = search.body["messages"] as Record<string, unknown>[];
    expect(found.map((m) => m["id"])).toEqual([ids[3]]);
    expect(found[0]!["match_content"]).toBe('<p><span class="highlight">m3</span> searchable</p>');
    expect(found[0]!["match_subject"]).toBe("window");
    const byIds = await s.call(alice, "GET", "/messages", { message_ids: JSON.stringify([ids[0], ids[4], 999999]) });
    expect((byIds.body["messages"] as { id: number }[]).map((m) => m.id)).toEqual([ids[0], ids[4]]);
    expect(byIds.body["anchor"]).toBeUndefined();
  });

  it("rejects bad parameters with Zulip's errors", async () => {
    const { alice } = s.seed;
    await rejects(
      () => s.call(alice, "GET", "/messages", { num_before: 1, num_after: 1 }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'anchor' argument",
    );
    await rejects(
      () => s.call(alice, "GET", "/messages", { anchor: "sideways", num_before: 1, num_after: 1 }),
      400,
      "BAD_REQUEST",
      "Invalid anchor",
    );
    await rejects(
      () => s.call(alice, "GET", "/messages", { anchor: "newest", num_before: "x", num_after: 1 }),
      400,
      "BAD_REQUEST",
      "num_before is not an integer",
    );
    await rejects(
      () => s.call(alice, "GET", "/messages", { anchor: "newest", num_before: -1, num_after: 1 }),
      400,
      "BAD_REQUEST",
      "num_before is too small",
    );
    await rejects(
      () => s.call(alice, "GET", "/messages", { anchor: "newest", num_before: 4000, num_after: 1001 }),
      400,
      "BAD_REQUEST",
      "Too many messages requested (maximum 5000).",
    );
    await rejects(
      () => s.call(alice, "GET", "/messages", { anchor: "5", num_before: 1, num_after: 1, include_anchor: false }),
      400,
      "BAD_REQUEST",
      "The anchor can only be excluded at an end of the range",
    );
    await rejects(
      () => s.call(alice, "GET", "/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: "{not json" }),
      400,
      "BAD_REQUEST",
      "narrow is not valid JSON",
    );
    await rejects(
      () =>
        s.call(alice, "GET", "/messages", {
          anchor: "newest",
          num_before: 1,
          num_after: 0,
          narrow: JSON.stringify([{ operator: "bogus", operand: "x" }]),
        }),
      400,
      "BAD_NARROW",
      "Invalid narrow operator: unknown operator bogus",
    );
    await rejects(
      () =>
        s.call(alice, "GET", "/messages", {
          anchor: "newest",
          num_before: 1,
          num_after: 0,
          narrow: JSON.stringify([["channel", "nope"]]),
        }),
      400,
      "BAD_NARROW",
      "Invalid narrow operator: unknown channel nope",
    );
    for (const [operator, operand, desc] of [
      ["is", "constructor", "unknown 'is' operand constructor"],
      ["is", "__proto__", "unknown 'is' operand __proto__"],
      ["has", "toString", "unknown 'has' operand toString"],
      ["constructor", "x", "unknown operator constructor"],
    ]) {
      await rejects(
        () =>
          s.call(alice, "GET", "/messages", {
            anchor: "newest",
            num_before: 1,
            num_after: 0,
            narrow: JSON.stringify([[operator, operand]]),
          }),
        400,
        "BAD_NARROW",
        `Invalid narrow operator: ${desc}`,
      );
    }
    await rejects(
      () =>
        s.call(alice, "GET", "/messages", {
          anchor: "newest",
          num_before: 1,
          num_after: 0,
          narrow: JSON.stringify([
            ["channel", "general"],
            ["dm", "bob@test.dev"],
          ]),
        }),
      400,
      "BAD_NARROW",
      "Invalid narrow operator: No message can be both a channel message and direct message",
    );
    await rejects(
      () => s.call(alice, "GET", "/messages", { anchor: "newest", num_before: 1, message_ids: "[1]" }),
      400,
      "BAD_REQUEST",
      /^Unsupported parameter combination/,
    );
    await rejects(
      () =>
        s.call(alice, "GET", "/messages", {
          anchor: "newest",
          num_before: 1,
          num_after: 0,
          narrow: JSON.stringify([["is"]]),
        }),
      400,
      "BAD_REQUEST",
      "element is not a string pair",
    );
  });

  it("never reveals a private channel's messages to a non-subscriber", async () => {
    const { owner, bob, secret } = s.seed;
    const r = await s.call(owner, "POST", "/messages", {
      type: "stream",
      to: "secret",
      topic: "hidden",
      content: "classified words",
    });
    const id = r.body["id"] as number;
    for (const narrow of [[], [["search", "classified"]], [["id", String(id)]], [["topic", "hidden"]]]) {
      const got = await s.call(bob, "GET", "/messages", {
        anchor: "newest",
        num_before: 100,
        num_after: 0,
        narrow: JSON.stringify(narrow),
      });
      expect((got.body["messages"] as { id: number }[]).map((m) => m.id)).not.toContain(id);
    }
    // Naming the channel fails exactly as for a channel that does not exist.
    for (const operand of ["secret", String(secret.id)]) {
      const narrow = JSON.stringify([["channel", operand]]);
      await rejects(
        () => s.call(bob, "GET", "/messages", { anchor: "newest", num_before: 100, num_after: 0, narrow }),
        400,
        "BAD_NARROW",
        `Invalid narrow operator: unknown channel ${operand}`,
      );
    }
    const byIds = await s.call(bob, "GET", "/messages", { message_ids: JSON.stringify([id]) });
    expect(byIds.body["messages"]).toEqual([]);
    await rejects(() => s.call(bob, "GET", `/messages/${id}`), 400, "BAD_REQUEST", "Invalid message(s)");
    await rejects(
      () => s.call(bob, "POST", "/messages/flags", { messages: JSON.stringify([id]), op: "add", flag: "starred" }),
      400,
      "BAD_REQUEST",
      "Invalid message(s)",
    );
  });
});

describe("flags", () => {
  it("updates flags by IDs and by narrow, and marks topics read", async () => {
    const { owner, bob, general } = s.seed;
    const ids: number[] = [];
    for (let i = 0; i < 4; i++)
      ids.push(
        (await s.call(owner, "POST", "/messages", { type: "stream", to: "general", topic: "flags", content: `f${i}` }))
          .body["id"] as number,
      );
    const star = await s.call(bob, "POST", "/messages/flags", {
      messages: JSON.stringify([ids[0]]),
      op: "add",
      flag: "starred",
    });
    expect(star.body).toEqual({ result: "success", msg: "", messages: [ids[0]] });
    const starred = await s.call(bob, "GET", "/messages", {
      anchor: "newest",
      num_before: 10,
      num_after: 0,
      narrow: JSON.stringify([["is", "starred"]]),
    });
    expect((starred.body["messages"] as { id: number; flags: string[] }[]).map((m) => [m.id, m.flags])).toEqual([
      [ids[0], ["starred"]],
    ]);
    const narrowed = await s.call(bob, "POST", "/messages/flags/narrow", {
      anchor: "oldest",
      num_before: 0,
      num_after: 2,
      narrow: JSON.stringify([
        ["channel", "general"],
        ["topic", "flags"],
      ]),
      op: "add",
      flag: "read",
    });
    expect(narrowed.body).toMatchObject({
      processed_count: 2,
      updated_count: 2,
      first_processed_id: ids[0],
      last_processed_id: ids[1],
      found_oldest: true,
      found_newest: false,
    });
    const unread = await s.call(bob, "POST", "/messages/flags", {
      messages: JSON.stringify([ids[0]]),
      op: "remove",
      flag: "read",
    });
    expect(unread.body["ignored_because_not_subscribed_channels"]).toEqual([]);
    const mark = await s.call(bob, "POST", "/mark_topic_as_read", { stream_id: general.id, topic_name: "flags" });
    expect(mark.body).toEqual({ result: "success", msg: "" });
    const left = await s.call(bob, "GET", "/messages", {
      anchor: "newest",
      num_before: 10,
      num_after: 0,
      narrow: JSON.stringify([
        ["topic", "flags"],
        ["is", "unread"],
      ]),
    });
    expect(left.body["messages"]).toEqual([]);
  });

  it("IDs no message can have (0, negative, huge) answer like a missing ID, for every op and flag", async () => {
    const { bob } = s.seed;
    const flags = (messages: number[], op: string, flag: string) => () =>
      s.call(bob, "POST", "/messages/flags", { messages: JSON.stringify(messages), op, flag });
    for (const id of [0, -1, 2 ** 32, Number.MAX_SAFE_INTEGER, 99_999_999]) {
      for (const [op, flag] of [
        ["add", "starred"],
        ["add", "collapsed"],
        ["remove", "read"],
      ] as const) {
        await rejects(flags([id], op, flag), 400, "BAD_REQUEST", "Invalid message(s)");
      }
      // Changes that keep a row-less message as it is (read, not starred) succeed and change nothing, as for a missing
      // ID.
      for (const [op, flag] of [
        ["add", "read"],
        ["remove", "starred"],
      ] as const) {
        const before = fingerprint(s.t.store);
        expect((await flags([id], op, flag)()).body).toEqual({ result: "success", msg: "", messages: [id] });
        expect(fingerprint(s.t.store)).toBe(before);
      }
    }
  });

  it("rejects bad flag requests", async () => {
    const { bob, general } = s.seed;
    await rejects(
      () => s.call(bob, "POST", "/messages/flags", { messages: "[1]", op: "add", flag: "mentioned" }),
      400,
      "BAD_REQUEST",
      "Flag not editable: 'mentioned'",
    );
    await rejects(
      () => s.call(bob, "POST", "/messages/flags", { messages: "[1]", op: "add", flag: "shiny" }),
      400,
      "BAD_REQUEST",
      "Invalid flag: 'shiny'",
    );
    await rejects(
      () => s.call(bob, "POST", "/messages/flags", { messages: "[1]", op: "toggle", flag: "read" }),
      400,
      "BAD_REQUEST",
      "Invalid message flag operation: 'toggle'",
    );
    await rejects(
      () => s.call(bob, "POST", "/messages/flags", { messages: "1,2", op: "add", flag: "read" }),
      400,
      "BAD_REQUEST",
      "messages is not valid JSON",
    );
    await rejects(
      () => s.call(bob, "POST", "/messages/flags", { messages: '["a"]', op: "add", flag: "read" }),
      400,
      "BAD_REQUEST",
      "messages[0] is not an integer",
    );
    await rejects(
      () => s.call(bob, "POST", "/messages/flags", { op: "add", flag: "read" }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'messages' argument",
    );
    await rejects(
      () => s.call(bob, "POST", "/messages/flags/narrow", { anchor: "newest", num_before: 1, op: "add", flag: "read" }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'num_after' argument",
    );
    await rejects(
      () => s.call(bob, "POST", "/mark_topic_as_read", { stream_id: general.id, topic_name: "never-used" }),
      400,
      "BAD_REQUEST",
      "No such topic 'never-used'",
    );
    await rejects(
      () => s.call(bob, "POST", "/mark_topic_as_read", { stream_id: s.seed.secret.id, topic_name: "x" }),
      400,
      "BAD_REQUEST",
      "Invalid channel ID",
    );
    // Topics far beyond any stored one (and LMDB's key limit) simply do not exist.
    const huge = "x".repeat(100_000);
    await rejects(
      () => s.call(bob, "POST", "/mark_topic_as_read", { stream_id: general.id, topic_name: huge }),
      400,
      "BAD_REQUEST",
      `No such topic '${"x".repeat(100)}…'`,
    );
    const narrowed = await s.call(bob, "GET", "/messages", {
      anchor: "newest",
      num_before: 5,
      num_after: 0,
      narrow: JSON.stringify([
        ["channel", "general"],
        ["topic", huge.slice(0, 2000)],
      ]),
    });
    expect(narrowed.status).toBe(200);
    expect(narrowed.body["messages"]).toEqual([]);
  });
});

describe("authentication", () => {
  it("refuses missing, malformed and wrong credentials with 401 and WWW-Authenticate", async () => {
    const none = await s.call(null, "GET", "/messages", { anchor: "newest", num_before: 1, num_after: 0 });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe('Basic realm="zulip"');
    expect(none.body).toEqual({
      result: "error",
      msg: "Not logged in: API authentication or user session required",
      code: "UNAUTHORIZED",
    });
    const bearer = await s.call(null, "GET", "/messages", {}, { headers: { Authorization: "Bearer abc" } });
    expect(bearer.status).toBe(400);
    expect(bearer.body["msg"]).toBe("This endpoint requires HTTP basic authentication.");
    const bad = await s.call(
      null,
      "GET",
      "/messages",
      {},
      { headers: { Authorization: `Basic ${Buffer.from("alice@test.dev:" + "x".repeat(32)).toString("base64")}` } },
    );
    expect(bad.status).toBe(401);
    expect(bad.body["msg"]).toBe("Invalid API key");
    const malformed = await s.call(null, "GET", "/messages", {}, { headers: { Authorization: "Basic !!!" } });
    expect(malformed.body["msg"]).toBe("Invalid authorization header for basic auth");
    s.t.store.setUserActive(s.seed.guest.id, false);
    const deactivated = await s.call(s.seed.guest, "GET", "/messages", {
      anchor: "newest",
      num_before: 1,
      num_after: 0,
    });
    expect(deactivated.status).toBe(401);
    expect(deactivated.body).toMatchObject({ code: "UNAUTHORIZED", msg: "Account is deactivated" });
    s.t.store.setUserActive(s.seed.guest.id, true);
  });
});

describe("reactions", () => {
  it("adds and removes reactions, keeping has:reaction in step", async () => {
    const { owner, bob } = s.seed;
    const id = (
      await s.call(owner, "POST", "/messages", {
        type: "stream",
        to: "general",
        topic: "react",
        content: "react to me",
      })
    ).body["id"] as number;
    const add = await s.call(bob, "POST", `/messages/${id}/reactions`, { emoji_name: "octopus" });
    expect(add.body).toEqual({ result: "success", msg: "" });
    const got = await s.call(bob, "GET", `/messages/${id}`);
    expect((got.body["message"] as Record<string, unknown>)["reactions"]).toEqual([
      { emoji_name: "octopus", emoji_code: "1f419", reaction_type: "unicode_emoji", user_id: bob.id },
    ]);
    const withReaction = await s.call(bob, "GET", "/messages", {
      anchor: "newest",
      num_before: 5,
      num_after: 0,
      narrow: JSON.stringify([["has", "reaction"]]),
    });
    expect((withReaction.body["messages"] as { id: number }[]).map((m) => m.id)).toEqual([id]);
    await rejects(
      () => s.call(bob, "POST", `/messages/${id}/reactions`, { emoji_name: "octopus" }),
      400,
      "REACTION_ALREADY_EXISTS",
      "Reaction already exists.",
    );
    await rejects(
      () => s.call(bob, "POST", `/messages/${id}/reactions`, { emoji_name: "no_such_emoji_name" }),
      400,
      "BAD_REQUEST",
      "Emoji 'no_such_emoji_name' does not exist",
    );
    await rejects(
      () => s.call(bob, "POST", "/messages/999999/reactions", { emoji_name: "octopus" }),
      400,
      "BAD_REQUEST",
      "Invalid message(s)",
    );
    const remove = await s.call(bob, "DELETE", `/messages/${id}/reactions`, { emoji_name: "octopus" });
    expect(remove.body["result"]).toBe("success");
    await rejects(
      () => s.call(bob, "DELETE", `/messages/${id}/reactions`, { emoji_name: "octopus" }),
      400,
      "REACTION_DOES_NOT_EXIST",
      "Reaction doesn't exist.",
    );
    const none = await s.call(bob, "GET", "/messages", {
      anchor: "newest",
      num_before: 5,
      num_after: 0,
      narrow: JSON.stringify([["has", "reaction"]]),
    });
    expect(none.body["messages"]).toEqual([]);
    expect(s.t.store.verify().differences).toEqual([]);
  });
});

describe("ready-to-send message JSON", () => {
  it("checks that emoji name and code agree, and removes by emoji_code alone", async () => {
    const { alice, bob } = s.seed;
    const id = (
      await s.call(alice, "POST", "/messages", { type: "stream", to: "general", topic: "emoji", content: "x" })
    ).body["id"] as number;
    await rejects(
      () => s.call(bob, "POST", `/messages/${id}/reactions`, { emoji_name: "octopus", emoji_code: "1f600" }),
      400,
      "BAD_REQUEST",
      "Invalid emoji name.",
    );
    await rejects(
      () => s.call(bob, "POST", `/messages/${id}/reactions`, { emoji_name: "octopus", emoji_code: "nope" }),
      400,
      "BAD_REQUEST",
      "Invalid emoji code.",
    );
    await rejects(
      () =>
        s.call(bob, "POST", `/messages/${id}/reactions`, {
          emoji_name: "x",
          emoji_code: "7",
          reaction_type: "realm_emoji",
        }),
      400,
      "BAD_REQUEST",
      "Invalid custom emoji.",
    );
    expect((await s.call(bob, "POST", `/messages/${id}/reactions`, { emoji_name: "zulip" })).status).toBe(200);
    expect(
      (
        await s.call(bob, "POST", `/messages/${id}/reactions`, {
          emoji_name: "octopus",
          emoji_code: "1f419",
          reaction_type: "unicode_emoji",
        })
      ).status,
    ).toBe(200);
    expect((await s.call(bob, "DELETE", `/messages/${id}/reactions`, { emoji_code: "1f419" })).status).toBe(200);
    expect(
      (
        await s.call(bob, "DELETE", `/messages/${id}/reactions`, {
          emoji_code: "zulip",
          reaction_type: "zulip_extra_emoji",
        })
      ).status,
    ).toBe(200);
    await rejects(
      () => s.call(bob, "DELETE", `/messages/${id}/reactions`, {}),
      400,
      "BAD_REQUEST",
      "At least one of the following arguments must be present: emoji_name, emoji_code",
    );
  });

  it("reflects reactions and sender renames after they happen", async () => {
    const { owner, alice, bob } = s.seed;
    const id = (
      await s.call(alice, "POST", "/messages", { type: "stream", to: "general", topic: "cache", content: "cache me" })
    ).body["id"] as number;
    const fetch = async () => {
      const r = await s.call(bob, "GET", "/messages", { anchor: String(id), num_before: 0, num_after: 0 });
      return (r.body["messages"] as Record<string, unknown>[])[0]!;
    };
    expect((await fetch())["reactions"]).toEqual([]);
    await s.call(bob, "POST", `/messages/${id}/reactions`, { emoji_name: "tada" });
    expect(((await fetch())["reactions"] as unknown[]).length).toBe(1);
    s.t.store.updateUser(owner.id, alice.id, { fullName: "Alice Renamed" });
    const after = await fetch();
    expect(after["sender_full_name"]).toBe("Alice Renamed");
    expect(after["flags"]).toEqual([]);
  });
});

describe("large windows share the event loop", () => {
  it("rendering a window yields to other work every slice, and gives the same JSON", async () => {
    const s = await startServer();
    try {
      const { owner, alice } = s.seed;
      s.t.store.batch(() => {
        for (let i = 0; i < 640; i++)
          s.t.store.sendMessage({
            senderId: owner.id,
            to: { type: "channel", channel: "general", topic: `t${i % 50}` },
            content: `message **${i}** and @**Alice**`,
          });
      });
      const window = s.t.store.getMessageWindow(alice.id, {
        narrow: [],
        anchor: "newest",
        numBefore: 640,
        numAfter: 0,
      });
      const options = { applyMarkdown: true, clientGravatar: true, allowEmptyTopicName: false };
      const realm = s.seed.realm;
      const cache = new MessageJsonCache(s.t.store);
      let turns = 0;
      let ticking = true;
      const tick = (): void => {
        turns++;
        if (ticking) setImmediate(tick);
      };
      setImmediate(tick);
      // A zero budget: a turn for other work after every 32 messages.
      const parts = await cache.windowJsonYielding(realm, window, options, 0);
      ticking = false;
      expect(turns).toBeGreaterThanOrEqual(640 / 32 - 1);
      expect(Buffer.concat(parts).toString()).toBe(
        Buffer.concat(new MessageJsonCache(s.t.store).windowJson(realm, window, options)).toString(),
      );
    } finally {
      s.close();
    }
  });
});
