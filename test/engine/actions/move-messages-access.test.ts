/**
 * Moving messages between channels of different access, with several users: who keeps,
 * gains and loses the messages (Zulip's UserMessage rows), with which flags, and what
 * their narrows, unread counts, first unread and direct fetches say afterwards; users'
 * topic policies; the event audience; verify stays clean and a reopen agrees.
 */
import { afterEach, describe, expect, it } from "vitest";
import { internals } from "../../../src/engine/internal.js";
import type { EngineEvent, Store, User } from "../../../src/engine/index.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";
import { moveMessages, record } from "../../support/move.js";

let t: TempStore;
afterEach(() => t?.cleanup());

function setup() {
  t = tempStore();
  const seeded = seedRealm(t.store);
  const carol = t.store.createUser({ realmId: seeded.realm.id, email: "carol@test.dev", fullName: "Carol" });
  const send = (sender: User, channel: string, topic: string, content: string) =>
    t.store.sendMessage({ senderId: sender.id, to: { type: "channel", channel, topic }, content, client: "website" })
      .id;
  return { ...seeded, carol, send };
}

function ids(store: Store, userId: number, narrow: unknown): number[] {
  return store
    .getMessages(userId, { narrow, anchor: "newest", numBefore: 1000, numAfter: 0 })
    .messages.map((v) => v.message.id);
}

function firstUnread(store: Store, userId: number): number | undefined {
  return store.getMessages(userId, { narrow: [], anchor: "first_unread", numBefore: 0, numAfter: 0 }).anchor;
}

function unreadIds(store: Store, userId: number): number[] {
  return store
    .unreadSummary(userId)
    .streams.flatMap((s) => s.unreadMessageIds)
    .sort((a, b) => a - b);
}

function flags(store: Store, userId: number, id: number): readonly string[] | "no access" {
  try {
    return store.getMessage(userId, id).flags;
  } catch {
    return "no access";
  }
}

function clean(store: Store): void {
  const report = store.verify();
  expect(report.differences).toEqual([]);
  expect(report.problems).toEqual([]);
}

