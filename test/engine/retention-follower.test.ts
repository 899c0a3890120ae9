/**
 * The retention pass tells no client (Zulip's retention sends no event), yet a follower
 * store must still learn of each deletion from the write's change set: after catchUp it
 * holds what a follower opened afresh does, the expired messages gone.
 */
import { afterEach, expect, it } from "vitest";
import type { Store } from "../../src/engine/index.js";
import { openFollower } from "../../src/index.js";
import { followerView } from "../support/follower-view.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";

let t: TempStore;
let follower: Store | null = null;
afterEach(() => {
  follower?.close();
  t.cleanup();
});

it("a follower caught up after a retention pass equals a fresh one, without the expired messages", async () => {
  let now = 1_750_000_000;
  t = tempStore({ now: () => now });
  const w = seedRealm(t.store);
  const s = t.store;
  follower = openFollower(t.dir, { noSync: true, lockToken: s.lockToken });
  const ids = [w.owner.id, w.alice.id, w.bob.id, w.guest.id];
  const old = s.sendMessage({
    senderId: w.alice.id,
    to: { type: "channel", channel: "general", topic: "lunch" },
    content: "old news",
  });
  const oldDm = s.sendMessage({ senderId: w.bob.id, to: { type: "direct", users: [w.alice.id] }, content: "old dm" });
  now += 10 * 86_400;
  const recent = s.sendMessage({
    senderId: w.alice.id,
    to: { type: "channel", channel: "general", topic: "lunch" },
    content: "fresh news",
  });
  s.updateRealm(w.owner.id, { properties: { messageRetentionDays: 7 } });
  // Warm the follower's caches with the messages there: the pass must drop them.
  follower.catchUp();
  expect(follower.getMessage(w.bob.id, old.id).message.content).toContain("old news");
  followerView(follower, ids);

  expect(await s.deleteExpiredMessages()).toBe(2);
  follower.catchUp();
  expect(() => follower!.getMessage(w.bob.id, old.id)).toThrow("Invalid message(s)");
  expect(() => follower!.getMessage(w.alice.id, oldDm.id)).toThrow("Invalid message(s)");
  expect(follower.getMessage(w.bob.id, recent.id).message.content).toContain("fresh news");
  const fresh = openFollower(t.dir, { noSync: true, lockToken: s.lockToken });
  try {
    expect(followerView(follower, ids)).toEqual(followerView(fresh, ids));
  } finally {
    fresh.close();
  }
});
