import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH, ROLE, type Store } from "../../../src/engine/index.js";
import { defaultReadBySender } from "../../../src/engine/actions/send-message.js";
import { expectFailsUnchanged } from "../../support/snapshot.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";
import { internals } from "../../../src/engine/internal.js";
import { getMessageRecord } from "../../../src/engine/storage/message-records.js";
import { editEmailsWritten, SEND_EMAIL_CHUNK_USERS } from "../../../src/engine/actions/missed-message-emails.js";

const NOW = 1_700_000_000;
let t: TempStore;
let s: Store;
let w: ReturnType<typeof seedRealm>;

beforeEach(() => {
  t = tempStore({ now: () => NOW });
  s = t.store;
  w = seedRealm(s);
});
afterEach(() => t.cleanup());

const failsWithoutChange = (fn: () => unknown, expected: { code: string; message: string; data?: unknown }) =>
  expectFailsUnchanged(s, fn, expected);
const stored = (id: number) => getMessageRecord(internals(s).tables, id)!;
const toGeneral = (topic: string | undefined, content = "hello", senderId = w.alice.id) =>
  s.sendMessage({ senderId, to: { type: "channel", channel: "general", topic }, content });

describe("content", () => {
  it("stores the record with its metadata", () => {
    const { id } = s.sendMessage({
      senderId: w.alice.id,
      to: { type: "channel", channel: w.general.id, topic: "lunch" },
      content: "hi",
      client: "website",
    });
    expect(stored(id)).toMatchObject({
      id,
      realmId: w.realm.id,
      senderId: w.alice.id,
      recipient: { type: "channel", channelId: w.general.id },
      topic: "lunch",
      content: "hi",
      renderedContent: "<p>hi</p>",
      dateSent: NOW,
      client: "website",
      reactions: [],
      editHistory: null,
    });
    expect(s.getChannel(w.general.id)!.firstMessageId).toBe(id);
    const second = toGeneral("lunch");
    expect(s.getChannel(w.general.id)!.firstMessageId).toBe(id);
    expect(second.id).toBe(id + 1);
    expect(
      stored(
        s.sendMessage({
          senderId: w.alice.id,
          to: { type: "channel", channel: "general", topic: "x" },
          content: "old",
          dateSent: 12345,
        }).id,
      ).dateSent,
    ).toBe(12345);
  });

  it("strips leading newlines and trailing whitespace, keeps leading spaces", () => {
    expect(stored(toGeneral("t", "\n\n  indented  \n\t ").id).content).toBe("  indented");
  });

  it("truncates at 10000 code points with the marker", () => {
    expect(MAX_MESSAGE_LENGTH).toBe(10000);
    const exact = "a".repeat(10000);
    expect(stored(toGeneral("t", exact).id).content).toBe(exact);
    const long = stored(toGeneral("t", "a".repeat(10001)).id).content;
    expect(long).toBe("a".repeat(10000 - "\n[message truncated]".length) + "\n[message truncated]");
    expect(long.length).toBe(10000);
    // Code points, not UTF-16 units.
    const emoji = "😀".repeat(10000);
    expect(stored(toGeneral("t", emoji).id).content).toBe(emoji);
    expect(stored(toGeneral("t", "😀".repeat(10001)).id).content).toBe("😀".repeat(9980) + "\n[message truncated]");
  });
});

