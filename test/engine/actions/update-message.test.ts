/**
 * PATCH /messages/{id} in the engine (actions/update-message): Zulip's permission and
 * payload checks in order, each refusal changing nothing; a content edit re-rendered
 * and stored with its history entry, its search terms, has: and mention bits (flags,
 * unread mentions) following, uploads claimed and detached, newly mentioned users
 * notified; the update_message event to exactly Zulip's recipients with each one's
 * flags; and verify clean and a reopen agreeing after it all. Moves themselves are
 * the move module's (move-messages*.test.ts); here only their meeting with an edit.
 */
import { createHash, randomBytes } from "node:crypto";
import { stat } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { EngineEvent, Store, UpdateMessageInput, User } from "../../../src/engine/index.js";
import { internals } from "../../../src/engine/internal.js";
import { editEmailsWritten } from "../../../src/engine/actions/missed-message-emails.js";
import { getMessageRecord } from "../../../src/engine/storage/message-records.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";
import { fingerprint } from "../../support/snapshot.js";

let t: TempStore;
afterEach(() => t?.cleanup());

/** A store on a clock the test moves (UNIX seconds). */
function setup() {
  const clock = { now: 1_700_000_000 };
  t = tempStore({ now: () => clock.now });
  const seed = seedRealm(t.store);
  const send = (sender: User, content: string, topic = "lunch", channel = "general") =>
    t.store.sendMessage({ senderId: sender.id, to: { type: "channel", channel, topic }, content }).id;
  const dm = (sender: User, to: User, content: string) =>
    t.store.sendMessage({ senderId: sender.id, to: { type: "direct", users: [to.id] }, content }).id;
  return { clock, ...seed, send, dm };
}

function ids(store: Store, userId: number, narrow: unknown): number[] {
  return store
    .getMessages(userId, { narrow, anchor: "newest", numBefore: 100, numAfter: 0 })
    .messages.map((v) => v.message.id);
}

const record = (id: number) => getMessageRecord(internals(t.store).tables, id)!;
const flagsOf = (userId: number, id: number) => t.store.getMessage(userId, id).flags;
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** Runs `fn`, expecting Zulip's refusal, and checks that nothing changed. */
function refused(fn: () => unknown, msg: string, code = "BAD_REQUEST"): void {
  const before = fingerprint(t.store);
  let error: unknown;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  expect(error, `expected "${msg}"`).toMatchObject({ code, message: msg });
  expect(fingerprint(t.store)).toBe(before);
}

function events(store: Store): EngineEvent[][] {
  const seen: EngineEvent[][] = [];
  store.onEvents((batch) => seen.push(batch.deliveries.map((d) => d.event)));
  return seen;
}

describe("content edits", () => {
  it("store the new version: content, rendering, search, history entry, last_edit_timestamp; verify and reopen agree", () => {
    const { clock, alice, bob, send } = setup();
    const id = send(alice, "pizza **today**");
    clock.now += 30;
    const result = t.store.updateMessage(alice.id, id, { content: "salad *tomorrow*" });
    expect(result).toEqual({ messageIds: [id], detachedUploads: [] });
    const m = record(id);
    expect([m.content, m.renderedContent]).toEqual(["salad *tomorrow*", "<p>salad <em>tomorrow</em></p>"]);
    expect(m.lastEditTimestamp).toBe(clock.now);
    expect(m.lastMovedTimestamp).toBeNull();
    expect(m.editHistory).toEqual([
      {
        userId: alice.id,
        timestamp: clock.now,
        prevContent: "pizza **today**",
        prevRenderedContent: "<p>pizza <strong>today</strong></p>",
      },
    ]);
    expect(ids(t.store, bob.id, [{ operator: "search", operand: "pizza" }])).toEqual([]);
    expect(ids(t.store, bob.id, [{ operator: "search", operand: "salad" }])).toEqual([id]);

    clock.now += 5;
    t.store.updateMessage(alice.id, id, { content: "soup" });
    expect(record(id).editHistory?.map((e) => e.prevContent)).toEqual(["salad *tomorrow*", "pizza **today**"]);
    expect(t.store.verify().differences).toEqual([]);
    const store = t.reopen();
    expect(ids(store, bob.id, [{ operator: "search", operand: "soup" }])).toEqual([id]);
    expect(store.verify().differences).toEqual([]);
    expect(store.verify().problems).toEqual([]);
  });

  it("turn content of only whitespace into (deleted), as Zulip does, and keep has: operators exact", () => {
    const { alice, bob, send } = setup();
    const id = send(alice, "see https://example.com");
    expect(ids(t.store, bob.id, [{ operator: "has", operand: "link" }])).toEqual([id]);
    t.store.updateMessage(alice.id, id, { content: "  \n " });
    expect(record(id).content).toBe("(deleted)");
    expect(ids(t.store, bob.id, [{ operator: "has", operand: "link" }])).toEqual([]);
    expect(t.store.verify().differences).toEqual([]);
  });

  it("edit direct messages too (their participants hear of it)", () => {
    const { alice, bob, owner, dm } = setup();
    const id = dm(alice, bob, "hi");
    const audiences: number[][] = [];
    t.store.onEvents((batch) => {
      for (const d of batch.deliveries) if (d.event.type === "update_message") audiences.push([...d.audience].sort());
    });
    const seen = events(t.store);
    t.store.updateMessage(alice.id, id, { content: "hello" });
    const edit = seen.flat().find((e) => e.type === "update_message");
    expect(edit).toMatchObject({ messageId: id, channelId: null, move: null });
    expect(audiences).toEqual([[alice.id, bob.id].sort()]);
    expect(t.store.getMessage(bob.id, id).message.content).toBe("hello");
    refused(() => t.store.getMessage(owner.id, id), "Invalid message(s)");
  });
});

