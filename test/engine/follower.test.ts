/**
 * A follower store (openFollower, src/engine/follower.ts): opened on its writer's data
 * directory, it refuses every write, joins only its own server's lock, and after
 * catchUp() answers and holds exactly what a follower freshly opened there does,
 * whatever the writer did: sends, flags, edits, moves, deletions, subscriptions, users,
 * groups, settings, deferred bitmap writes being settled, a log it fell behind.
 */
import { afterEach, describe, expect, it } from "vitest";
import { DataDirectoryLockedError, FollowerWriteError, type Store, type User } from "../../src/engine/index.js";
import { openFollower, openStore } from "../../src/index.js";
import { internals } from "../../src/engine/internal.js";
import { changesSince, packBitmapKeys, unpackBitmapKeys } from "../../src/engine/events/change-log.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";
import { fingerprint } from "../support/snapshot.js";
import { followerView } from "../support/follower-view.js";

let t: TempStore;
const followers: Store[] = [];
afterEach(() => {
  for (const f of followers.splice(0)) f.close();
  t.cleanup();
});

function follow(writer: Store, dir = t.dir): Store {
  const follower = openFollower(dir, { noSync: true, lockToken: writer.lockToken });
  followers.push(follower);
  return follower;
}

/** The follower, caught up, equals a follower opened now. */
function expectCaughtUp(follower: Store, viewers: readonly User[]): void {
  follower.catchUp();
  const fresh = openFollower(t.dir, { noSync: true, lockToken: t.store.lockToken });
  try {
    const ids = viewers.map((u) => u.id);
    expect(followerView(follower, ids)).toEqual(followerView(fresh, ids));
  } finally {
    fresh.close();
  }
}

