/**
 * The holders of each per-user flag bitmap (index/user-flag-holders): listed in the
 * write that first gives a user the bitmap, undone with a failed write, built once for
 * a store written before they existed, checked by verify; and readers of a message's
 * flags for many users (an edit's event) no longer read the bitmaps of users who hold none.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { EngineEvent, User } from "../../../src/engine/index.js";
import { internals } from "../../../src/engine/internal.js";
import { key } from "../../../src/engine/index/keys.js";
import { USER_FLAG_HOLDERS_KEY } from "../../../src/engine/index/user-flag-holders.js";
import { TOPIC_POLICY_HOLDERS_KEY } from "../../../src/engine/index/topic-policy-holders.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

let t: TempStore;
afterEach(() => t?.cleanup());

const holders = (flag: "starred" | "read" | "collapsed") =>
  [...internals(t.store).bitmaps.loadFromDisk(key.userFlagHolders(flag))].sort((a, b) => a - b);

function setup() {
  t = tempStore();
  const seed = seedRealm(t.store);
  const send = (sender: User, content: string) =>
    t.store.sendMessage({ senderId: sender.id, to: { type: "channel", channel: "general", topic: "t" }, content }).id;
  return { ...seed, send };
}

describe("user flag holders", () => {
  it("list a user in the write that gives them a flag bitmap, and keep them listed", () => {
    const { alice, bob, send } = setup();
    const id = send(bob, "hello");
    expect(holders("starred")).toEqual([]);
    t.store.updateFlags(alice.id, [id], "starred", "add");
    t.store.updateFlags(bob.id, [id], "read", "add");
    expect(holders("starred")).toEqual([alice.id]);
    // A superset: unstarring leaves the listing, which only ever says "may hold".
    t.store.updateFlags(alice.id, [id], "starred", "remove");
    expect(holders("starred")).toEqual([alice.id]);
    expect(holders("read")).toContain(bob.id);
  });

  it("are undone with a write that fails", () => {
    const { alice, bob, send } = setup();
    const id = send(bob, "hello");
    const state = internals(t.store);
    expect(() =>
      state.write(() => {
        state.bitmaps.add(key.userFlag(alice.id, "collapsed"), id);
        throw new Error("abort");
      }),
    ).toThrow("abort");
    expect(holders("collapsed")).toEqual([]);
    expect(state.bitmaps.get(key.userFlagHolders("collapsed")).has(alice.id)).toBe(false);
    // The memo of listed keys went with it: the next write lists the user again.
    t.store.updateFlags(alice.id, [id], "collapsed", "add");
    expect(holders("collapsed")).toEqual([alice.id]);
  });

  it("are built at the first open of a store written without them, and verify finds one missing", () => {
    const { alice, bob, send } = setup();
    const id = send(bob, "hello");
    t.store.updateFlags(alice.id, [id], "starred", "add");
    t.store.updateFlags(bob.id, [id], "read", "add");
    // Make it a store from before the holders: no holder bitmaps, no marker.
    const state = internals(t.store);
    state.tables.env.transactionSync(() => {
      for (const k of [...state.tables.bitmapChunks.getKeys({ start: ["uh:"], end: ["uh;"] })])
        state.tables.bitmapChunks.removeSync(k);
      state.tables.meta.removeSync(USER_FLAG_HOLDERS_KEY);
      // Every uh: bitmap went, the topic policies' holders too: a store from before both.
      state.tables.meta.removeSync(TOPIC_POLICY_HOLDERS_KEY);
    });
    expect(holders("starred")).toEqual([]);
    t.reopen();
    expect(holders("starred")).toEqual([alice.id]);
    expect(holders("read")).toContain(bob.id);
    expect(t.store.verify().problems).toEqual([]);

    const reopened = internals(t.store);
    reopened.tables.env.transactionSync(() => {
      for (const k of [...reopened.tables.bitmapChunks.getKeys({ start: ["uh:starred"], end: ["uh:starred\u0000"] })])
        reopened.tables.bitmapChunks.removeSync(k);
    });
    expect(t.store.verify().problems).toEqual([
      `user ${alice.id} has a starred bitmap that ${key.userFlagHolders("starred")} does not list`,
    ]);
  });

  it("let the bitmap store read a key its holders do not list as empty, without touching the disk", () => {
    const { alice, bob, send } = setup();
    const id = send(bob, "hello");
    t.store.updateFlags(alice.id, [id], "starred", "add");
    const state = internals(t.store);
    state.bitmaps.clearCache();
    state.bitmaps.get(key.userFlagHolders("starred"));
    const reads = [
      vi.spyOn(state.tables.bitmapChunks, "getRange"),
      vi.spyOn(state.tables.bitmapChunks, "getKeys"),
      vi.spyOn(state.tables.bitmapChunks, "doesExist"),
    ];
    const bobs = key.userFlag(bob.id, "starred");
    expect(state.bitmaps.get(bobs).isEmpty).toBe(true);
    expect(state.bitmaps.getFrom(bobs, id).isEmpty).toBe(true);
    expect(state.bitmaps.isEmpty(bobs)).toBe(true);
    expect(state.bitmaps.holdsAnyIn(bobs, 1, id)).toBe(false);
    for (const read of reads) expect(read).not.toHaveBeenCalled();
    // Nothing cached for it either, and a listed key is still read.
    expect(state.bitmaps.cachedKeys()).not.toContain(bobs);
    expect([...state.bitmaps.get(key.userFlag(alice.id, "starred"))]).toEqual([id]);
    // A first ID written to an unlisted key lists it, and the write persists.
    t.store.updateFlags(bob.id, [id], "starred", "add");
    state.bitmaps.clearCache();
    expect([...state.bitmaps.get(bobs)]).toEqual([id]);
    expect(holders("starred")).toEqual([alice.id, bob.id].sort((a, b) => a - b));
  });

  it("spare an edit's event the flag bitmaps of recipients who hold none", () => {
    const { owner, alice, bob, send } = setup();
    const id = send(bob, "hello");
    t.store.updateFlags(alice.id, [id], "starred", "add");
    t.store.updateFlags(bob.id, [id], "read", "add");
    const state = internals(t.store);
    state.bitmaps.clearCache();
    const seen: EngineEvent[] = [];
    t.store.onEvents((batch) => seen.push(...batch.deliveries.map((d) => d.event)));
    t.store.updateMessage(bob.id, id, { content: "hello again" });
    const edit = seen.find((e) => e.type === "update_message");
    if (edit?.type !== "update_message") throw new Error("no update_message event");
    expect(edit.flagsFor(alice.id)).toEqual(["starred"]);
    expect(edit.flagsFor(owner.id)).toEqual([]);
    expect(edit.flagsFor(bob.id)).toEqual(["read"]);
    const cached = new Set(state.bitmaps.cachedKeys());
    // Only Alice holds a starred bitmap; nobody a collapsed, alert-word or moved-row one.
    expect(cached.has(key.userFlag(alice.id, "starred"))).toBe(true);
    for (const user of [owner, bob])
      for (const flag of ["starred", "collapsed", "has_alert_word", "historical", "granted", "withdrawn"] as const)
        expect(cached.has(key.userFlag(user.id, flag)), `${user.fullName} ${flag}`).toBe(false);
  });
});