describe("topics", () => {
  it("trims and truncates at 60 code points with '...'", () => {
    expect(MAX_TOPIC_LENGTH).toBe(60);
    expect(stored(toGeneral("  spaced  ").id).topic).toBe("spaced");
    expect(stored(toGeneral("x".repeat(60)).id).topic).toBe("x".repeat(60));
    expect(stored(toGeneral("x".repeat(61)).id).topic).toBe("x".repeat(57) + "...");
    expect(stored(toGeneral("é".repeat(70)).id).topic).toBe("é".repeat(57) + "...");
  });

  it("'(no topic)' and the realm's empty-topic display name become the empty topic", () => {
    expect(stored(toGeneral("(no topic)").id).topic).toBe("");
    expect(stored(toGeneral("general chat").id).topic).toBe("");
    expect(stored(toGeneral(" general chat ").id).topic).toBe("");
    expect(stored(toGeneral("").id).topic).toBe("");
    expect(stored(toGeneral("General Chat").id).topic).toBe("General Chat");
  });

  it("topics policies", () => {
    s.subscribe(w.owner.id, { channels: [{ name: "no-empty" }], newChannel: { topicsPolicy: "disable_empty_topic" } });
    s.subscribe(w.owner.id, { channels: [{ name: "only-empty" }], newChannel: { topicsPolicy: "empty_topic_only" } });
    s.subscribe(w.owner.id, { channels: [{ name: "allow" }], newChannel: { topicsPolicy: "allow_empty_topic" } });
    const send = (channel: string, topic: string) => () =>
      s.sendMessage({ senderId: w.owner.id, to: { type: "channel", channel, topic }, content: "x" });
    failsWithoutChange(send("no-empty", ""), {
      code: "BAD_REQUEST",
      message: "Sending messages to the general chat is not allowed in this channel.",
    });
    failsWithoutChange(send("no-empty", "general chat"), {
      code: "BAD_REQUEST",
      message: "Sending messages to the general chat is not allowed in this channel.",
    });
    expect(send("no-empty", "real")()).toHaveProperty("id");
    failsWithoutChange(send("only-empty", "real"), {
      code: "BAD_REQUEST",
      message: "Only the general chat topic is allowed in this channel.",
    });
    expect(stored(send("only-empty", "(no topic)")().id).topic).toBe("");
    // "inherit" follows the realm setting.
    internals(s).realms.get(w.realm.id)!.topicsPolicy = "disable_empty_topic";
    failsWithoutChange(send("general", ""), {
      code: "BAD_REQUEST",
      message: "Sending messages to the general chat is not allowed in this channel.",
    });
    expect(send("allow", "")()).toHaveProperty("id");
  });
});

