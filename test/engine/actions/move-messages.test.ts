/**
 * Moving messages within and between channels: which messages each propagate mode
 * takes, their edit history and timestamps, resolving and unresolving with Notification
 * Bot's notices, Zulip's validation of the new topic, and every permission and time
 * limit (with Zulip's exact messages).
 */
import { afterEach, describe, expect, it } from "vitest";
import { internals } from "../../../src/engine/internal.js";
import { EngineError, type Channel, type Store } from "../../../src/engine/index.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";
import { moveMessages, record } from "../../support/move.js";

let t: TempStore;
afterEach(() => t?.cleanup());

let clock = 1_700_000_000;

function setup() {
  clock = 1_700_000_000;
  t = tempStore({ now: () => clock });
  const seeded = seedRealm(t.store);
  const send = (senderId: number, channel: string, topic: string, content: string) =>
    t.store.sendMessage({ senderId, to: { type: "channel", channel, topic }, content }).id;
  return { ...seeded, send };
}

/** Changes a channel's settings the way an administrator's PATCH would store them. */
function patchChannel(store: Store, channelId: number, changes: Partial<Channel>): void {
  const state = internals(store);
  const next = { ...state.channels.get(channelId)!, ...changes };
  state.write((ctx) => {
    state.tables.channels.putSync(channelId, next);
    ctx.changed({ kind: "channel", id: channelId });
  });
  state.indexChannel(next);
}

function ids(store: Store, userId: number, narrow: unknown): number[] {
  return store
    .getMessages(userId, { narrow, anchor: "newest", numBefore: 1000, numAfter: 0 })
    .messages.map((v) => v.message.id);
}

const topicNarrow = (channel: string, topic: string) => [
  { operator: "channel", operand: channel },
  { operator: "topic", operand: topic },
];

function refusal(fn: () => unknown): { code: string; message: string; data: unknown } {
  try {
    fn();
  } catch (error) {
    if (error instanceof EngineError) return { code: error.code, message: error.message, data: error.data };
    throw error;
  }
  throw new Error("not refused");
}

/** Messages Notification Bot sent, oldest first, as [topic, content]. */
function notices(store: Store, userId: number, channel: string): [string, string][] {
  const state = internals(store);
  return store
    .getMessages(userId, {
      narrow: [{ operator: "channel", operand: channel }],
      anchor: "newest",
      numBefore: 1000,
      numAfter: 0,
    })
    .messages.filter((v) => state.users.get(v.message.senderId)?.email === "notification-bot@zulip.com")
    .map((v) => [v.message.topic, v.message.content]);
}