describe("who may edit, and when", () => {
  it("only the sender (no administrator or bot-owner exemption)", () => {
    const { alice, owner, send } = setup();
    const id = send(alice, "mine");
    refused(
      () => t.store.updateMessage(owner.id, id, { content: "x" }),
      "You don't have permission to edit this message",
    );
  });

  it("only while the realm allows editing", () => {
    const { alice, owner, send } = setup();
    const id = send(alice, "mine");
    t.store.setRealmMessagePolicy(owner.id, { allowMessageEditing: false });
    refused(
      () => t.store.updateMessage(alice.id, id, { content: "x" }),
      "Your organization has turned off message editing",
    );
  });

  it("within message_content_edit_limit_seconds plus Zulip's 20 s grace; null is no limit", () => {
    const { clock, alice, owner, send } = setup();
    const id = send(alice, "mine");
    clock.now += 600 + 20;
    t.store.updateMessage(alice.id, id, { content: "still in time" });
    clock.now += 1;
    refused(
      () => t.store.updateMessage(alice.id, id, { content: "late" }),
      "The time limit for editing this message has passed",
    );
    t.store.setRealmMessagePolicy(owner.id, { messageContentEditLimitSeconds: null });
    t.store.updateMessage(alice.id, id, { content: "no limit" });
    expect(record(id).content).toBe("no limit");
  });

  it("messages the editor cannot reach answer like messages that do not exist", () => {
    const { alice, bob, guest, owner, send } = setup();
    const secret = send(alice, "hidden", "t", "secret");
    refused(() => t.store.updateMessage(bob.id, secret, { content: "x" }), "Invalid message(s)");
    refused(() => t.store.updateMessage(bob.id, 999_999, { content: "x" }), "Invalid message(s)");
    // A guest who left a public channel cannot change even their own message there (Zulip's has_message_access).
    t.store.subscribe(owner.id, { channels: [{ name: "general" }], principals: [guest.id] });
    const own = send(guest, "guest's");
    t.store.updateMessage(guest.id, own, { content: "edited while subscribed" });
    t.store.unsubscribe(guest.id, ["general"]);
    refused(() => t.store.updateMessage(guest.id, own, { content: "after leaving" }), "Invalid message(s)");
    // The same member who left a private channel with protected history.
    const mine = send(alice, "in secret", "t", "secret");
    t.store.unsubscribe(alice.id, ["secret"]);
    refused(() => t.store.updateMessage(alice.id, mine, { content: "x" }), "Invalid message(s)");
  });

  it("not by deactivated users", () => {
    const { alice, send } = setup();
    const id = send(alice, "mine");
    t.store.setUserActive(alice.id, false);
    refused(() => t.store.updateMessage(alice.id, id, { content: "x" }), "Account is deactivated");
  });
});