describe("validation errors (nothing changed)", () => {
  it("empty content and null bytes", () => {
    failsWithoutChange(() => toGeneral("t", ""), { code: "BAD_REQUEST", message: "Message must not be empty" });
    failsWithoutChange(() => toGeneral("t", " \n\n \t"), { code: "BAD_REQUEST", message: "Message must not be empty" });
    failsWithoutChange(() => toGeneral("t", "a\0b"), {
      code: "BAD_REQUEST",
      message: "Message must not contain null bytes",
    });
  });
  it("missing topic and null bytes in the topic", () => {
    failsWithoutChange(() => toGeneral(undefined), { code: "BAD_REQUEST", message: "Missing topic" });
    failsWithoutChange(() => toGeneral("a\0b"), { code: "BAD_REQUEST", message: "Topic must not contain null bytes" });
  });
  it("unknown channel by ID and by name", () => {
    failsWithoutChange(
      () => s.sendMessage({ senderId: w.alice.id, to: { type: "channel", channel: 9999, topic: "t" }, content: "x" }),
      {
        code: "STREAM_DOES_NOT_EXIST",
        message: "Channel with ID '9999' does not exist",
        data: { stream_id: 9999 },
      },
    );
    failsWithoutChange(
      () => s.sendMessage({ senderId: w.alice.id, to: { type: "channel", channel: "nope", topic: "t" }, content: "x" }),
      {
        code: "STREAM_DOES_NOT_EXIST",
        message: "Channel 'nope' does not exist",
        data: { stream: "nope" },
      },
    );
    const other = s.createRealm({
      subdomain: "other",
      name: "Other",
      owner: { email: "x@other.dev", fullName: "Xavier" },
    });
    s.subscribe(other.owner.id, { channels: [{ name: "elsewhere" }] });
    const foreign = internals(s).channelByName.get(`${other.realm.id}:ELSEWHERE`)!;
    failsWithoutChange(
      () =>
        s.sendMessage({ senderId: w.alice.id, to: { type: "channel", channel: foreign, topic: "t" }, content: "x" }),
      {
        code: "STREAM_DOES_NOT_EXIST",
        message: `Channel with ID '${foreign}' does not exist`,
        data: { stream_id: foreign },
      },
    );
  });
  it("not authorized to send: named only to those who may see the channel", () => {
    // A channel the sender cannot see answers as if it did not exist (no name leaks by ID).
    failsWithoutChange(
      () => s.sendMessage({ senderId: w.bob.id, to: { type: "channel", channel: "secret", topic: "t" }, content: "x" }),
      {
        code: "STREAM_DOES_NOT_EXIST",
        message: "Channel 'secret' does not exist",
        data: { stream: "secret" },
      },
    );
    failsWithoutChange(
      () =>
        s.sendMessage({ senderId: w.bob.id, to: { type: "channel", channel: w.secret.id, topic: "t" }, content: "x" }),
      {
        code: "STREAM_DOES_NOT_EXIST",
        message: `Channel with ID '${w.secret.id}' does not exist`,
        data: { stream_id: w.secret.id },
      },
    );
    failsWithoutChange(
      () =>
        s.sendMessage({
          senderId: w.guest.id,
          to: { type: "channel", channel: w.general.id, topic: "t" },
          content: "x",
        }),
      {
        code: "STREAM_DOES_NOT_EXIST",
        message: `Channel with ID '${w.general.id}' does not exist`,
        data: { stream_id: w.general.id },
      },
    );
    // An administrator sees the private channel but is not subscribed: Zulip's message.
    const admin = s.createUser({ realmId: w.realm.id, email: "adm@test.dev", fullName: "Adm", role: 200 });
    failsWithoutChange(
      () =>
        s.sendMessage({ senderId: admin.id, to: { type: "channel", channel: w.secret.id, topic: "t" }, content: "x" }),
      {
        code: "BAD_REQUEST",
        message: "Not authorized to send to channel 'secret'",
      },
    );
  });
  it("can_send_message_group refusals use Zulip's text", () => {
    s.subscribe(w.owner.id, {
      channels: [{ name: "quiet" }],
      principals: [w.owner.id, w.alice.id],
      newChannel: { permissions: { canSendMessageGroup: s.systemGroupId(w.realm.id, "role:nobody") } },
    });
    failsWithoutChange(
      () =>
        s.sendMessage({ senderId: w.alice.id, to: { type: "channel", channel: "quiet", topic: "t" }, content: "x" }),
      {
        code: "BAD_REQUEST",
        message: "You do not have permission to post in this channel.",
      },
    );
  });
  it("direct messages to unknown, foreign or deactivated users, or to nobody", () => {
    const dm =
      (users: (number | string)[], senderId = w.alice.id) =>
      () =>
        s.sendMessage({ senderId, to: { type: "direct", users }, content: "x" });
    failsWithoutChange(dm([]), { code: "BAD_REQUEST", message: "Message must have recipients" });
    failsWithoutChange(dm([w.bob.id, 9999]), { code: "BAD_REQUEST", message: "Invalid user ID 9999" });
    failsWithoutChange(dm(["ghost@test.dev"]), { code: "BAD_REQUEST", message: "Invalid email 'ghost@test.dev'" });
    const other = s.createRealm({
      subdomain: "other",
      name: "Other",
      owner: { email: "x@other.dev", fullName: "Xavier" },
    });
    failsWithoutChange(dm([other.owner.id]), { code: "BAD_REQUEST", message: `Invalid user ID ${other.owner.id}` });
    failsWithoutChange(dm(["x@other.dev"]), { code: "BAD_REQUEST", message: "Invalid email 'x@other.dev'" });
    s.setUserActive(w.bob.id, false);
    failsWithoutChange(dm([w.bob.id]), { code: "BAD_REQUEST", message: "'bob@test.dev' is no longer using Zulip." });
    failsWithoutChange(dm(["BOB@test.dev", w.owner.id]), {
      code: "BAD_REQUEST",
      message: "'bob@test.dev' is no longer using Zulip.",
    });
  });
  it("deactivated senders and deactivated realms", () => {
    s.setUserActive(w.bob.id, false);
    failsWithoutChange(() => toGeneral("t", "x", w.bob.id), { code: "BAD_REQUEST", message: "Account is deactivated" });
    s.setRealmDeactivated(w.realm.id, true);
    failsWithoutChange(() => toGeneral("t", "x"), { code: "BAD_REQUEST", message: "Account is deactivated" });
    failsWithoutChange(
      () => s.sendMessage({ senderId: 9999, to: { type: "direct", users: [w.alice.id] }, content: "x" }),
      { code: "BAD_REQUEST", message: "Invalid user ID 9999" },
    );
  });
});