describe("topic moves", () => {
  it("change_one, change_later and change_all take the message, the later ones, the whole topic", () => {
    const { owner, alice, send } = setup();
    const [a, b, c, d] = ["one", "two", "three", "four"].map((word) => send(alice.id, "general", "Plans", word));
    const other = send(alice.id, "general", "other", "five");

    expect(moveMessages(t.store, owner.id, b!, { topic: "later", propagateMode: "change_one" })?.messageIds).toEqual([
      b,
    ]);
    expect(moveMessages(t.store, owner.id, c!, { topic: "later", propagateMode: "change_later" })?.messageIds).toEqual([
      c,
      d,
    ]);
    expect(ids(t.store, owner.id, topicNarrow("general", "Plans"))).toEqual([a]);
    expect(ids(t.store, owner.id, topicNarrow("general", "LATER"))).toEqual([b, c, d]);
    // Topics match case-insensitively: the whole of "later" moves, whatever the case asked.
    const all = moveMessages(t.store, owner.id, b!, { topic: "Done", propagateMode: "change_all" })!;
    expect(all.messageIds).toEqual([b, c, d]);
    expect(all.origTopic).toBe("later");
    expect(all.newTopic).toBe("Done");
    expect(all.newChannelId).toBeUndefined();
    expect(ids(t.store, owner.id, topicNarrow("general", "done"))).toEqual([b, c, d]);
    expect(ids(t.store, owner.id, [{ operator: "topic", operand: "later" }])).toEqual([]);
    // Search finds the new topic's words, not the old ones.
    expect(ids(t.store, owner.id, [{ operator: "search", operand: "done" }])).toEqual([b, c, d]);
    expect(ids(t.store, owner.id, [{ operator: "search", operand: "later" }])).toEqual([]);
    expect(ids(t.store, owner.id, topicNarrow("general", "other"))).toEqual([other]);
    expect(t.store.verify().differences).toEqual([]);
    expect(t.store.verify().problems).toEqual([]);
    const store = t.reopen();
    expect(ids(store, owner.id, topicNarrow("general", "done"))).toEqual([b, c, d]);
  });

  it("keeps a topic word in the search index where the content has it too", () => {
    const { owner, alice, send } = setup();
    const a = send(alice.id, "general", "trip", "packing list for the trip");
    const b = send(alice.id, "general", "trip", "tickets booked");
    const other = send(alice.id, "secret", "Trip", "elsewhere");
    moveMessages(t.store, owner.id, a, { topic: "voyage ✔", propagateMode: "change_all" });
    expect(ids(t.store, owner.id, [{ operator: "search", operand: "trip" }])).toEqual([a, other]);
    expect(ids(t.store, owner.id, [{ operator: "search", operand: "voyage" }])).toEqual([a, b]);
    expect(ids(t.store, owner.id, [{ operator: "topic", operand: "trip" }])).toEqual([other]);
    expect(t.store.verify().differences).toEqual([]);
  });

  it("writes one history entry per move and sets last_moved_timestamp, not last_edit_timestamp", () => {
    const { owner, alice, send } = setup();
    const a = send(alice.id, "general", "plans", "one");
    const b = send(alice.id, "general", "plans", "two");
    clock += 30;
    moveMessages(t.store, owner.id, a, { topic: "  moved  ", propagateMode: "change_all" });
    for (const id of [a, b]) {
      const m = record(t.store, id);
      expect(m.topic).toBe("moved");
      expect(m.editHistory).toEqual([{ userId: owner.id, timestamp: clock, prevTopic: "plans", topic: "moved" }]);
      expect(m.lastMovedTimestamp).toBe(clock);
      expect(m.lastEditTimestamp).toBeNull();
    }
  });

  it("answers null when the topic is the current one (after trimming, and general chat naming the empty topic)", () => {
    const { owner, alice, send } = setup();
    const a = send(alice.id, "general", "plans", "one");
    expect(moveMessages(t.store, owner.id, a, { topic: " plans " })).toBeNull();
    const empty = send(alice.id, "general", "", "two");
    expect(moveMessages(t.store, owner.id, empty, { topic: "general chat" })).toBeNull();
    expect(record(t.store, a).editHistory).toBeNull();
  });

  it("refuses topics Zulip refuses, and cuts long ones to 60 characters", () => {
    const { owner, alice, send } = setup();
    const a = send(alice.id, "general", "plans", "one");
    expect(refusal(() => moveMessages(t.store, owner.id, a, { topic: "✔" })).message).toBe(
      "General chat cannot be marked as resolved",
    );
    expect(refusal(() => moveMessages(t.store, owner.id, a, { topic: "✔ general chat" })).message).toBe(
      "General chat cannot be marked as resolved",
    );
    expect(refusal(() => moveMessages(t.store, owner.id, a, { topic: "ab\u0007c" })).message).toBe(
      "Invalid character in topic, at position 3!",
    );
    expect(refusal(() => moveMessages(t.store, owner.id, a, { topic: "x\u0085" })).message).toBe(
      "Invalid character in topic, at position 2!",
    );
    const long = "é".repeat(70);
    moveMessages(t.store, owner.id, a, { topic: long });
    expect(record(t.store, a).topic).toBe(`${"é".repeat(57)}...`);
    expect(record(t.store, a).editHistory).toHaveLength(1);
  });

  it("applies the target channel's topics policy", () => {
    const { owner, alice, send, general } = setup();
    const a = send(alice.id, "general", "plans", "one");
    patchChannel(t.store, general.id, { topicsPolicy: "disable_empty_topic" });
    expect(refusal(() => moveMessages(t.store, owner.id, a, { topic: "" })).message).toBe(
      "Sending messages to the general chat is not allowed in this channel.",
    );
    patchChannel(t.store, general.id, { topicsPolicy: "empty_topic_only" });
    expect(refusal(() => moveMessages(t.store, owner.id, a, { topic: "elsewhere" })).message).toBe(
      "Only the general chat topic is allowed in this channel.",
    );
    expect(moveMessages(t.store, owner.id, a, { topic: "general chat" })?.newTopic).toBe("");
  });
});

