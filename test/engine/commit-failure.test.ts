/**
 * A write whose commit fails changes nothing anywhere (issue #7, item 2). For every
 * kind of write, a failure is injected as the last step inside the LMDB transaction
 * (StoreOptions.commitHook, after the bitmap chunks are written), and we assert:
 * the call throws; the store's fingerprint (every table including the change log,
 * counters, cached bitmaps, in-memory maps) is exactly what it was; no event was
 * released; the same write then succeeds with the ID the failed one would have had
 * and is found by narrows and search (the failed one's words are not); and memory
 * equals disk afterwards (the fingerprint survives a reopen) and verify is clean.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventBatch, Store, User } from "../../src/engine/index.js";
import { internals } from "../../src/engine/internal.js";
import { fingerprint } from "../support/snapshot.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";

class InjectedCommitFailure extends Error {}

let t: TempStore;
let armed = false;
let w: ReturnType<typeof seedRealm>;
let batches: EventBatch[];
const s = (): Store => t.store;

beforeEach(() => {
  armed = false;
  t = tempStore({
    commitHook: () => {
      if (!armed) return;
      armed = false;
      throw new InjectedCommitFailure("injected commit failure");
    },
  });
  w = seedRealm(t.store);
  batches = [];
  t.store.onEvents((batch) => batches.push(batch));
});
afterEach(() => t.cleanup());

/** Runs `fn` with a failure injected at its commit; asserts it threw and changed nothing, released nothing. */
function failsAtCommit(fn: () => unknown): void {
  const before = fingerprint(s());
  const released = batches.length;
  armed = true;
  expect(fn).toThrow(InjectedCommitFailure);
  expect(armed, "the write reached its commit").toBe(false);
  expect(fingerprint(s())).toBe(before);
  expect(batches.length, "no event released for a failed write").toBe(released);
}

/** Memory held exactly what is on disk (the fingerprint survives a reopen), and every derivable index verifies. */
function expectMemoryIsDiskAndVerifies(): void {
  const live = fingerprint(s());
  const reopened = t.reopen();
  expect(fingerprint(reopened)).toBe(live);
  const report = reopened.verify();
  expect(report.differences).toEqual([]);
  expect(report.problems).toEqual([]);
}

const next = (
  kind: "nextMessageId" | "nextUserId" | "nextChannelId" | "nextGroupId" | "nextConversationId" | "nextChangeSeq",
) => internals(s()).counters[kind];
const window = (user: User, narrow: unknown[]) =>
  s()
    .getMessages(user.id, { narrow, anchor: "newest", numBefore: 1000, numAfter: 0 })
    .messages.map((m) => m.message.id);
const search = (user: User, words: string) => window(user, [{ operator: "search", operand: words }]);
const send = (topic: string, content: string, sender = w.alice, channel = "general") =>
  s().sendMessage({ senderId: sender.id, to: { type: "channel", channel, topic }, content }).id;
const flagsOf = (user: User, id: number) => s().getMessage(user.id, id).flags;
/** The event types released since `from`, and the sequence number of the first batch. */
const releasedSince = (from: number) => ({
  types: batches.slice(from).flatMap((b) => b.deliveries.map((d) => d.event.type)),
  firstSeq: batches[from]?.seq,
});