describe("moving into a private channel with protected history", () => {
  it("takes the messages from non-members, keeps members' flags and gives the other members read rows", () => {
    const { owner, alice, bob, guest, carol, secret, send } = setup();
    t.store.subscribe(owner.id, { channels: [{ name: "general" }], principals: [guest.id] });
    const m1 = send(bob, "general", "plans", "hi @**Alice**");
    const m2 = send(owner, "general", "plans", "two");
    const m3 = send(alice, "general", "plans", "three");
    const other = send(bob, "general", "other", "stays");
    t.store.updateFlags(alice.id, [m1], "read", "add");
    t.store.updateFlags(alice.id, [m2], "starred", "add");
    t.store.updateFlags(bob.id, [m2], "starred", "add");
    // Carol joins the private channel after the messages were sent.
    t.store.subscribe(owner.id, { channels: [{ name: "secret" }], principals: [carol.id] });
    // Readers first: their received sets are cached from here on.
    expect(unreadIds(t.store, bob.id)).toEqual([m2, m3]);
    expect(firstUnread(t.store, bob.id)).toBe(m2);
    expect(unreadIds(t.store, alice.id)).toEqual([m2, other]);

    const result = moveMessages(t.store, owner.id, m1, { channelId: secret.id, propagateMode: "change_all" })!;
    expect(result.messageIds).toEqual([m1, m2, m3]);
    expect(result.newChannelId).toBe(secret.id);
    expect(result.newTopic).toBeUndefined();
    expect(result.losingAccess).toEqual([bob.id, guest.id].sort((a, b) => a - b));
    expect([owner, alice, bob, guest, carol].filter((u) => result.audience.has(u.id)).map((u) => u.id)).toEqual([
      owner.id,
      alice.id,
      carol.id,
    ]);

    // Bob and the guest lose them, Bob even the one he sent.
    for (const user of [bob, guest]) {
      for (const id of [m1, m2, m3]) expect(flags(t.store, user.id, id)).toBe("no access");
      expect(ids(t.store, user.id, [])).toEqual([other]);
    }
    expect(unreadIds(t.store, bob.id)).toEqual([]);
    // Nothing unread any more: Zulip's anchor past every message.
    expect(firstUnread(t.store, bob.id)).toBe(10_000_000_000_000_000);
    // Members keep their rows and flags, unread included.
    expect(unreadIds(t.store, alice.id)).toEqual([m2, other]);
    expect(flags(t.store, alice.id, m1)).toEqual(["read", "mentioned"]);
    expect(flags(t.store, alice.id, m2)).toEqual(["starred"]);
    expect(ids(t.store, alice.id, [{ operator: "channel", operand: "secret" }])).toEqual([m1, m2, m3]);
    // Carol gets rows, read.
    expect(ids(t.store, carol.id, [])).toEqual([m1, m2, m3]);
    for (const id of [m1, m2, m3]) expect(flags(t.store, carol.id, id)).toEqual(["read"]);
    expect(unreadIds(t.store, carol.id)).toEqual([]);
    expect(ids(t.store, owner.id, [{ operator: "channel", operand: "general" }])).toEqual([other]);
    clean(t.store);

    const store = t.reopen();
    expect(ids(store, bob.id, [])).toEqual([other]);
    expect(ids(store, carol.id, [])).toEqual([m1, m2, m3]);
    expect(flags(store, alice.id, m2)).toEqual(["starred"]);
    expect(unreadIds(store, alice.id)).toEqual([m2, other]);
    clean(store);
  });

  it("moves only the messages the mover can read, and back again", () => {
    const { owner, alice, bob, secret, general, send } = setup();
    const s1 = send(owner, "secret", "plans", "before alice? no, both members");
    t.store.unsubscribe(owner.id, ["secret"], [alice.id]);
    const s2 = send(owner, "secret", "plans", "alice gone");
    t.store.subscribe(owner.id, { channels: [{ name: "secret" }], principals: [alice.id] });
    const s3 = send(owner, "secret", "plans", "alice back");
    // Alice has no row for s2 (protected history): her change_all leaves it behind.
    const result = moveMessages(t.store, alice.id, s3, { channelId: general.id, propagateMode: "change_all" })!;
    expect(result.messageIds).toEqual([s1, s3]);
    expect(record(t.store, s2).recipient).toEqual({ type: "channel", channelId: secret.id });
    // Bob (general) did not receive them: no row, but a public channel's history is his to read.
    expect(flags(t.store, bob.id, s1)).toEqual(["read", "historical"]);
    expect(ids(t.store, bob.id, [])).toEqual([]);
    expect(ids(t.store, bob.id, [{ operator: "channel", operand: "general" }])).toEqual([s1, s3]);
    expect(unreadIds(t.store, bob.id)).toEqual([]);
    clean(t.store);
    // Back into the protected channel: Alice still has her rows, Bob has no access again.
    moveMessages(t.store, owner.id, s1, { channelId: secret.id, propagateMode: "change_all" });
    expect(ids(t.store, alice.id, [{ operator: "channel", operand: "secret" }])).toEqual([s1, s3]);
    expect(ids(t.store, owner.id, [{ operator: "channel", operand: "secret" }])).toEqual([s1, s2, s3]);
    expect(flags(t.store, bob.id, s1)).toBe("no access");
    clean(t.store);
  });
});