describe("resolving topics", () => {
  it("resolves and unresolves with Notification Bot's notice, without counting as a move", () => {
    const { owner, alice, bob, send } = setup();
    const a = send(alice.id, "general", "plans", "one");
    const b = send(bob.id, "general", "plans", "two");
    const resolved = moveMessages(t.store, alice.id, a, { topic: "✔ plans", propagateMode: "change_all" })!;
    expect(resolved.messageIds).toEqual([a, b]);
    expect(ids(t.store, owner.id, [{ operator: "is", operand: "resolved" }]).slice(0, 2)).toEqual([a, b]);
    expect(notices(t.store, owner.id, "general")).toContainEqual([
      "✔ plans",
      `@_**Alice|${alice.id}** has marked this topic as resolved.`,
    ]);
    expect(record(t.store, a).lastMovedTimestamp).toBeNull();
    expect(record(t.store, a).editHistory?.[0]).toMatchObject({ prevTopic: "plans", topic: "✔ plans" });

    // Past Zulip's undo grace (a minute), unresolving adds its own notice.
    clock += 61;
    moveMessages(t.store, bob.id, b, { topic: "plans", propagateMode: "change_all" });
    expect(record(t.store, a).topic).toBe("plans");
    expect(record(t.store, a).lastMovedTimestamp).toBeNull();
    expect(notices(t.store, owner.id, "general").map(([, text]) => text)).toEqual([
      `@_**Alice|${alice.id}** has marked this topic as resolved.`,
      `@_**Bob|${bob.id}** has marked this topic as unresolved.`,
    ]);
    // Read for the mover and, by default (except_followed), for whoever does not follow the
    // topic. Alice follows it (she started it), and her policy moved with the topic.
    const [resolveNotice, unresolveNotice] = ids(t.store, owner.id, topicNarrow("general", "plans")).slice(-2);
    for (const userId of [owner.id, alice.id, bob.id])
      expect(t.store.getMessage(userId, resolveNotice!).flags).toContain("read");
    expect(t.store.getMessage(alice.id, unresolveNotice!).flags).not.toContain("read");
    expect(t.store.getMessage(owner.id, unresolveNotice!).flags).toContain("read");
    expect(t.store.userTopics(alice.id).map((ut) => [ut.topic, ut.policy])).toEqual([["plans", 3]]);
    expect(t.store.verify().differences).toEqual([]);
  });

  it("leaves the resolve notice unread for members whose auto-read policy is never, but never for the mover", () => {
    const { owner, alice, bob, send } = setup();
    for (const userId of [bob.id, owner.id])
      t.store.updateSettings(userId, { settings: { resolved_topic_notice_auto_read_policy: "never" } });
    const a = send(alice.id, "general", "plans", "one");
    moveMessages(t.store, owner.id, a, { topic: "✔ plans", propagateMode: "change_all" });
    const notice = ids(t.store, owner.id, topicNarrow("general", "✔ plans")).at(-1)!;
    expect(t.store.getMessage(bob.id, notice).flags).not.toContain("read");
    // Alice follows the topic she started (except_followed); the owner moved it.
    expect(t.store.getMessage(alice.id, notice).flags).not.toContain("read");
    expect(t.store.getMessage(owner.id, notice).flags).toContain("read");
    expect(t.store.verify().differences).toEqual([]);
  });

  it("decides each member's copy of a partial resolve's notice by policy, the new topic's follow and the account", () => {
    const { realm, owner, alice, bob, general, send } = setup();
    const carol = t.store.createUser({ realmId: realm.id, email: "carol@test.dev", fullName: "Carol" });
    const dave = t.store.createUser({ realmId: realm.id, email: "dave@test.dev", fullName: "Dave" });
    t.store.subscribe(owner.id, { channels: [{ name: "general" }], principals: [carol.id, dave.id] });
    for (const userId of [carol.id, dave.id, owner.id])
      t.store.updateSettings(userId, { settings: { resolved_topic_notice_auto_read_policy: "never" } });
    // Bob follows the resolved name already (the rule for a partial move asks the new topic).
    t.store.setTopicPolicy(bob.id, general.id, "✔ plans", 3);
    t.store.deactivateUser(owner.id, dave.id);
    // Bob sends (a sender follows the topic his moved message starts, when his automation says so).
    const a = send(bob.id, "general", "plans", "one");
    send(bob.id, "general", "plans", "two");
    // change_one of a two-message topic: not the whole topic, so no followers are carried over.
    moveMessages(t.store, owner.id, a, { topic: "✔ plans", propagateMode: "change_one" });
    const notice = ids(t.store, owner.id, topicNarrow("general", "✔ plans")).at(-1)!;
    expect(t.store.getMessage(owner.id, notice).message.content).toBe(
      `@_**Olive Owner|${owner.id}** has marked this topic as resolved.`,
    );
    const read = (userId: number) => internals(t.store).bitmaps.get(`u:${userId}:read`).has(notice);
    // Unread: a follower of the new topic (except_followed), a member whose policy is never.
    expect([bob.id, carol.id].map(read)).toEqual([false, false]);
    // Read: a member who does not follow it, the mover whatever their policy, a deactivated member.
    expect([alice.id, owner.id, dave.id].map(read)).toEqual([true, true, true]);
    expect(t.store.verify().differences).toEqual([]);
  });

  it("takes the notice back when a resolve is undone within a minute, as Zulip does", () => {
    const { owner, alice, send } = setup();
    const a = send(alice.id, "general", "plans", "one");
    moveMessages(t.store, alice.id, a, { topic: "✔ plans", propagateMode: "change_all" });
    const notice = ids(t.store, owner.id, topicNarrow("general", "✔ plans")).at(-1)!;
    clock += 60;
    // Unresolved at once: the resolve notice (moved along) is deleted and no other is sent.
    moveMessages(t.store, alice.id, a, { topic: "plans", propagateMode: "change_all" });
    expect(ids(t.store, owner.id, topicNarrow("general", "plans"))).toEqual([a]);
    expect(() => t.store.getMessage(owner.id, notice)).toThrow("Invalid message(s)");
    // A minute later a resolve notice stays.
    moveMessages(t.store, alice.id, a, { topic: "✔ plans", propagateMode: "change_all" });
    clock += 61;
    moveMessages(t.store, alice.id, a, { topic: "plans", propagateMode: "change_all" });
    expect(notices(t.store, owner.id, "general").map(([, text]) => text)).toEqual([
      `@_**Alice|${alice.id}** has marked this topic as resolved.`,
      `@_**Alice|${alice.id}** has marked this topic as unresolved.`,
    ]);
    expect(t.store.verify().differences).toEqual([]);
    expect(t.store.verify().problems).toEqual([]);
  });

  it("counts a rename that only looks like a resolve as a move", () => {
    const { owner, alice, send } = setup();
    const a = send(alice.id, "general", "plans", "one");
    clock += 5;
    moveMessages(t.store, owner.id, a, { topic: "✔ other plans" });
    expect(record(t.store, a).lastMovedTimestamp).toBe(clock);
    expect(notices(t.store, owner.id, "general")).toEqual([]);
  });

  it("needs can_resolve_topics_group (realm or channel), not the topic-move permission", () => {
    const { realm, owner, alice, send, general } = setup();
    const a = send(alice.id, "general", "plans", "one");
    const nobody = t.store.systemGroupId(realm.id, "role:nobody");
    t.store.setRealmMessagePolicy(owner.id, { canResolveTopicsGroup: nobody });
    expect(refusal(() => moveMessages(t.store, alice.id, a, { topic: "✔ plans" })).message).toBe(
      "You don't have permission to resolve topics in this channel.",
    );
    patchChannel(t.store, general.id, { canResolveTopicsGroup: { directMembers: [alice.id], directSubgroups: [] } });
    expect(moveMessages(t.store, alice.id, a, { topic: "✔ plans" })?.newTopic).toBe("✔ plans");
    // Resolving is not a topic move: no topic-move permission needed, no time limit.
    t.store.setRealmMessagePolicy(owner.id, { canMoveMessagesBetweenTopicsGroup: nobody });
    clock += 30 * 86400;
    expect(moveMessages(t.store, alice.id, a, { topic: "plans" })?.newTopic).toBe("plans");
  });
});