describe("direct messages", () => {
  it("resolve IDs and emails into one conversation per set of participants", () => {
    const a = s.sendMessage({ senderId: w.alice.id, to: { type: "direct", users: [w.bob.id] }, content: "1" });
    const b = s.sendMessage({
      senderId: w.bob.id,
      to: { type: "direct", users: ["ALICE@test.dev", w.bob.id] },
      content: "2",
    });
    const ra = stored(a.id).recipient;
    expect(ra).toEqual(stored(b.id).recipient);
    expect(ra.type).toBe("direct");
    if (ra.type === "direct")
      expect(internals(s).conversations.get(ra.conversationId)!.userIds).toEqual(
        [w.alice.id, w.bob.id].sort((x, y) => x - y),
      );
    const self = stored(
      s.sendMessage({ senderId: w.alice.id, to: { type: "direct", users: [w.alice.id] }, content: "note" }).id,
    ).recipient;
    if (self.type === "direct")
      expect(internals(s).conversations.get(self.conversationId)!.userIds).toEqual([w.alice.id]);
    expect(stored(a.id).topic).toBe("");
  });
  it("group DMs arrive unread for the other participants", () => {
    const group = s.sendMessage({
      senderId: w.alice.id,
      to: { type: "direct", users: [w.bob.id, w.owner.id] },
      content: "g",
    });
    expect(s.getMessage(w.owner.id, group.id).flags).toEqual([]);
    expect(s.getMessage(w.bob.id, group.id).flags).toEqual([]);
    expect(() => s.getMessage(w.guest.id, group.id)).toThrow("Invalid message(s)");
  });
});

describe("read_by_sender", () => {
  it("follows the client name like Zulip", () => {
    for (const client of [
      "website",
      "ZulipMobile",
      "ZulipAndroid",
      "ZulipiOS",
      "ZulipElectron",
      "ZulipDesktop",
      "ZulipTerminal",
      "Zulip Desktop App 5.0",
    ]) {
      expect(defaultReadBySender(client)).toBe(true);
    }
    for (const client of ["API", "ZulipPython", "curl", "Internal"]) expect(defaultReadBySender(client)).toBe(false);
  });
  it("sets the sender's read flag only; an explicit value wins", () => {
    const web = s.sendMessage({
      senderId: w.alice.id,
      to: { type: "channel", channel: "general", topic: "t" },
      content: "x",
      client: "website",
    });
    const api = s.sendMessage({
      senderId: w.alice.id,
      to: { type: "channel", channel: "general", topic: "t" },
      content: "x",
    });
    const forced = s.sendMessage({
      senderId: w.alice.id,
      to: { type: "channel", channel: "general", topic: "t" },
      content: "x",
      client: "website",
      readBySender: false,
    });
    const forcedApi = s.sendMessage({
      senderId: w.alice.id,
      to: { type: "channel", channel: "general", topic: "t" },
      content: "x",
      client: "API",
      readBySender: true,
    });
    expect(s.getMessage(w.alice.id, web.id).flags).toEqual(["read"]);
    expect(s.getMessage(w.alice.id, api.id).flags).toEqual([]);
    expect(s.getMessage(w.alice.id, forced.id).flags).toEqual([]);
    expect(s.getMessage(w.alice.id, forcedApi.id).flags).toEqual(["read"]);
    expect(s.getMessage(w.bob.id, web.id).flags).toEqual([]);
    expect(stored(web.id).client).toBe("website");
    expect(stored(api.id).client).toBe("API");
  });
});