describe("messages", () => {
  it("a channel message (the channel's first) whose commit fails leaves no trace; its ID, topic and terms go to the next message only", () => {
    const id = next("nextMessageId");
    const seq = next("nextChangeSeq");
    failsAtCommit(() => send("doomed topic", "zebrafailed quagmire"));
    expect(s().getChannel(w.general.id)!.firstMessageId).toBeNull();
    expect(window(w.bob, [])).toEqual([]);

    const released = batches.length;
    expect(send("kept topic", "giraffekept meadow")).toBe(id);
    // The sender starts the topic and so follows it (Zulip's default automatic policy).
    expect(releasedSince(released)).toEqual({
      types: ["muted_topics", "user_topic", "stream", "message"],
      firstSeq: seq,
    });
    expect(s().getChannel(w.general.id)!.firstMessageId).toBe(id);
    for (const reader of [w.alice, w.bob, w.owner]) {
      expect(search(reader, "zebrafailed")).toEqual([]);
      expect(search(reader, "quagmire")).toEqual([]);
      expect(search(reader, "giraffekept")).toEqual([id]);
      expect(
        window(reader, [
          { operator: "channel", operand: "general" },
          { operator: "topic", operand: "doomed topic" },
        ]),
      ).toEqual([]);
      expect(
        window(reader, [
          { operator: "channel", operand: "general" },
          { operator: "topic", operand: "kept topic" },
        ]),
      ).toEqual([id]);
    }
    expect(s().getMessage(w.bob.id, id).message.content).toBe("giraffekept meadow");
    expectMemoryIsDiskAndVerifies();
    expect(search(w.bob, "zebrafailed")).toEqual([]);
    expect(search(w.bob, "giraffekept")).toEqual([id]);
  });

  it("a failure between committed messages: the retry gets the failed ID and mentions and wildcards index only for it", () => {
    const first = send("t", "before");
    failsAtCommit(() => send("t", "@**Bob** @**topic** failedword"));
    const retried = send("t", "@**Alice** keptword");
    expect(retried).toBe(first + 1);
    expect(window(w.bob, [{ operator: "is", operand: "mentioned" }])).toEqual([]);
    expect(flagsOf(w.bob, retried)).not.toContain("mentioned");
    expect(search(w.bob, "failedword")).toEqual([]);
    expect(window(w.bob, [{ operator: "channel", operand: "general" }])).toEqual([first, retried]);
    expectMemoryIsDiskAndVerifies();
  });

  it("a direct message that would create the first conversation: no conversation, and the record shapes it introduced stay readable after a restart", () => {
    const id = next("nextMessageId");
    const conversation = next("nextConversationId");
    failsAtCommit(() =>
      s().sendMessage({ senderId: w.alice.id, to: { type: "direct", users: [w.bob.id] }, content: "secretfailed" }),
    );
    expect(internals(s()).conversations.count()).toBe(0);
    expect(window(w.bob, [{ operator: "is", operand: "dm" }])).toEqual([]);

    expect(
      s().sendMessage({ senderId: w.alice.id, to: { type: "direct", users: [w.bob.id] }, content: "secretkept" }).id,
    ).toBe(id);
    expect(internals(s()).conversations.get(conversation)?.userIds).toEqual([w.alice.id, w.bob.id]);
    expect(window(w.bob, [{ operator: "dm", operand: [w.alice.id] }])).toEqual([id]);
    expect(search(w.bob, "secretfailed")).toEqual([]);
    expect(search(w.bob, "secretkept")).toEqual([id]);
    expectMemoryIsDiskAndVerifies();
    expect(s().getMessage(w.bob.id, id).message.recipient).toEqual({ type: "direct", conversationId: conversation });
  });

  it("a group direct message", () => {
    const id = next("nextMessageId");
    failsAtCommit(() =>
      s().sendMessage({
        senderId: w.alice.id,
        to: { type: "direct", users: [w.bob.id, w.owner.id] },
        content: "trio failed",
      }),
    );
    expect(
      s().sendMessage({
        senderId: w.alice.id,
        to: { type: "direct", users: [w.bob.id, w.owner.id] },
        content: "trio kept",
      }).id,
    ).toBe(id);
    expect(window(w.owner, [{ operator: "is", operand: "dm" }])).toEqual([id]);
    expect(window(w.owner, [{ operator: "dm-including", operand: w.bob.id }])).toEqual([id]);
    expectMemoryIsDiskAndVerifies();
  });
});