describe("topic move permissions and limits", () => {
  it("needs can_move_messages_between_topics_group or the channel's can_move_messages_within_channel_group", () => {
    const { realm, owner, alice, send, general } = setup();
    const a = send(owner.id, "general", "plans", "one");
    const admins = t.store.systemGroupId(realm.id, "role:administrators");
    t.store.setRealmMessagePolicy(owner.id, { canMoveMessagesBetweenTopicsGroup: admins });
    expect(refusal(() => moveMessages(t.store, alice.id, a, { topic: "x" })).message).toBe(
      "You don't have permission to edit this message",
    );
    patchChannel(t.store, general.id, {
      canMoveMessagesWithinChannelGroup: { directMembers: [alice.id], directSubgroups: [] },
    });
    expect(moveMessages(t.store, alice.id, a, { topic: "x" })?.newTopic).toBe("x");
  });

  it("refuses a topic move past move_messages_within_stream_limit_seconds (+20 s) unless a moderator", () => {
    const { owner, alice, bob, send } = setup();
    const a = send(alice.id, "general", "plans", "one");
    t.store.setRealmMessagePolicy(owner.id, { moveMessagesWithinStreamLimitSeconds: 60 });
    clock += 80;
    expect(moveMessages(t.store, bob.id, a, { topic: "x" })?.newTopic).toBe("x");
    clock += 1;
    expect(refusal(() => moveMessages(t.store, bob.id, a, { topic: "y" })).message).toBe(
      "The time limit for editing this message's topic has passed.",
    );
    t.store.updateUser(owner.id, bob.id, { role: 300 });
    expect(moveMessages(t.store, bob.id, a, { topic: "y" })?.newTopic).toBe("y");
  });

  it("refuses change_all when some of the topic is past the limit, naming what may move", () => {
    const { owner, alice, bob, send } = setup();
    const a = send(alice.id, "general", "plans", "old");
    clock += 100;
    const b = send(alice.id, "general", "plans", "new");
    const c = send(alice.id, "general", "plans", "newer");
    t.store.setRealmMessagePolicy(owner.id, { moveMessagesWithinStreamLimitSeconds: 60 });
    clock += 10;
    const error = refusal(() => moveMessages(t.store, bob.id, c, { topic: "x", propagateMode: "change_all" }));
    expect(error).toEqual({
      code: "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED",
      message: "You only have permission to move the 2/3 most recent messages in this topic.",
      data: { first_message_id_allowed_to_move: b, total_messages_in_topic: 3, total_messages_allowed_to_move: 2 },
    });
    expect(moveMessages(t.store, bob.id, b, { topic: "x", propagateMode: "change_later" })?.messageIds).toEqual([b, c]);
    expect(record(t.store, a).topic).toBe("plans");
  });
});