describe("payload checks, in Zulip's order", () => {
  const cases: [string, UpdateMessageInput, string][] = [
    ["nothing", {}, "Nothing to change"],
    ["the current topic only", { topic: " lunch " }, "Nothing to change"],
    [
      "propagate_mode alone",
      { content: "x", propagateMode: "change_all" },
      "Invalid propagate_mode without topic edit",
    ],
    ["a resolved general chat", { topic: "✔ " }, "General chat cannot be marked as resolved"],
    ["content and channel", { content: "x", channelId: 1 }, "Cannot change message content while changing channel"],
    ["content with a NUL", { content: "a\0b" }, "Message must not contain null bytes"],
  ];
  for (const [what, input, msg] of cases) {
    it(`refuses ${what}`, () => {
      const { alice, send } = setup();
      const id = send(alice, "mine");
      refused(() => t.store.updateMessage(alice.id, id, input), msg);
    });
  }

  it("refuses topics and channels for direct messages", () => {
    const { alice, bob, secret, dm } = setup();
    const id = dm(alice, bob, "hi");
    refused(() => t.store.updateMessage(alice.id, id, { topic: "x" }), "Direct messages cannot have topics.");
    refused(
      () => t.store.updateMessage(alice.id, id, { channelId: secret.id }),
      "Direct messages cannot be moved to channels.",
    );
    // The empty topic is a direct message's own: not a change.
    refused(() => t.store.updateMessage(alice.id, id, { topic: "" }), "Nothing to change");
  });

  it("refuses an edit made against stale content (prev_content_sha256), and accepts a current one", () => {
    const { alice, send } = setup();
    const id = send(alice, "v1");
    const stale = sha256("v1");
    t.store.updateMessage(alice.id, id, { content: "v2", prevContentSha256: stale });
    refused(
      () => t.store.updateMessage(alice.id, id, { content: "v3", prevContentSha256: stale }),
      "'prev_content_sha256' value does not match the expected value.",
      "EXPECTATION_MISMATCH",
    );
    let error: unknown;
    try {
      t.store.updateMessage(alice.id, id, { content: "v3", prevContentSha256: stale });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ data: { field_name: "prev_content_sha256" } });
    t.store.updateMessage(alice.id, id, { content: "v3", prevContentSha256: sha256("v2") });
    expect(record(id).content).toBe("v3");
  });

  it("stores a content edit and a move together: one write, one history entry naming both", () => {
    const { clock, alice, secret, send } = setup();
    const id = send(alice, "mine");
    clock.now += 5;
    t.store.updateMessage(alice.id, id, { content: "and this", topic: "dinner" });
    expect(record(id)).toMatchObject({ content: "and this", topic: "dinner", lastEditTimestamp: clock.now });
    expect(record(id).editHistory).toEqual([
      {
        userId: alice.id,
        timestamp: clock.now,
        prevContent: "mine",
        prevRenderedContent: "<p>mine</p>",
        prevTopic: "lunch",
        topic: "dinner",
      },
    ]);
    // The message's own channel and topic move nothing.
    refused(
      () =>
        t.store.updateMessage(alice.id, id, {
          channelId:
            record(id).recipient.type === "channel" ? (record(id).recipient as { channelId: number }).channelId : 0,
        }),
      "Nothing to change",
    );
    refused(
      () => t.store.updateMessage(alice.id, id, { content: "x", channelId: secret.id }),
      "Cannot change message content while changing channel",
    );
  });
});