describe("flags", () => {
  it("flags by IDs (with and without existing rows)", () => {
    const m = send("t", "star me");
    const carol = s().createUser({ realmId: w.realm.id, email: "carol@test.dev", fullName: "Carol" });
    failsAtCommit(() => s().updateFlags(w.bob.id, [m], "starred", "add"));
    expect(window(w.bob, [{ operator: "is", operand: "starred" }])).toEqual([]);
    // Carol never received it: starring materialises a historical row.
    failsAtCommit(() => s().updateFlags(carol.id, [m], "starred", "add"));
    expect(flagsOf(carol, m)).toEqual(["read", "historical"]);

    const released = batches.length;
    expect(s().updateFlags(w.bob.id, [m], "starred", "add")).toEqual({ updatedCount: 1 });
    expect(s().updateFlags(carol.id, [m], "starred", "add")).toEqual({ updatedCount: 1 });
    expect(releasedSince(released).types).toEqual(["update_message_flags", "update_message_flags"]);
    expect(window(w.bob, [{ operator: "is", operand: "starred" }])).toEqual([m]);
    expect(flagsOf(carol, m)).toEqual(["read", "starred", "historical"]);

    failsAtCommit(() => s().updateFlags(w.bob.id, [m], "read", "add"));
    expect(window(w.bob, [{ operator: "is", operand: "unread" }])).toEqual([m]);
    expectMemoryIsDiskAndVerifies();
  });

  it("flags by narrow", () => {
    const ids = [send("a", "one"), send("b", "two"), send("a", "three")];
    const narrow = {
      narrow: [{ operator: "channel", operand: "general" }],
      anchor: "oldest" as const,
      numBefore: 0,
      numAfter: 100,
    };
    failsAtCommit(() => s().updateFlagsForNarrow(w.bob.id, narrow, "read", "add"));
    expect(window(w.bob, [{ operator: "is", operand: "unread" }])).toEqual(ids);
    expect(s().unreadSummary(w.bob.id).count).toBe(3);
    expect(s().updateFlagsForNarrow(w.bob.id, narrow, "read", "add").updatedCount).toBe(3);
    expect(window(w.bob, [{ operator: "is", operand: "unread" }])).toEqual([]);
    failsAtCommit(() => s().updateFlagsForNarrow(w.bob.id, narrow, "read", "remove"));
    expect(window(w.bob, [{ operator: "is", operand: "unread" }])).toEqual([]);
    expectMemoryIsDiskAndVerifies();
  });

  it("mark topic as read", () => {
    const a = send("a", "one");
    const b = send("b", "two");
    failsAtCommit(() => s().markTopicAsRead(w.bob.id, w.general.id, "a"));
    expect(window(w.bob, [{ operator: "is", operand: "unread" }])).toEqual([a, b]);
    expect(s().markTopicAsRead(w.bob.id, w.general.id, "a").updatedCount).toBe(1);
    expect(window(w.bob, [{ operator: "is", operand: "unread" }])).toEqual([b]);
    failsAtCommit(() => s().markTopicAsRead(w.bob.id, w.general.id, null));
    expect(window(w.bob, [{ operator: "is", operand: "unread" }])).toEqual([b]);
    expectMemoryIsDiskAndVerifies();
  });
});

describe("reactions", () => {
  const smile = { emojiName: "smile", emojiCode: "1f604", reactionType: "unicode_emoji" as const };
  it("add (the store's first reaction: a new record shape) and remove", () => {
    const m = send("t", "react to me");
    failsAtCommit(() => s().addReaction(w.bob.id, m, smile));
    expect(s().getMessage(w.bob.id, m).message.reactions).toEqual([]);
    expect(window(w.bob, [{ operator: "has", operand: "reaction" }])).toEqual([]);

    s().addReaction(w.bob.id, m, smile);
    expect(window(w.bob, [{ operator: "has", operand: "reaction" }])).toEqual([m]);
    failsAtCommit(() => s().removeReaction(w.bob.id, m, smile));
    expect(window(w.bob, [{ operator: "has", operand: "reaction" }])).toEqual([m]);
    expectMemoryIsDiskAndVerifies();
    expect(s().getMessage(w.bob.id, m).message.reactions).toEqual([{ ...smile, userId: w.bob.id }]);

    s().removeReaction(w.bob.id, m, smile);
    expect(window(w.bob, [{ operator: "has", operand: "reaction" }])).toEqual([]);
    expectMemoryIsDiskAndVerifies();
  });
});

