/**
 * The per-realm presence change log: entries after an ID in order, out-of-order
 * appends (loading) sorted, stale entries dropped by compaction.
 */
import { describe, expect, it } from "vitest";
import { PresenceLog } from "../../../src/engine/index/presence-log.js";

const after = (log: PresenceLog, id: number) => {
  const out: [number, number][] = [];
  log.forEachAfter(id, (user, updateId) => out.push([user, updateId]));
  return out;
};

describe("PresenceLog", () => {
  it("lists entries after an ID, in ID order, even when appended out of order", () => {
    const log = new PresenceLog();
    for (const [id, user] of [
      [5, 1],
      [2, 2],
      [9, 3],
      [7, 1],
    ] as const)
      log.append(id, user);
    expect(after(log, -1)).toEqual([
      [2, 2],
      [1, 5],
      [1, 7],
      [3, 9],
    ]);
    expect(after(log, 5)).toEqual([
      [1, 7],
      [3, 9],
    ]);
    expect(after(log, 9)).toEqual([]);
  });

  it("compacts to the live entries once stale ones dominate", () => {
    const log = new PresenceLog();
    const live = new Map<number, number>();
    let id = 0;
    for (let round = 0; round < 1100; round++) {
      for (const user of [1, 2]) {
        log.append(++id, user);
        live.set(user, id);
      }
    }
    log.compactIfStale(2, (user) => live.get(user));
    expect(log.size).toBe(2);
    expect(after(log, -1)).toEqual([
      [1, id - 1],
      [2, id],
    ]);
  });
});