describe("mentions follow the content", () => {
  it("personal mentions: flags, unread mentions and the mentioned narrow gain and lose the message", () => {
    const { alice, bob, owner, send } = setup();
    const id = send(alice, "no one yet");
    const mentions = (userId: number) => t.store.unreadSummary(userId).mentions;
    expect(flagsOf(bob.id, id)).toEqual([]);
    t.store.updateMessage(alice.id, id, { content: "@**Bob** look" });
    expect(flagsOf(bob.id, id)).toEqual(["mentioned"]);
    expect(mentions(bob.id)).toEqual([id]);
    expect(ids(t.store, bob.id, [{ operator: "is", operand: "mentioned" }])).toEqual([id]);
    expect(mentions(owner.id)).toEqual([]);
    t.store.updateMessage(alice.id, id, { content: "never mind" });
    expect(flagsOf(bob.id, id)).toEqual([]);
    expect(mentions(bob.id)).toEqual([]);
    expect(ids(t.store, bob.id, [{ operator: "is", operand: "mentioned" }])).toEqual([]);
    expect(t.store.verify().differences).toEqual([]);
  });

  it("group, channel-wide and topic wildcard mentions", () => {
    const { alice, bob, owner, send } = setup();
    const group = t.store.createGroup(owner.id, { name: "cooks", members: [bob.id] });
    const earlier = send(bob, "I was here first");
    const id = send(alice, "plain");
    t.store.updateMessage(alice.id, id, { content: "@*cooks* dinner?" });
    expect(flagsOf(bob.id, id)).toEqual(["group_mentioned"]);
    t.store.updateMessage(alice.id, id, { content: "@**all** dinner?" });
    expect(flagsOf(bob.id, id)).toEqual(["stream_wildcard_mentioned", "wildcard_mentioned"]);
    expect(flagsOf(owner.id, id)).toEqual(["stream_wildcard_mentioned", "wildcard_mentioned"]);
    t.store.updateMessage(alice.id, id, { content: "@**topic** dinner?" });
    // Topic participants: bob had written in the topic, the owner had not.
    expect(flagsOf(bob.id, id)).toEqual(["topic_wildcard_mentioned", "wildcard_mentioned"]);
    expect(flagsOf(owner.id, id)).toEqual([]);
    expect(group.id).toBeGreaterThan(0);
    expect(earlier).toBeLessThan(id);
    expect(t.store.verify().differences).toEqual([]);
    const store = t.reopen();
    expect(store.getMessage(bob.id, id).flags).toEqual(["topic_wildcard_mentioned", "wildcard_mentioned"]);
  });

  it("set and clear the flags of historical rows too (Zulip's update_user_message_flags takes every row)", () => {
    const { alice, bob, owner, send } = setup();
    t.store.subscribe(owner.id, {
      channels: [{ name: "shared" }],
      principals: [owner.id, alice.id],
      newChannel: { inviteOnly: true, historyPublicToSubscribers: true },
    });
    const plain = send(alice, "before Bob came", "t", "shared");
    const mentioning = send(alice, "@**Bob** before Bob came", "t", "shared");
    t.store.subscribe(owner.id, { channels: [{ name: "shared" }], principals: [bob.id] });
    // Starring a message Bob did not receive gives him a historical row.
    t.store.updateFlags(bob.id, [plain, mentioning], "starred", "add");
    const mentionedIds = () => ids(t.store, bob.id, [{ operator: "is", operand: "mentioned" }]);
    // A row created after the mention carries no mention flag, as Zulip creates it.
    expect(flagsOf(bob.id, mentioning)).not.toContain("mentioned");
    expect(t.store.verify().differences).toEqual([]);
    t.store.updateMessage(alice.id, plain, { content: "@**Bob** look" });
    expect(flagsOf(bob.id, plain)).toContain("mentioned");
    expect(mentionedIds()).toEqual([plain]);
    t.store.updateMessage(alice.id, mentioning, { content: "@**Bob** still you" });
    expect(flagsOf(bob.id, mentioning)).toContain("mentioned");
    expect(mentionedIds()).toEqual([plain, mentioning]);
    expect(t.store.verify().differences).toEqual([]);
    t.store.updateMessage(alice.id, plain, { content: "never mind" });
    expect(flagsOf(bob.id, plain)).not.toContain("mentioned");
    expect(mentionedIds()).toEqual([mentioning]);
    expect(t.store.verify().differences).toEqual([]);
    expect(t.reopen().getMessage(bob.id, mentioning).flags).toContain("mentioned");
  });

  it("notifies users the edit newly mentions, not those mentioned before, and withdraws a dropped mention's notification", () => {
    const { alice, bob, owner, send } = setup();
    const pushDevice = (user: User) => {
      const deviceId = t.store.registerClientDevice(user.id);
      t.store.registerPushDevice(
        user.id,
        {
          deviceId,
          pushKey: Buffer.concat([Buffer.from([0x31]), randomBytes(32)]).toString("base64"),
          pushKeyId: randomBytes(4).readUInt32BE(),
          tokenKind: "fcm",
          tokenId: randomBytes(8).toString("base64"),
          bouncerPublicKey: "cHVibGljLWtleQ==",
          encryptedPushRegistration: "c2VhbGVkLXJlZ2lzdHJhdGlvbg==",
        },
        true,
      );
    };
    pushDevice(bob);
    pushDevice(owner);
    const items = () => t.store.pushOutboxItems(0, 1000).filter((i) => i.kind !== "register");
    const id = send(alice, "@**Olive Owner** first");
    expect(items().map((i) => [i.kind, i.userId])).toEqual([["message", owner.id]]);
    t.store.updateMessage(alice.id, id, { content: "@**Olive Owner** @**Bob** both" });
    expect(items().map((i) => [i.kind, i.userId, i.kind === "message" ? i.trigger : null])).toEqual([
      ["message", owner.id, "mentioned"],
      ["message", bob.id, "mentioned"],
    ]);
    // The owner follows the topic since the mention (Zulip's automatic follow), so the
    // topic's pushes would reach them anyway: only bob's notification is withdrawn.
    t.store.updateMessage(alice.id, id, { content: "@**Olive Owner** only" });
    expect(items().at(-1)).toMatchObject({ kind: "remove", userId: bob.id, messageIds: [id] });
    expect(items()).toHaveLength(3);
    // Still mentioned: nothing more.
    t.store.updateMessage(alice.id, id, { content: "@**Olive Owner** again" });
    expect(items()).toHaveLength(3);
  });
});