describe("follower store", () => {
  it("sees every kind of write after catchUp, and nothing is left stale in its caches", async () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const s = t.store;
    const follower = follow(s);
    const viewers = [w.owner, w.alice, w.bob, w.guest];
    // Warm the follower's caches: each later step must drop what it changed.
    expectCaughtUp(follower, viewers);
    const first = s.sendMessage({
      senderId: w.alice.id,
      to: { type: "channel", channel: "general", topic: "lunch" },
      content: "hi @**Bob** about apples",
    });
    follower.catchUp();
    expect(follower.getMessage(w.bob.id, first.id).message.content).toContain("apples");
    expectCaughtUp(follower, viewers);
    s.sendMessage({ senderId: w.bob.id, to: { type: "direct", users: [w.alice.id] }, content: "a DM" });
    s.sendMessage({ senderId: w.owner.id, to: { type: "channel", channel: "secret", topic: "x" }, content: "psst" });
    expectCaughtUp(follower, viewers);
    s.updateFlags(w.bob.id, [first.id], "read", "add");
    s.updateFlags(w.bob.id, [first.id], "starred", "add");
    s.addReaction(w.owner.id, first.id, { emojiName: "smile" });
    expectCaughtUp(follower, viewers);
    s.updateMessage(w.alice.id, first.id, { content: "edited about bananas" });
    expectCaughtUp(follower, viewers);
    s.updateMessage(w.owner.id, first.id, { topic: "dinner", propagateMode: "change_all" });
    expectCaughtUp(follower, viewers);
    s.subscribe(w.owner.id, { channels: [{ name: "fresh" }], principals: [w.bob.id, w.guest.id] });
    s.unsubscribe(w.owner.id, ["general"], [w.bob.id]);
    expectCaughtUp(follower, viewers);
    const carol = s.createUser({ realmId: w.realm.id, email: "carol@test.dev", fullName: "Carol" });
    s.updateUser(w.owner.id, w.alice.id, { fullName: "Alicia" });
    s.createGroup(w.owner.id, { name: "team", members: [w.alice.id, carol.id] });
    expectCaughtUp(follower, [...viewers, carol]);
    s.setTopicPolicy(w.bob.id, w.general.id, "dinner", 3);
    s.addAlertWords(w.bob.id, ["bananas"]);
    s.muteUser(w.alice.id, w.bob.id);
    s.updateSettings(w.bob.id, { settings: { enter_sends: true } });
    expectCaughtUp(follower, [...viewers, carol]);
    s.setUserActive(carol.id, false);
    await s.deleteMessage(w.owner.id, first.id);
    expectCaughtUp(follower, [...viewers, carol]);
    expect(follower.catchUp()).toEqual({ applied: 0, reloadedAll: false, seq: follower.catchUp().seq });
  });

  it("overlays the writer's deferred bitmap journal, and follows it as it is settled", async () => {
    // Every multi-key bitmap change is deferred: a topic marked read for its readers goes to the journal.
    t = tempStore({ deferBitmapWritesFrom: 2 });
    const w = seedRealm(t.store);
    const s = t.store;
    const follower = follow(s);
    const viewers = [w.owner, w.alice, w.bob];
    const sent = [0, 1, 2, 3, 4].map(
      (i) =>
        s.sendMessage({
          senderId: w.alice.id,
          to: { type: "channel", channel: "general", topic: "t" },
          content: `m${i}`,
        }).id,
    );
    // Readers' read bitmaps exist (and are cached by the follower): the journal's effect must reach them.
    s.updateFlags(w.bob.id, [sent[0]!], "read", "add");
    s.updateFlags(w.owner.id, [sent[1]!], "read", "add");
    expectCaughtUp(follower, viewers);
    // Resolving the topic sends a notice born read for every reader but the participants: journaled.
    const last = internals(s).lastMessageId;
    s.updateMessage(w.owner.id, last, { topic: "✔ t", propagateMode: "change_all" });
    const journal = () => [...internals(s).tables.meta.getKeys({ start: "deferred", end: "deferree" })];
    expect(journal()).toHaveLength(1);
    expectCaughtUp(follower, viewers);
    // The entry lasts (nothing to settle) until a reader's write of their read bitmap settles that key.
    expect(internals(s).bitmaps.hasDeferred).toBe(false);
    const notice = internals(s).lastMessageId;
    s.updateFlags(w.bob.id, [notice], "read", "remove");
    expectCaughtUp(follower, viewers);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expectCaughtUp(follower, viewers);
  });

  it("reloads everything when it fell behind the log's trimming (a gap) or an entry predates followers", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const s = t.store;
    const follower = follow(s);
    expectCaughtUp(follower, [w.alice, w.bob]);
    s.sendMessage({ senderId: w.alice.id, to: { type: "channel", channel: "general", topic: "a" }, content: "one" });
    s.updateUser(w.owner.id, w.bob.id, { fullName: "Robert" });
    s.sendMessage({ senderId: w.bob.id, to: { type: "channel", channel: "general", topic: "a" }, content: "two" });
    // Trimming took the first of them before the follower caught up.
    const tables = internals(s).tables;
    const entries = [...changesSince(tables, 0)];
    tables.env.transactionSync(() => tables.changeLog.removeSync(entries[entries.length - 3]!.seq));
    expect(follower.catchUp().reloadedAll).toBe(true);
    expectCaughtUp(follower, [w.alice, w.bob]);
    expect(follower.getUser(w.bob.id).fullName).toBe("Robert");
    // An entry an older writer wrote: no follower notes.
    s.updateUser(w.owner.id, w.bob.id, { fullName: "Bobby" });
    const newest = [...changesSince(tables, 0)].at(-1)!;
    const { follow: notes, ...older } = newest.entry;
    expect(notes?.rows).toBeDefined();
    tables.env.transactionSync(() => tables.changeLog.putSync(newest.seq, older));
    expect(follower.catchUp().reloadedAll).toBe(true);
    expect(follower.getUser(w.bob.id).fullName).toBe("Bobby");
    expectCaughtUp(follower, [w.alice, w.bob]);
  });

  it("logs a transaction's bitmap keys as one string, or as a list when a key holds the separator", () => {
    t = tempStore();
    for (const keys of [["c:1", "t:1:lunch", "w:appl"], ["t:1:a\0b", "c:1"], ["only"]])
      expect(unpackBitmapKeys(packBitmapKeys(keys))).toEqual(keys);
    expect(typeof packBitmapKeys(["c:1", "s:2"])).toBe("string");
  });

  it("refuses every write with FollowerWriteError and changes nothing", async () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const sent = t.store.sendMessage({
      senderId: w.bob.id,
      to: { type: "channel", channel: "general", topic: "a" },
      content: "unread for alice",
    });
    const follower = follow(t.store);
    const before = fingerprint(follower);
    const presence = [...internals(follower).presence.values()];
    const refused = (fn: () => unknown) => expect(fn).toThrow(FollowerWriteError);
    refused(() =>
      follower.sendMessage({
        senderId: w.alice.id,
        to: { type: "channel", channel: "general", topic: "a" },
        content: "x",
      }),
    );
    refused(() => follower.updateFlags(w.alice.id, [sent.id], "read", "add"));
    refused(() => follower.subscribe(w.alice.id, { channels: [{ name: "mine" }] }));
    refused(() => follower.updatePresence(w.alice.id, "active"));
    refused(() => follower.notifyTyping(w.alice.id, { type: "direct", op: "start", to: [w.bob.id] }));
    refused(() => follower.batch(() => undefined));
    await expect(
      follower.sendMessageGrouped({
        senderId: w.alice.id,
        to: { type: "channel", channel: "general", topic: "a" },
        content: "x",
      }),
    ).rejects.toThrow(FollowerWriteError);
    expect(fingerprint(follower)).toBe(before);
    expect([...internals(follower).presence.values()]).toEqual(presence);
    expect(follower.role).toBe("follower");
  });

  it("joins only its own server's lock: an unrelated server is still refused, and a follower needs a live writer", () => {
    t = tempStore();
    seedRealm(t.store);
    expect(() => openStore(t.dir, { noSync: true })).toThrow(DataDirectoryLockedError);
    expect(() => openFollower(t.dir, { noSync: true, lockToken: "not-the-token" })).toThrow(DataDirectoryLockedError);
    const follower = follow(t.store);
    // A follower holds nothing: the writer's lock still refuses another writer, and closing the follower keeps it.
    follower.close();
    followers.length = 0;
    expect(() => openStore(t.dir, { noSync: true })).toThrow(DataDirectoryLockedError);
    const token = t.store.lockToken;
    t.store.close();
    expect(() => openFollower(t.dir, { noSync: true, lockToken: token })).toThrow(DataDirectoryLockedError);
    t.reopen();
  });
});