describe("subscriptions", () => {
  it("subscribe creating a channel: no channel, no subscription; the retry gets the channel ID", () => {
    const channelId = next("nextChannelId");
    failsAtCommit(() =>
      s().subscribe(w.owner.id, { channels: [{ name: "launch" }], principals: [w.owner.id, w.bob.id] }),
    );
    expect(s().getChannel(channelId)).toBeUndefined();
    expect(
      s()
        .subscriptionLists(w.bob.id, false)
        .subscribed.map((x) => x.channel.name),
    ).toEqual(["general"]);
    expect(() => send("t", "x", w.owner, "launch")).toThrow("Channel 'launch' does not exist");

    const released = batches.length;
    expect(
      s().subscribe(w.owner.id, { channels: [{ name: "launch" }], principals: [w.owner.id, w.bob.id] })
        .createdChannelIds,
    ).toEqual([channelId]);
    expect(releasedSince(released).types).toContain("stream");
    const m = send("go", "liftoff", w.owner, "launch");
    expect(window(w.bob, [{ operator: "channel", operand: "launch" }])).toEqual([m]);
    expect(search(w.bob, "liftoff")).toEqual([m]);
    expectMemoryIsDiskAndVerifies();
  });

  it("subscribe to an existing private channel: the subscriber does not receive until the retry", () => {
    failsAtCommit(() => s().subscribe(w.owner.id, { channels: [{ name: "secret" }], principals: [w.bob.id] }));
    const before = send("t", "hushfailed", w.owner, "secret");
    expect(search(w.bob, "hushfailed")).toEqual([]);
    s().subscribe(w.owner.id, { channels: [{ name: "secret" }], principals: [w.bob.id] });
    const after = send("t", "hushkept", w.owner, "secret");
    expect(window(w.bob, [{ operator: "channel", operand: "secret" }])).toEqual([after]);
    expect(before).toBeLessThan(after);
    expectMemoryIsDiskAndVerifies();
  });

  it("unsubscribe: the user keeps receiving until the retry", () => {
    const warm = send("t", "warm");
    expect(window(w.bob, [])).toEqual([warm]); // fills the derived received-set cache
    failsAtCommit(() => s().unsubscribe(w.bob.id, ["general"]));
    const stillReceived = send("t", "still");
    expect(window(w.bob, [])).toEqual([warm, stillReceived]);
    expect(s().unsubscribe(w.bob.id, ["general"]).removed).toEqual(["general"]);
    const notReceived = send("t", "gone");
    expect(flagsOf(w.bob, notReceived)).toEqual(["read", "historical"]);
    expect(window(w.bob, [{ operator: "in", operand: "home" }])).toEqual([warm, stillReceived]);
    expectMemoryIsDiskAndVerifies();
  });
});

describe("users", () => {
  it("create user: the retry gets the user ID, email and API key lookups answer only then", () => {
    const userId = next("nextUserId");
    failsAtCommit(() =>
      s().createUser({ realmId: w.realm.id, email: "dave@test.dev", fullName: "Dave", apiKey: "k".repeat(32) }),
    );
    expect(s().findUserByEmail(w.realm.id, "dave@test.dev")).toBeUndefined();
    expect(s().findUserByApiKey("k".repeat(32))).toBeUndefined();
    const dave = s().createUser({
      realmId: w.realm.id,
      email: "dave@test.dev",
      fullName: "Dave",
      apiKey: "k".repeat(32),
    });
    expect(dave.id).toBe(userId);
    expect(s().findUserByApiKey("k".repeat(32))?.id).toBe(userId);
    const m = s().sendMessage({
      senderId: w.alice.id,
      to: { type: "direct", users: ["dave@test.dev"] },
      content: "welcome dave",
    }).id;
    expect(window(dave, [])).toEqual([m]);
    expectMemoryIsDiskAndVerifies();
  });

  it("create realm (realm, system groups and owner in one write)", () => {
    const ids = { user: next("nextUserId"), group: next("nextGroupId") };
    failsAtCommit(() =>
      s().createRealm({ subdomain: "other", name: "Other", owner: { email: "o@other.dev", fullName: "Oscar" } }),
    );
    expect(s().findRealmBySubdomain("other")).toBeUndefined();
    const { realm, owner } = s().createRealm({
      subdomain: "other",
      name: "Other",
      owner: { email: "o@other.dev", fullName: "Oscar" },
    });
    expect(owner.id).toBe(ids.user);
    expect(s().systemGroupId(realm.id, "role:nobody")).toBeGreaterThanOrEqual(ids.group);
    expectMemoryIsDiskAndVerifies();
  });

  it("update user (name and role)", () => {
    failsAtCommit(() => s().updateUser(w.owner.id, w.bob.id, { fullName: "Robert", role: 200 }));
    expect(s().getUser(w.bob.id)).toMatchObject({ fullName: "Bob", role: 400 });
    expect(internals(s()).usersByName.get(`${w.realm.id}:robert`)).toBeUndefined();
    s().updateUser(w.owner.id, w.bob.id, { fullName: "Robert", role: 200 });
    expect(s().getUser(w.bob.id)).toMatchObject({ fullName: "Robert", role: 200 });
    expectMemoryIsDiskAndVerifies();
  });

  it("deactivate and reactivate: receive intervals change only with the committed write", () => {
    failsAtCommit(() => s().setUserActive(w.bob.id, false));
    expect(s().getUser(w.bob.id).isActive).toBe(true);
    const received = send("t", "bob gets this");
    expect(window(w.bob, [])).toEqual([received]);
    s().setUserActive(w.bob.id, false);
    const missed = send("t", "bob misses this");
    failsAtCommit(() => s().setUserActive(w.bob.id, true));
    expect(s().getUser(w.bob.id).isActive).toBe(false);
    s().setUserActive(w.bob.id, true);
    const back = send("t", "bob is back");
    expect(window(w.bob, [])).toEqual([received, back]);
    expect(missed).toBe(received + 1);
    expectMemoryIsDiskAndVerifies();
  });
});