describe("uploads", () => {
  it("links added claim uploads, links dropped detach them (answered as detached_uploads), files are kept", () => {
    const { alice, bob, send } = setup();
    const upload = (name: string, ownerId = alice.id) =>
      t.store.createAttachment(
        {
          ownerId,
          pathId: `${alice.realmId}/ab/${randomBytes(18).toString("base64url")}/${name}`,
          name,
          size: 10,
          contentType: "text/plain",
          image: null,
        },
        null,
      );
    const a = upload("a.txt");
    const b = upload("b.txt");
    const bobs = upload("bob.txt", bob.id);
    const link = (x: { pathId: string }) => `[f](/user_uploads/${x.pathId})`;
    const id = send(alice, `${link(a)} ${link(bobs)}`);
    // bob's upload is not alice's to claim (she cannot reach it): only a is claimed.
    expect(t.store.attachments(alice.id).map((x) => [x.name, x.messageIds])).toEqual([
      ["a.txt", [id]],
      ["b.txt", []],
    ]);
    const result = t.store.updateMessage(alice.id, id, { content: `now ${link(b)}` });
    expect(result.detachedUploads.map((x) => [x.name, x.messageIds])).toEqual([["a.txt", []]]);
    expect(t.store.attachments(alice.id).map((x) => [x.name, x.messageIds])).toEqual([
      ["a.txt", []],
      ["b.txt", [id]],
    ]);
    expect(ids(t.store, alice.id, [{ operator: "has", operand: "attachment" }])).toEqual([id]);
    const gone = t.store.updateMessage(alice.id, id, { content: "no files" });
    expect(gone.detachedUploads.map((x) => x.name)).toEqual(["b.txt"]);
    expect(ids(t.store, alice.id, [{ operator: "has", operand: "attachment" }])).toEqual([]);
    expect(t.store.verify().differences).toEqual([]);
  });

  it("an upload another message still claims is detached but not reported", () => {
    const { alice, send } = setup();
    const a = t.store.createAttachment(
      {
        ownerId: alice.id,
        pathId: `${alice.realmId}/cd/${randomBytes(18).toString("base64url")}/a.txt`,
        name: "a.txt",
        size: 1,
        contentType: "text/plain",
        image: null,
      },
      null,
    );
    const first = send(alice, `[f](/user_uploads/${a.pathId})`);
    const second = send(alice, `again [f](/user_uploads/${a.pathId})`);
    expect(t.store.updateMessage(alice.id, first, { content: "gone" }).detachedUploads).toEqual([]);
    expect(t.store.attachments(alice.id)[0]!.messageIds).toEqual([second]);
  });
});