describe("recipients and mentions", () => {
  it("subscribers receive channel messages; others see them as historical", () => {
    const { id } = toGeneral("t", "hi @**Bob** and @**Gus Guest**");
    expect(s.getMessage(w.bob.id, id).flags).toEqual(["mentioned"]);
    expect(s.getMessage(w.owner.id, id).flags).toEqual([]);
    const admin = s.createUser({
      realmId: w.realm.id,
      email: "admin@test.dev",
      fullName: "Ada Admin",
      role: ROLE.ADMINISTRATOR,
    });
    expect(s.getMessage(admin.id, id).flags).toEqual(["read", "historical"]);
    expect(() => s.getMessage(w.guest.id, id)).toThrow("Invalid message(s)");
    expect(s.unreadSummary(w.bob.id).mentions).toEqual([id]);
    expect(s.verify().differences).toEqual([]);
  });
  it("wildcard mentions", () => {
    const all = toGeneral("t", "@**all** look");
    const topicOnly = toGeneral("t", "@**topic** look", w.bob.id);
    expect(s.getMessage(w.bob.id, all.id).flags).toEqual(["stream_wildcard_mentioned", "wildcard_mentioned"]);
    // alice posted in the topic before: she is a participant.
    expect(s.getMessage(w.alice.id, topicOnly.id).flags).toEqual(["topic_wildcard_mentioned", "wildcard_mentioned"]);
    expect(s.getMessage(w.owner.id, topicOnly.id).flags).toEqual([]);
  });
  it("group mentions flag the group's members (through subgroups) who receive the message", () => {
    const inner = s.createGroup(w.owner.id, { name: "inner", members: [w.bob.id] });
    const outer = s.createGroup(w.owner.id, { name: "outer crew", members: [w.guest.id], subgroups: [inner.id] });
    const { id } = toGeneral("t", "ping @*outer crew*");
    expect(s.getMessage(w.bob.id, id).flags).toEqual(["group_mentioned"]);
    expect(s.getMessage(w.owner.id, id).flags).toEqual([]);
    // The guest is a member but not subscribed: no row, so no flag.
    expect(() => s.getMessage(w.guest.id, id)).toThrow("Invalid message(s)");
    const mentioned = s.getMessages(w.bob.id, {
      anchor: "newest",
      numBefore: 10,
      numAfter: 0,
      narrow: [{ operator: "is", operand: "mentioned" }],
    });
    expect(mentioned.messages.map((m) => m.message.id)).toEqual([id]);
    expect(stored(id).mentionedGroupIds).toEqual([outer.id]);
  });
});

describe("nothing changed after each failing send, then a success still works", () => {
  it("IDs are not consumed by failures", () => {
    const before = internals(s).counters.nextMessageId;
    for (const bad of [
      () => toGeneral("t", ""),
      () => toGeneral(undefined),
      () => s.sendMessage({ senderId: w.bob.id, to: { type: "channel", channel: "secret", topic: "t" }, content: "x" }),
    ]) {
      expect(bad).toThrow();
    }
    expect(toGeneral("t").id).toBe(before);
  });
});

