/**
 * flagsForWindow on large windows (intersections, with hits or misses listed, whichever
 * is fewer) against the same function one ID at a time (per-ID probes), for sorted,
 * unsorted and repeated IDs, with flag sets covering none, some, most and all of them.
 */
import { afterEach, describe, expect, it } from "vitest";
import { flagsForWindow } from "../../../src/engine/queries/message-flags.js";
import { ReceivedSets } from "../../../src/engine/received.js";
import { internals } from "../../../src/engine/internal.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

let t: TempStore | null = null;
afterEach(() => {
  t?.cleanup();
  t = null;
});

describe("flagsForWindow", () => {
  it("gives each ID of a large window the flags a single-ID probe gives", () => {
    t = tempStore();
    const w = seedRealm(t.store);
    const ids: number[] = [];
    for (let i = 0; i < 150; i++)
      ids.push(
        t.store.sendMessage({
          senderId: i % 3 === 0 && i % 5 !== 0 ? w.bob.id : w.owner.id,
          to: { type: "channel", channel: i % 5 === 0 ? "secret" : "general", topic: "t" },
          content: i % 7 === 0 ? "hi @**Alice**" : `m${i}`,
          client: "test",
        }).id,
      );
    for (let i = 0; i < 12; i++)
      ids.push(
        t.store.sendMessage({
          senderId: w.bob.id,
          to: { type: "direct", users: [w.alice.id] },
          content: `dm${i}`,
          client: "test",
        }).id,
      );
    // Read: most (misses listed); starred: some (hits listed); collapsed: all of a range.
    t.store.updateFlags(
      w.alice.id,
      ids.filter((_, i) => i % 9 !== 4),
      "read",
      "add",
    );
    t.store.updateFlags(
      w.alice.id,
      ids.filter((_, i) => i % 11 === 2),
      "starred",
      "add",
    );
    t.store.updateFlags(w.alice.id, ids.slice(40, 120), "collapsed", "add");
    const state = internals(t.store);
    const received = new ReceivedSets(state);
    const one = (id: number, allRows: boolean) =>
      flagsForWindow(state, received, w.alice.id, w.realm.id, [id], allRows)[0];
    const windows = [
      ids,
      ids.slice(30, 130),
      [...ids].reverse(),
      [...ids.slice(0, 60), ...ids.slice(10, 40)],
      ids.filter((_, i) => i % 3 === 0),
    ];
    for (const window of windows) {
      for (const allRows of [false, true]) {
        expect(flagsForWindow(state, received, w.alice.id, w.realm.id, window, allRows)).toEqual(
          window.map((id) => one(id, allRows)),
        );
      }
    }
    // The flags really vary across the window (the test would be vacuous otherwise).
    expect(
      new Set(flagsForWindow(state, received, w.alice.id, w.realm.id, ids, false).map((f) => f.join())).size,
    ).toBeGreaterThan(4);
  });
});