describe("the update_message event", () => {
  function editEvent(seen: EngineEvent[][]) {
    const e = seen.flat().find((x) => x.type === "update_message");
    if (e?.type !== "update_message") throw new Error("no update_message event");
    return e;
  }

  it("carries the old and new content to every user with a row, each with their flags", () => {
    const { clock, alice, bob, owner, guest, send } = setup();
    const id = send(alice, "hi **all**");
    const deliveries: { audience: number[]; event: EngineEvent }[] = [];
    t.store.onEvents((batch) => {
      for (const d of batch.deliveries)
        if (d.event.type === "update_message") deliveries.push({ audience: [...d.audience].sort(), event: d.event });
    });
    clock.now += 7;
    t.store.updateMessage(alice.id, id, { content: "hi @**Bob**" });
    expect(deliveries).toHaveLength(1);
    const { audience, event } = deliveries[0]!;
    expect(audience).toEqual([owner.id, alice.id, bob.id].sort());
    expect(audience).not.toContain(guest.id);
    if (event.type !== "update_message") throw new Error("type");
    expect(event).toMatchObject({
      userId: alice.id,
      editTimestamp: clock.now,
      messageId: id,
      messageIds: [id],
      channelId:
        record(id).recipient.type === "channel" ? (record(id).recipient as { channelId: number }).channelId : -1,
      move: null,
      content: {
        origContent: "hi **all**",
        origRenderedContent: "<p>hi <strong>all</strong></p>",
        content: "hi @**Bob**",
        isMeMessage: false,
      },
    });
    expect(event.content?.renderedContent).toContain('data-user-id="' + bob.id + '"');
    expect(event.flagsFor(bob.id)).toEqual(["mentioned"]);
    // Sent through the API client: unread for its sender too (Zulip's read_by_sender default).
    expect(event.flagsFor(alice.id)).toEqual([]);
  });

  it("gives each recipient the flags a fetch of the message gives them (read, starred, wildcards)", () => {
    const { alice, bob, owner, send } = setup();
    const id = send(alice, "plain");
    t.store.updateFlags(bob.id, [id], "starred", "add");
    t.store.updateFlags(owner.id, [id], "read", "add");
    for (const content of ["@**all** now", "@**topic** and @**Bob**", "@**Olive Owner** only"]) {
      const seen = events(t.store);
      t.store.updateMessage(alice.id, id, { content });
      const e = seen.flat().find((x) => x.type === "update_message");
      if (e?.type !== "update_message") throw new Error("no update_message event");
      for (const user of [alice, bob, owner]) expect(e.flagsFor(user.id), content).toEqual(flagsOf(user.id, id));
    }
  });

  it("in a channel with shared history, reaches later subscribers (flags read); with protected history, only rows", () => {
    const { alice, bob, owner, send } = setup();
    const audienceOf = (fn: () => void): number[] => {
      const out: number[] = [];
      const stop = t.store.onEvents((batch) => {
        for (const d of batch.deliveries) if (d.event.type === "update_message") out.push(...d.audience);
      });
      fn();
      stop();
      return out.sort();
    };
    t.store.subscribe(owner.id, {
      channels: [{ name: "shared" }],
      principals: [owner.id, alice.id],
      newChannel: { inviteOnly: true, historyPublicToSubscribers: true },
    });
    const inShared = send(alice, "old news", "t", "shared");
    const inSecret = send(alice, "old secret", "t", "secret");
    t.store.subscribe(owner.id, { channels: [{ name: "shared" }, { name: "secret" }], principals: [bob.id] });
    const seen = events(t.store);
    expect(audienceOf(() => t.store.updateMessage(alice.id, inShared, { content: "edited" }))).toEqual(
      [owner.id, alice.id, bob.id].sort(),
    );
    expect(editEvent(seen).flagsFor(bob.id)).toEqual(["read"]);
    expect(audienceOf(() => t.store.updateMessage(alice.id, inSecret, { content: "edited" }))).toEqual(
      [owner.id, alice.id].sort(),
    );
  });

  it("names the fields the change set and the change log carry", () => {
    const { alice, send } = setup();
    const id = send(alice, "x");
    const changes: { fields: string[]; flags: number[] }[] = [];
    t.store.onChanges((set) => {
      const m = set.message.get(id);
      if (m) changes.push({ fields: [...m.fields], flags: [...set.flags.keys()] });
    });
    t.store.updateMessage(alice.id, id, { content: "@**Bob** y" });
    expect(changes).toEqual([
      { fields: ["content", "history"], flags: [t.store.findUserByEmail(alice.realmId, "bob@test.dev")!.id] },
    ]);
  });
});

describe("edit history", () => {
  it("snapshots oldest first, under the realm's visibility policy", () => {
    const { clock, alice, bob, owner, send } = setup();
    const sent = clock.now;
    const id = send(alice, "one");
    clock.now += 10;
    t.store.updateMessage(alice.id, id, { content: "two" });
    clock.now += 10;
    t.store.updateMessage(alice.id, id, { content: "three" });
    expect(t.store.messageEditHistory(bob.id, id)).toEqual([
      { topic: "lunch", content: "one", renderedContent: "<p>one</p>", timestamp: sent, userId: alice.id },
      {
        topic: "lunch",
        content: "two",
        renderedContent: "<p>two</p>",
        timestamp: sent + 10,
        userId: alice.id,
        prevContent: "one",
        prevRenderedContent: "<p>one</p>",
      },
      {
        topic: "lunch",
        content: "three",
        renderedContent: "<p>three</p>",
        timestamp: sent + 20,
        userId: alice.id,
        prevContent: "two",
        prevRenderedContent: "<p>two</p>",
      },
    ]);
    t.store.setRealmMessagePolicy(owner.id, { messageEditHistoryVisibilityPolicy: "moves" });
    expect(t.store.messageEditHistory(bob.id, id).map((s) => s.content)).toEqual(["one"]);
    t.store.setRealmMessagePolicy(owner.id, { messageEditHistoryVisibilityPolicy: "none" });
    refused(() => t.store.messageEditHistory(bob.id, id), "Message edit history is disabled in this organization");
  });

  it("is refused for messages the viewer cannot read", () => {
    const { alice, bob, send } = setup();
    const id = send(alice, "hidden", "t", "secret");
    refused(() => t.store.messageEditHistory(bob.id, id), "Invalid message(s)");
  });
});