describe("a group or topic wildcard mention reaching many", () => {
  it("journals their bits, with flags and emails exact in the send's write", () => {
    // Every bulk of per-user bits deferred (BitmapStore.addDeferredForUsers), as for thousands.
    const d = tempStore({ now: () => NOW, deferBitmapWritesFrom: 1 });
    try {
      const store = d.store;
      const seed = seedRealm(store);
      const crew = [1, 2, 3, 4].map((i) =>
        store.createUser({ realmId: seed.realm.id, email: `crew${i}@test.dev`, fullName: `Crew ${i}` }),
      );
      store.subscribe(seed.owner.id, { channels: [{ name: "general" }], principals: crew.map((u) => u.id) });
      const group = store.createGroup(seed.owner.id, {
        name: "crew",
        members: [seed.bob.id, ...crew.map((u) => u.id)],
      });
      const send = (senderId: number, topic: string, content: string) =>
        store.sendMessage({ senderId, to: { type: "channel", channel: "general", topic }, content }).id;
      for (const u of crew.slice(0, 2)) send(u.id, "plans", "me first");
      const meta = internals(store).tables.meta;
      const journal = () => [...meta.getKeys({ start: "deferredBitmapWrites:", end: "deferredBitmapWrites;" })].length;
      const journaled = journal();

      const groupId = send(seed.alice.id, "news", "@*crew* look");
      // Journaled (index/deferred-writes.ts), not each user's chunk written: the flags are read through it.
      expect(journal()).toBe(journaled + 1);
      for (const u of [seed.bob, ...crew]) expect(store.getMessage(u.id, groupId).flags).toEqual(["group_mentioned"]);
      expect(store.getMessage(seed.owner.id, groupId).flags).toEqual([]);
      const topicId = send(seed.alice.id, "plans", "@**topic** look");
      for (const u of crew.slice(0, 2))
        expect(store.getMessage(u.id, topicId).flags).toEqual(["topic_wildcard_mentioned", "wildcard_mentioned"]);
      expect(store.getMessage(crew[2]!.id, topicId).flags).toEqual([]);
      // Each away mentioned user's email batch holds the message, with the trigger the bits give.
      const items = (messageId: number) =>
        store
          .missedEmailBatches()
          .flatMap((b) => b.items.filter((i) => i.messageId === messageId).map((i) => ({ userId: b.userId, ...i })))
          .sort((a, b) => a.userId - b.userId);
      expect(items(groupId)).toEqual(
        [seed.bob, ...crew].map((u) => ({
          userId: u.id,
          messageId: groupId,
          trigger: "mentioned",
          mentionedGroupId: group.id,
        })),
      );
      // Crew 1 started the topic, so follows it (the automatic policy on initiation).
      expect(items(topicId).map((i) => [i.userId, i.trigger])).toEqual([
        [crew[0]!.id, "topic_wildcard_mentioned_in_followed_topic"],
        [crew[1]!.id, "topic_wildcard_mentioned"],
      ]);
      // Durable: a reopened store reads the same flags.
      const again = d.reopen();
      for (const u of crew) expect(again.getMessage(u.id, groupId).flags).toEqual(["group_mentioned"]);
      expect(again.getMessage(crew[0]!.id, topicId).flags).toEqual(["topic_wildcard_mentioned", "wildcard_mentioned"]);
      expect(again.verify().differences).toEqual([]);
    } finally {
      d.cleanup();
    }
  });
});