describe("channel move permissions", () => {
  it("needs can_move_messages_between_channels_group (never guests) or the channel's out-of-channel group", () => {
    const { realm, owner, alice, guest, send, general } = setup();
    const a = send(alice.id, "general", "plans", "one");
    t.store.subscribe(owner.id, { channels: [{ name: "general" }, { name: "other" }], principals: [guest.id] });
    const other = internals(t.store).channelByName.get(`${realm.id}:OTHER`)!;
    // Guests never move messages between channels, whatever the realm's group says.
    t.store.setRealmMessagePolicy(owner.id, {
      canMoveMessagesBetweenChannelsGroup: { directMembers: [guest.id, alice.id], directSubgroups: [] },
    });
    expect(refusal(() => moveMessages(t.store, guest.id, a, { channelId: other })).message).toBe(
      "You don't have permission to move this message",
    );
    const admins = t.store.systemGroupId(realm.id, "role:administrators");
    t.store.setRealmMessagePolicy(owner.id, { canMoveMessagesBetweenChannelsGroup: admins });
    expect(refusal(() => moveMessages(t.store, alice.id, a, { channelId: other })).message).toBe(
      "You don't have permission to move this message",
    );
    patchChannel(t.store, general.id, {
      canMoveMessagesOutOfChannelGroup: { directMembers: [alice.id], directSubgroups: [] },
    });
    expect(moveMessages(t.store, alice.id, a, { channelId: other })?.newChannelId).toBe(other);
  });

  it("refuses a target the mover cannot read or post in, and a channel move past its limit", () => {
    const { realm, owner, alice, bob, send, secret } = setup();
    const a = send(bob.id, "general", "plans", "one");
    expect(refusal(() => moveMessages(t.store, bob.id, a, { channelId: secret.id })).message).toBe(
      "Invalid channel ID",
    );
    expect(refusal(() => moveMessages(t.store, bob.id, a, { channelId: 99999 })).message).toBe("Invalid channel ID");
    const state = internals(t.store);
    patchChannel(t.store, secret.id, { canSendMessageGroup: t.store.systemGroupId(realm.id, "role:nobody") });
    expect(refusal(() => moveMessages(t.store, alice.id, a, { channelId: secret.id })).message).toBe(
      "You do not have permission to post in this channel.",
    );
    t.store.subscribe(owner.id, { channels: [{ name: "third" }], principals: [owner.id, alice.id] });
    const third = state.channelByName.get(`${realm.id}:THIRD`)!;
    t.store.setRealmMessagePolicy(owner.id, { moveMessagesBetweenStreamsLimitSeconds: 60 });
    clock += 81;
    expect(refusal(() => moveMessages(t.store, alice.id, a, { channelId: third })).message).toBe(
      "The time limit for editing this message's channel has passed",
    );
    expect(moveMessages(t.store, owner.id, a, { channelId: third })?.newChannelId).toBe(third);
  });

  it("refuses to move direct messages", () => {
    const { owner, alice, general } = setup();
    const dm = t.store.sendMessage({ senderId: alice.id, to: { type: "direct", users: [owner.id] }, content: "hi" }).id;
    expect(refusal(() => moveMessages(t.store, alice.id, dm, { topic: "x" })).message).toBe(
      "Direct messages cannot have topics.",
    );
    expect(refusal(() => moveMessages(t.store, alice.id, dm, { channelId: general.id })).message).toBe(
      "Direct messages cannot be moved to channels.",
    );
  });
});