describe("missed-message emails of a wildcard mention an edit adds", () => {
  /** The users whose email batch holds the message, in the edit's write and once its later writes ran. */
  async function emailed(chunkUsers: number) {
    const clock = { now: 1_700_000_000 };
    const temp = tempStore({ now: () => clock.now, editEmailChunkUsers: chunkUsers });
    try {
      const { realm, owner, alice } = seedRealm(temp.store);
      const more = [1, 2, 3, 4, 5].map((i) =>
        temp.store.createUser({ realmId: realm.id, email: `away${i}@test.dev`, fullName: `Away ${i}` }),
      );
      temp.store.subscribe(owner.id, { channels: [{ name: "general" }], principals: more.map((u) => u.id) });
      const id = temp.store.sendMessage({
        senderId: alice.id,
        to: { type: "channel", channel: "general", topic: "lunch" },
        content: "look at this",
      }).id;
      const holders = () =>
        temp.store
          .missedEmailBatches()
          .filter((b) => b.items.some((item) => item.messageId === id))
          .map((b) => b.userId)
          .sort((a, b) => a - b);
      temp.store.updateMessage(alice.id, id, { content: "@**all** look at this" });
      const inEdit = holders();
      await editEmailsWritten(internals(temp.store));
      const triggers = temp.store.missedEmailBatches().flatMap((b) => b.items.map((item) => item.trigger));
      return { inEdit, after: holders(), triggers, expected: [owner.id, ...more.map((u) => u.id)] };
    } finally {
      temp.cleanup();
    }
  }

  it("reach every away subscriber, the edit's write looking at the first chunk and later writes at the rest", async () => {
    const chunked = await emailed(2);
    expect(chunked.inEdit.length).toBeLessThanOrEqual(2);
    const whole = await emailed(1000);
    // Bob is a subscriber too; the sender is not emailed.
    expect(whole.inEdit).toEqual(whole.after);
    expect(chunked.after).toEqual(whole.after);
    expect(whole.after).toEqual(expect.arrayContaining(whole.expected));
    expect(whole.after).toHaveLength(whole.expected.length + 1);
    expect(new Set(chunked.triggers)).toEqual(new Set(["stream_wildcard_mentioned"]));
  });

  /**
   * Five away subscribers beside the seed's: an edit of Alice's message to `content`, the
   * emails' items for it (user and trigger) right after the edit's write, then `between` (before
   * any later write may run), then once every stored chunk is written.
   */
  async function edited(
    chunkUsers: number,
    content: string,
    between: (temp: TempStore, messageId: number, alice: User) => void | Promise<void> = () => undefined,
  ) {
    const temp = tempStore({ now: () => 1_700_000_000, editEmailChunkUsers: chunkUsers });
    try {
      const { realm, owner, alice } = seedRealm(temp.store);
      const more = [1, 2, 3, 4, 5].map((i) =>
        temp.store.createUser({ realmId: realm.id, email: `away${i}@test.dev`, fullName: `Away ${i}` }),
      );
      temp.store.subscribe(owner.id, { channels: [{ name: "general" }], principals: more.map((u) => u.id) });
      const id = temp.store.sendMessage({
        senderId: alice.id,
        to: { type: "channel", channel: "general", topic: "lunch" },
        content: "look at this",
      }).id;
      const items = () =>
        temp.store
          .missedEmailBatches()
          .flatMap((b) => b.items.filter((item) => item.messageId === id).map((item) => `${b.userId}:${item.trigger}`))
          .sort();
      const pending = () => [...internals(temp.store).tables.editEmailChunks.getKeys()].length;
      temp.store.updateMessage(alice.id, id, { content });
      const inEdit = items();
      const stored = pending();
      await between(temp, id, alice);
      const verified = temp.store.verify();
      await editEmailsWritten(internals(temp.store));
      return { inEdit, stored, verified, after: items(), left: pending() };
    } finally {
      temp.cleanup();
    }
  }

  it("a close between the edit's commit and its last chunk loses none: the reopened store writes the stored rest", async () => {
    const content = "@**all** look at this, @**Away 5**";
    const whole = await edited(1000, content);
    expect(whole.stored).toBe(0);
    // Bob, the owner and the five away users; Away 5 for the personal mention.
    expect(whole.after).toHaveLength(7);
    expect(whole.after.filter((item) => item.endsWith(":mentioned"))).toHaveLength(1);
    const reopened = await edited(2, content, (temp) => void temp.reopen());
    expect(reopened.inEdit).toHaveLength(2);
    expect(reopened.stored).toBe(3);
    // The stored chunks verify clean before they run.
    expect(reopened.verified.problems).toEqual([]);
    expect(reopened.after).toEqual(whole.after);
    expect(reopened.left).toBe(0);
  });

  it("personal mentions past a chunk keep their trigger in the stored chunks", async () => {
    const content = ["Bob", "Away 1", "Away 2", "Away 3", "Away 4", "Away 5"].map((n) => `@**${n}**`).join(" ");
    const whole = await edited(1000, content);
    const chunked = await edited(2, content, (temp) => void temp.reopen());
    expect(chunked.stored).toBe(2);
    expect(chunked.after).toEqual(whole.after);
    expect(new Set(whole.after.map((item) => item.split(":")[1]))).toEqual(new Set(["mentioned"]));
    expect(whole.after).toHaveLength(6);
  });

  it("a message deleted or moved to another channel before its chunks run takes them with it, unwritten", async () => {
    const content = "@**all** look at this";
    const deleted = await edited(2, content, (temp, id, alice) => temp.store.deleteMessage(alice.id, id));
    // To a channel where the same users would be emailed: its chunks would have emailed them.
    const moved = await edited(2, content, (temp, id, alice) => {
      const everyone = [...internals(temp.store).users.keys()];
      temp.store.subscribe(alice.id, { channels: [{ name: "other" }], principals: everyone });
      const otherId = internals(temp.store).channelByName.get(`${alice.realmId}:OTHER`)!;
      temp.store.updateMessage(alice.id, id, { channelId: otherId });
    });
    for (const run of [deleted, moved]) {
      expect(run.stored).toBe(3);
      expect(run.after).toEqual(run.inEdit);
      expect(run.left).toBe(0);
    }
  });

  it("takes turns with a topic deletion: no chunk write shares a turn of the event loop with a batch", async () => {
    const temp = tempStore({ now: () => 1_700_000_000, editEmailChunkUsers: 1 });
    try {
      const { realm, owner, alice } = seedRealm(temp.store);
      const more = [1, 2, 3, 4].map((i) =>
        temp.store.createUser({ realmId: realm.id, email: `away${i}@test.dev`, fullName: `Away ${i}` }),
      );
      temp.store.subscribe(owner.id, { channels: [{ name: "general" }], principals: more.map((u) => u.id) });
      const to = (topic: string) => ({ type: "channel" as const, channel: "general", topic });
      const id = temp.store.sendMessage({ senderId: alice.id, to: to("lunch"), content: "look at this" }).id;
      for (let n = 0; n < 4; n++) temp.store.sendMessage({ senderId: alice.id, to: to("doomed"), content: `m${n}` });
      const state = internals(temp.store);
      const channelId = state.channelByName.get(`${realm.id}:GENERAL`)!;
      let turn = 0;
      let ticking = true;
      const tick = () => {
        turn++;
        if (ticking) setImmediate(tick);
      };
      const turns: number[] = [];
      const write = state.write.bind(state);
      state.write = ((fn: Parameters<typeof write>[0]) => {
        turns.push(turn);
        return write(fn);
      }) as typeof state.write;
      // From the poll phase, as requests are: the edit stores its chunks (one user each),
      // and a topic's deletion (a message a batch) starts in the same turn.
      const deleted = await new Promise<Promise<unknown>>((resolve) =>
        stat(import.meta.filename, () => {
          temp.store.updateMessage(alice.id, id, { content: "@**all** look at this" });
          const deletion = temp.store.deleteTopic(owner.id, channelId, "doomed", { batchSize: 1, readBitsPerWrite: 0 });
          setImmediate(tick);
          resolve(deletion);
        }),
      );
      await deleted;
      await editEmailsWritten(state);
      ticking = false;
      // The edit's and the deletion's first writes share the requests' turn; every later one has a turn of its own.
      const later = turns.slice(2);
      expect(later.length).toBeGreaterThanOrEqual(3 + 3);
      for (let i = 1; i < later.length; i++) expect(later[i]).toBeGreaterThan(later[i - 1]!);
      expect([...state.tables.editEmailChunks.getKeys()]).toEqual([]);
    } finally {
      temp.cleanup();
    }
  });

  it("verify reports a stored chunk it cannot read or that names an unknown user", () => {
    const temp = tempStore();
    try {
      const { owner, general } = seedRealm(temp.store);
      const id = temp.store.sendMessage({
        senderId: owner.id,
        to: { type: "channel", channel: "general", topic: "t" },
        content: "hi",
      }).id;
      const table = internals(temp.store).tables.editEmailChunks;
      table.putSync([1, 0], { messageId: id, channelId: general.id, users: [owner.id, 100_000] });
      table.putSync([1, 1], { messageId: id, users: "nobody" });
      expect(temp.store.verify().problems).toEqual([
        `edit_email_chunks [1,0] names user ${owner.id + 100_000}, who does not exist`,
        "edit_email_chunks [1,1] is not a chunk of an edit's email candidates",
      ]);
    } finally {
      temp.cleanup();
    }
  });
});