describe("moving between public channels", () => {
  it("takes rows from non-members of the new channel, who keep reading it as history", () => {
    const { realm, owner, alice, bob, carol, send } = setup();
    t.store.subscribe(owner.id, { channels: [{ name: "lounge" }], principals: [owner.id, carol.id] });
    const lounge = internals(t.store).channelByName.get(`${realm.id}:LOUNGE`)!;
    const m = send(bob, "general", "plans", "hello");
    t.store.updateFlags(alice.id, [m], "starred", "add");
    moveMessages(t.store, owner.id, m, { channelId: lounge, topic: "moved" });
    // Alice and Bob lose their rows (and flags) but may read a public channel's history.
    expect(flags(t.store, alice.id, m)).toEqual(["read", "historical"]);
    expect(flags(t.store, bob.id, m)).toEqual(["read", "historical"]);
    expect(t.store.starredMessageIds(alice.id)).toEqual([]);
    // Carol, a member of the new channel since before the message, has no row either (Zulip gives none).
    expect(flags(t.store, carol.id, m)).toEqual(["read", "historical"]);
    expect(flags(t.store, owner.id, m)).toEqual([]);
    expect(record(t.store, m).editHistory?.[0]).toMatchObject({
      prevStream: internals(t.store).channelByName.get(`${realm.id}:GENERAL`),
      stream: lounge,
      prevTopic: "plans",
      topic: "moved",
    });
    clean(t.store);
  });

  it("gives a user who lost a row a fresh one when they star it, historical wherever it goes", () => {
    const { realm, owner, alice, bob, secret, send } = setup();
    t.store.subscribe(owner.id, { channels: [{ name: "lounge" }], principals: [owner.id] });
    const lounge = internals(t.store).channelByName.get(`${realm.id}:LOUNGE`)!;
    const general = internals(t.store).channelByName.get(`${realm.id}:GENERAL`)!;
    const m = send(alice, "general", "plans", "hi @**Bob**");
    const own = send(bob, "general", "plans", "mine");
    t.store.updateFlags(bob.id, [m], "starred", "add");
    expect(flags(t.store, bob.id, m)).toEqual(["starred", "mentioned"]);
    moveMessages(t.store, owner.id, m, { channelId: lounge, propagateMode: "change_all" });
    expect(flags(t.store, bob.id, m)).toEqual(["read", "historical"]);
    // Starring it again makes a new row (Zulip's historical one): the lost row's flags do not come back.
    t.store.updateFlags(bob.id, [m], "starred", "add");
    expect(flags(t.store, bob.id, m)).toEqual(["read", "starred", "historical"]);
    // Back where his subscription covers it: the historical row stays what it is.
    moveMessages(t.store, owner.id, m, { channelId: general, propagateMode: "change_all" });
    expect(flags(t.store, bob.id, m)).toEqual(["read", "starred", "historical"]);
    expect(t.store.starredMessageIds(bob.id)).toEqual([m]);
    clean(t.store);
    // His own message, moved through a private channel and back, stays without a row.
    moveMessages(t.store, owner.id, own, { channelId: secret.id });
    moveMessages(t.store, owner.id, own, { channelId: general });
    expect(flags(t.store, bob.id, own)).toEqual(["read", "historical"]);
    expect(ids(t.store, bob.id, [])).toEqual([m]);
    clean(t.store);
    const store = t.reopen();
    expect(flags(store, bob.id, m)).toEqual(["read", "starred", "historical"]);
    clean(store);
  });

  it("leaves a historical row of a user of neither channel alone", () => {
    const { realm, owner, carol, send } = setup();
    t.store.subscribe(owner.id, { channels: [{ name: "lounge" }], principals: [owner.id] });
    const lounge = internals(t.store).channelByName.get(`${realm.id}:LOUNGE`)!;
    const m = send(owner, "general", "plans", "hello");
    t.store.updateFlags(carol.id, [m], "starred", "add");
    expect(flags(t.store, carol.id, m)).toEqual(["read", "starred", "historical"]);
    moveMessages(t.store, owner.id, m, { channelId: lounge });
    expect(flags(t.store, carol.id, m)).toEqual(["read", "starred", "historical"]);
    expect(t.store.starredMessageIds(carol.id)).toEqual([m]);
    clean(t.store);
  });
});