describe("Notification Bot's notices", () => {
  it("tells the old and the new topic, by how much moved", () => {
    const { realm, owner, alice, send, general } = setup();
    const [a, b, c] = ["one", "two", "three"].map((w) => send(alice.id, "general", "plans", w));
    const both = { sendNotificationToOldThread: true, sendNotificationToNewThread: true };
    moveMessages(t.store, owner.id, b!, { topic: "single", ...both });
    moveMessages(t.store, owner.id, a!, { topic: "whole [x]", propagateMode: "change_all", ...both });
    expect(c).toBeGreaterThan(b!);
    const user = `@_**Olive Owner|${owner.id}**`;
    const slug = `${general.id}-general`;
    expect(notices(t.store, owner.id, "general")).toEqual([
      [
        "single",
        `[A message](#narrow/channel/${slug}/topic/single/near/${b}) was moved here from #**general>plans** by ${user}.`,
      ],
      // The first old-topic notice was in the topic, so change_all took it along.
      ["whole [x]", `A message was moved from this topic to #**general>single** by ${user}.`],
      ["whole [x]", `This topic was moved here from #**general>plans** by ${user}.`],
      [
        "plans",
        `This topic was moved to [#general > whole &#91;x&#93;](#narrow/channel/${slug}/topic/whole.20.5Bx.5D) by ${user}.`,
      ],
    ]);
    // The notices are read for the mover only.
    const last = ids(t.store, owner.id, topicNarrow("general", "plans")).at(-1)!;
    expect(t.store.getMessage(owner.id, last).flags).toContain("read");
    expect(t.store.getMessage(alice.id, last).flags).not.toContain("read");
    expect(realm.id).toBeGreaterThan(0);
  });
});