describe("groups, topics, settings", () => {
  it("create group (a new record shape in its table) and change members", () => {
    const groupId = next("nextGroupId");
    failsAtCommit(() => s().createGroup(w.owner.id, { name: "crew", members: [w.alice.id, w.bob.id] }));
    expect(
      s()
        .userGroups(w.owner.id, false)
        .some((g) => g.group.name === "crew"),
    ).toBe(false);
    const crew = s().createGroup(w.owner.id, { name: "crew", members: [w.alice.id, w.bob.id] });
    expect(crew.id).toBe(groupId);

    failsAtCommit(() => s().updateGroupMembers(w.owner.id, crew.id, [w.owner.id], [w.bob.id]));
    expect(internals(s()).groups.get(crew.id)!.members).toEqual([w.alice.id, w.bob.id]);
    s().updateGroupMembers(w.owner.id, crew.id, [w.owner.id], [w.bob.id]);
    expect(internals(s()).groups.get(crew.id)!.members).toEqual([w.alice.id, w.owner.id]);
    expectMemoryIsDiskAndVerifies();
  });

  it("topic visibility policy", () => {
    const m = send("noisy", "blah");
    failsAtCommit(() => s().setTopicPolicy(w.bob.id, w.general.id, "noisy", 1));
    expect(s().userTopics(w.bob.id)).toEqual([]);
    expect(window(w.bob, [{ operator: "in", operand: "home" }])).toEqual([m]);
    s().setTopicPolicy(w.bob.id, w.general.id, "noisy", 1);
    expect(
      s()
        .userTopics(w.bob.id)
        .map((u) => [u.topic, u.policy]),
    ).toEqual([["noisy", 1]]);
    expect(window(w.bob, [{ operator: "in", operand: "home" }])).toEqual([]);
    expectMemoryIsDiskAndVerifies();
  });

  it("channel mute and realm deactivation", () => {
    failsAtCommit(() => s().setChannelMuted(w.bob.id, w.general.id, true));
    expect(
      s()
        .subscriptionLists(w.bob.id, false)
        .subscribed.find((x) => x.channel.id === w.general.id)!.subscription.isMuted,
    ).toBe(false);
    failsAtCommit(() => s().setRealmDeactivated(w.realm.id, true));
    expect(s().findRealmBySubdomain("")!.deactivated).toBe(false);
    expect(send("t", "realm still open")).toBeGreaterThan(0);
    expectMemoryIsDiskAndVerifies();
  });
});

describe("batches", () => {
  it("a batch whose commit fails is undone as a whole (memory reloaded), and the same batch then commits with the same IDs", () => {
    const ids = { message: next("nextMessageId"), channel: next("nextChannelId"), user: next("nextUserId") };
    const run = () =>
      s().batch(() => {
        const erin = s().createUser({ realmId: w.realm.id, email: "erin@test.dev", fullName: "Erin" });
        s().subscribe(w.owner.id, { channels: [{ name: "bulk" }], principals: [w.owner.id, erin.id] });
        const m = send("load", "bulkword", w.owner, "bulk");
        s().updateFlags(erin.id, [m], "starred", "add");
        return { erin: erin.id, m };
      });
    failsAtCommit(run);
    expect(s().findUserByEmail(w.realm.id, "erin@test.dev")).toBeUndefined();
    expect(search(w.owner, "bulkword")).toEqual([]);
    expect(run()).toEqual({ erin: ids.user, m: ids.message });
    expect(s().getChannel(ids.channel)?.name).toBe("bulk");
    expect(search(w.owner, "bulkword")).toEqual([ids.message]);
    expectMemoryIsDiskAndVerifies();
  });
});