describe("who hears of a move, and who may read what it carries", () => {
  it("sends update_message to the rows kept and, with shared history, both channels' members", () => {
    const { realm, owner, alice, bob, guest, carol, send } = setup();
    t.store.subscribe(owner.id, { channels: [{ name: "lounge" }], principals: [owner.id, carol.id, guest.id] });
    const lounge = internals(t.store).channelByName.get(`${realm.id}:LOUNGE`)!;
    const m = send(alice, "general", "plans", "hello");
    const later = send(alice, "general", "plans", "again");
    // A topic move: the rows (owner, alice, bob, and carol's historical one) and general's members.
    t.store.updateFlags(carol.id, [m], "starred", "add");
    const rename = moveMessages(t.store, owner.id, m, { topic: "renamed" })!;
    const hears = (result: typeof rename, users: User[]) =>
      users.filter((u) => result.audience.has(u.id)).map((u) => u.fullName);
    expect(hears(rename, [owner, alice, bob, carol, guest])).toEqual(["Olive Owner", "Alice", "Bob", "Carol"]);
    // To a public channel: general's members who lose their rows (Alice, Bob) still hear of it (as
    // readers of its history); Carol (in lounge) does; the guest, in lounge only, does not.
    const moved = moveMessages(t.store, owner.id, later, { channelId: lounge })!;
    expect(moved.losingAccess).toEqual([]);
    expect(hears(moved, [owner, alice, bob, carol, guest])).toEqual(["Olive Owner", "Alice", "Bob", "Carol"]);
  });

  it("tells users who lose the messages with delete_message, before update_message reaches the others", () => {
    const { owner, bob, guest, secret, send } = setup();
    t.store.subscribe(owner.id, { channels: [{ name: "general" }], principals: [guest.id] });
    const a = send(owner, "general", "plans", "one");
    const b = send(owner, "general", "plans", "two");
    const seen: { type: string; audience: number[]; event: EngineEvent }[] = [];
    t.store.onEvents((batch) => {
      for (const d of batch.deliveries)
        if (d.event.type === "delete_message" || d.event.type === "update_message")
          seen.push({ type: d.event.type, audience: [...d.audience].sort((x, y) => x - y), event: d.event });
    });
    t.store.updateMessage(owner.id, a, { channelId: secret.id, propagateMode: "change_all" });
    expect(seen.map((s) => s.type)).toEqual(["delete_message", "update_message"]);
    expect(seen[0]!.audience).toEqual([bob.id, guest.id].sort((x, y) => x - y));
    const general = record(t.store, a).editHistory![0]!.prevStream;
    expect(seen[0]!.event).toMatchObject({ messageIds: [a, b], channel: { channelId: general, topic: "plans" } });
    expect(seen[1]!.audience).not.toContain(bob.id);
  });

  it("shares an upload through the channel the message is in now", () => {
    const { owner, alice, bob, secret, send } = setup();
    const pathId = `${owner.realmId}/ab/cdefghijklmnopqrstuvwxyz/plan.txt`;
    t.store.createAttachment(
      { ownerId: alice.id, pathId, name: "plan.txt", size: 4, contentType: "text/plain", image: null },
      null,
    );
    const m = send(alice, "general", "plans", `[plan](/user_uploads/${pathId})`);
    expect(t.store.attachmentForDownload(bob.id, owner.realmId, pathId)?.pathId).toBe(pathId);
    moveMessages(t.store, owner.id, m, { channelId: secret.id });
    expect(t.store.attachmentForDownload(bob.id, owner.realmId, pathId)).toBeUndefined();
    expect(t.store.attachmentForDownload(owner.id, owner.realmId, pathId)?.pathId).toBe(pathId);
  });
});

describe("topic policies", () => {
  it("follow the whole topic, merge with the target's, and leave users who lost access", () => {
    const { owner, alice, bob, secret, send } = setup();
    const m = send(owner, "general", "plans", "one");
    send(owner, "secret", "target", "already here");
    t.store.setTopicPolicy(alice.id, internals(t.store).channels.get(m ? secret.id : 0)!.id, "target", 1);
    const general = record(t.store, m).recipient;
    const generalId = general.type === "channel" ? general.channelId : 0;
    t.store.setTopicPolicy(alice.id, generalId, "plans", 2);
    t.store.setTopicPolicy(bob.id, generalId, "plans", 3);
    // The owner follows "plans" (he started it) and nothing in "target" (he started it too: followed).
    moveMessages(t.store, owner.id, m, { channelId: secret.id, topic: "target", propagateMode: "change_all" });
    const policies = (userId: number) => t.store.userTopics(userId).map((ut) => [ut.channelId, ut.topic, ut.policy]);
    // Alice: unmuted merged into muted → unmuted (the more visible).
    expect(policies(alice.id)).toEqual([[secret.id, "target", 2]]);
    // Bob cannot read the private channel: his policy is gone, not moved.
    expect(policies(bob.id)).toEqual([]);
    expect(policies(owner.id)).toEqual([[secret.id, "target", 3]]);
  });

  it("stay on a partial move, where the sender may follow the topic their message now starts", () => {
    const { owner, alice, send } = setup();
    const a = send(alice, "general", "plans", "one");
    const b = send(owner, "general", "plans", "two");
    moveMessages(t.store, owner.id, b, { topic: "split" });
    const topics = (userId: number) => t.store.userTopics(userId).map((ut) => [ut.topic, ut.policy]);
    expect(topics(alice.id)).toEqual([["plans", 3]]);
    // The owner's automation follows topics on initiation: his message now starts "split".
    expect(topics(owner.id)).toEqual([["split", 3]]);
    expect(record(t.store, a).topic).toBe("plans");
  });
});