describe("missed-message emails of a send with more candidates than a write looks at", () => {
  /**
   * The users whose email batch holds the message, with their triggers: after the send's write,
   * and once its later writes ran (`reopen`: the store closed and opened again before they could).
   * Away 1-4 follow the topic: an edit's chunk would skip them (emailed at send), a send's may not.
   */
  async function emailed(
    chunkUsers: number,
    options: { between?: (store: Store, id: number) => Promise<void>; reopen?: boolean } = {},
  ) {
    const d = tempStore({ now: () => NOW, editEmailChunkUsers: chunkUsers });
    try {
      const seed = seedRealm(d.store);
      const away = [1, 2, 3, 4, 5].map((i) =>
        d.store.createUser({ realmId: seed.realm.id, email: `away${i}@test.dev`, fullName: `Away ${i}` }),
      );
      d.store.subscribe(seed.owner.id, { channels: [{ name: "general" }], principals: away.map((u) => u.id) });
      for (const u of away.slice(0, 4)) d.store.setTopicPolicy(u.id, seed.general.id, "lunch", 3);
      const holders = (id: number) =>
        d.store
          .missedEmailBatches()
          .flatMap((b) => b.items.filter((i) => i.messageId === id).map((i) => [b.userId, i.trigger] as const))
          .sort((a, b) => a[0] - b[0]);
      const { id } = d.store.sendMessage({
        senderId: seed.alice.id,
        to: { type: "channel", channel: "general", topic: "lunch" },
        content: `@**all** and @**Away 5** look`,
      });
      const inSend = holders(id);
      const stored = [...internals(d.store).tables.editEmailChunks.getKeys()].length;
      await options.between?.(d.store, id);
      if (options.reopen) d.reopen();
      await editEmailsWritten(internals(d.store));
      return { inSend, stored, after: holders(id), away, seed };
    } finally {
      d.cleanup();
    }
  }

  it("the send's write looks at the first chunk (personal mentions first), later writes at the rest: the same emails", async () => {
    const whole = await emailed(1000);
    const chunked = await emailed(2);
    expect(chunked.inSend).toHaveLength(2);
    expect(chunked.inSend[1]).toEqual([chunked.away[4]!.id, "mentioned"]);
    expect(chunked.after).toEqual(whole.after);
    expect(whole.inSend).toEqual(whole.after);
    // Every subscriber but the sender: the owner, Bob and the five away users.
    expect(whole.after.map(([userId]) => userId)).toEqual(
      [whole.seed.owner, whole.seed.bob, ...whole.away].map((u) => u.id).sort((a, b) => a - b),
    );
  });

  it("a send's writes look at SEND_EMAIL_CHUNK_USERS candidates each, though an edit's may look at more", async () => {
    const d = tempStore({ now: () => NOW, editEmailChunkUsers: 500 });
    try {
      const seed = seedRealm(d.store);
      const many = Array.from(
        { length: SEND_EMAIL_CHUNK_USERS + 30 },
        (_, i) => d.store.createUser({ realmId: seed.realm.id, email: `many${i}@test.dev`, fullName: `Many ${i}` }).id,
      );
      d.store.subscribe(seed.owner.id, { channels: [{ name: "general" }], principals: many });
      const emailedFor = (id: number) =>
        d.store.missedEmailBatches().filter((b) => b.items.some((i) => i.messageId === id)).length;
      const { id } = d.store.sendMessage({
        // The owner: only admins may use wildcards in a channel this large.
        senderId: seed.owner.id,
        to: { type: "channel", channel: "general", topic: "lunch" },
        content: "@**all** look",
      });
      expect(emailedFor(id)).toBe(SEND_EMAIL_CHUNK_USERS);
      const chunks = [...internals(d.store).tables.editEmailChunks.getRange({})].map(
        ({ value }) => value as { users: unknown[] },
      );
      expect(chunks.length).toBeGreaterThan(0);
      expect(chunks.every((c) => c.users.length <= SEND_EMAIL_CHUNK_USERS)).toBe(true);
      await editEmailsWritten(internals(d.store));
      // Every subscriber but the sender: Alice, Bob and the many.
      expect(emailedFor(id)).toBe(2 + many.length);
    } finally {
      d.cleanup();
    }
  });

  it("its stored chunks outlive a close before they are written: the store opened again emails them", async () => {
    const whole = await emailed(1000);
    const reopened = await emailed(2, { reopen: true });
    expect(reopened.stored).toBe(3);
    expect(reopened.after).toEqual(whole.after);
    // The followers' trigger is the send's (an edit's chunk leaves them out).
    expect(whole.after).toContainEqual([whole.away[0]!.id, "stream_wildcard_mentioned_in_followed_topic"]);
  });

  it("a message deleted before the later writes gets no more emails", async () => {
    const chunked = await emailed(2, {
      between: async (store, id) => {
        await store.deleteMessage(store.getUser(1).id, id);
      },
    });
    expect(chunked.after).toEqual(chunked.inSend);
  });
});
