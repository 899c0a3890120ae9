/**
 * BitmapStore's deferred writes (addDeferred, removeDeferred; index/deferred-writes.ts):
 * readers see them at once, cached or not; later writes settle them; any write of a
 * journaled key settles it exactly; a failed write leaves nothing; a store opened on the
 * journal (a crash before settling) reads the same; and random sequences of every kind
 * of write agree with a plain model in memory, on disk and after a reopen.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { BitmapStore, RoaringBitmap32, type ReadonlyBitmap } from "../../../src/engine/index/bitmap-store.js";
import { internals } from "../../../src/engine/internal.js";
import { MAX_LASTING_ENTRIES } from "../../../src/engine/index/deferred-writes.js";
import { key } from "../../../src/engine/index/keys.js";
import type { StoreState } from "../../../src/engine/state.js";
import { tempStore, type TempStore } from "../../support/temp-store.js";

const CHUNK = 1 << 16;

let t: TempStore;
afterEach(() => t?.cleanup());

const ids = (...list: number[]) => new RoaringBitmap32(list);
const arr = (b: ReadonlyBitmap) => [...b];

/** What a store opened on these tables now reads (a process that crashed before settling). */
function fresh(state: StoreState): BitmapStore {
  return new BitmapStore(state.tables, { deferFrom: 1 });
}

/** A store that defers from one key on (the engine's threshold is DEFER_KEYS_FROM). */
const deferring = () => tempStore({ deferBitmapWritesFrom: 1 });

function settleAll(state: StoreState): number {
  let writes = 0;
  while (state.bitmaps.hasDeferred) {
    state.write(() => state.bitmaps.settleDeferred(2));
    writes++;
  }
  return writes;
}

describe("deferred bitmap writes", () => {
  it("are read at once from cached and uncached keys, survive a crash as a journal, and settle a slice a write", () => {
    t = deferring();
    const state = internals(t.store);
    const b = state.bitmaps;
    state.write(() => void b.addMany("k:cached", [1, 2, CHUNK + 3]));
    state.write(() => void b.addMany("k:cold", [7]));
    b.clearCache();
    b.get("k:cached");
    const keys = ["k:cached", "k:cold", "k:new", "k:new2", "k:new3"];
    state.write(() => b.addDeferred(keys, ids(5, 2 * CHUNK + 1)));
    expect(b.hasDeferred).toBe(true);
    expect(arr(b.get("k:cached"))).toEqual([1, 2, 5, CHUNK + 3, 2 * CHUNK + 1]);
    expect(arr(b.get("k:cold"))).toEqual([5, 7, 2 * CHUNK + 1]);
    expect(arr(b.get("k:new"))).toEqual([5, 2 * CHUNK + 1]);
    expect(b.holdsAnyIn("k:new2", 2 * CHUNK, 3 * CHUNK)).toBe(true);
    expect(b.isEmpty("k:new3")).toBe(false);
    // Nothing of it in the chunks yet: only the journal has it.
    expect([...state.tables.bitmapChunks.getKeys({ start: ["k:new"], end: ["k:new\u0000"] })]).toEqual([]);
    const crashed = fresh(state);
    expect(arr(crashed.get("k:cold"))).toEqual([5, 7, 2 * CHUNK + 1]);
    expect(arr(crashed.loadFromDisk("k:new3"))).toEqual([5, 2 * CHUNK + 1]);

    expect(settleAll(state)).toBe(3);
    const after = fresh(state);
    expect(after.hasDeferred).toBe(false);
    expect(arr(after.get("k:cached"))).toEqual([1, 2, 5, CHUNK + 3, 2 * CHUNK + 1]);
    expect(arr(after.get("k:new3"))).toEqual([5, 2 * CHUNK + 1]);
    expect([...state.tables.meta.getKeys({ start: "deferred", end: "deferree" })]).toEqual([]);
  });

  it("a write of a journaled key settles it, with whatever the write changed, and leaves the others journaled", () => {
    t = deferring();
    const state = internals(t.store);
    const b = state.bitmaps;
    state.write(() => void b.addMany("k:a", [1, 2, 3]));
    state.write(() => b.addDeferred(["k:a", "k:b", "k:c"], ids(10, 11)));
    // Marking one of them unread again, and a change in another chunk of a second key.
    state.write(() => {
      b.removeMany("k:a", [10]);
      b.add("k:b", CHUNK + 1);
    });
    const crashed = fresh(state);
    expect(arr(crashed.get("k:a"))).toEqual([1, 2, 3, 11]);
    expect(arr(crashed.get("k:b"))).toEqual([10, 11, CHUNK + 1]);
    expect(arr(crashed.get("k:c"))).toEqual([10, 11]);
    // Only k:c is left to settle: the other two were written whole where journaled.
    expect(settleAll(state)).toBe(1);
    b.clearCache();
    expect(arr(b.get("k:a"))).toEqual([1, 2, 3, 11]);
    expect(arr(b.get("k:b"))).toEqual([10, 11, CHUNK + 1]);
  });

  it("removeDeferred after addDeferred applies in order, over partly loaded entries too", () => {
    t = deferring();
    const state = internals(t.store);
    const b = state.bitmaps;
    state.write(() => void b.addMany("k:p", [1, CHUNK + 1, 2 * CHUNK + 1]));
    b.clearCache();
    b.getFrom("k:p", 2 * CHUNK);
    state.write(() => b.addDeferred(["k:p", "k:q"], ids(2, CHUNK + 2, 2 * CHUNK + 2)));
    state.write(() => b.removeDeferred(["k:p", "k:q"], ids(1, CHUNK + 2, 2 * CHUNK + 1)));
    const want = [2, CHUNK + 1, 2 * CHUNK + 2];
    expect(arr(b.get("k:p"))).toEqual(want);
    expect(arr(b.get("k:q"))).toEqual([2, 2 * CHUNK + 2]);
    expect(arr(fresh(state).get("k:p"))).toEqual(want);
    settleAll(state);
    expect(arr(fresh(state).get("k:p"))).toEqual(want);
    expect(arr(fresh(state).get("k:q"))).toEqual([2, 2 * CHUNK + 2]);
  });

  it("a failed write leaves no journal and no trace in memory, even in bitmaps it loaded after deferring", () => {
    t = deferring();
    const state = internals(t.store);
    const b = state.bitmaps;
    state.write(() => void b.addMany("k:x", [1]));
    b.clearCache();
    expect(() =>
      state.write(() => {
        b.addDeferred(["k:x", "k:y"], ids(9));
        expect(arr(b.get("k:x"))).toEqual([1, 9]);
        throw new Error("abort");
      }),
    ).toThrow("abort");
    expect(b.hasDeferred).toBe(false);
    expect(arr(b.get("k:x"))).toEqual([1]);
    expect(arr(b.get("k:y"))).toEqual([]);
    expect(fresh(state).hasDeferred).toBe(false);
  });

  it("the store settles what a crash left at open", () => {
    t = deferring();
    const state = internals(t.store);
    state.write(() => state.bitmaps.addDeferred(["k:1", "k:2"], ids(4)));
    // Closing settles too; a crash would not: close as a crash leaves it.
    state.settleDeferredBitmaps = () => undefined;
    const journal = [...state.tables.meta.getKeys({ start: "deferred", end: "deferree" })];
    expect(journal).toHaveLength(1);
    const reopened = internals(t.reopen());
    expect([...reopened.tables.meta.getKeys({ start: "deferred", end: "deferree" })]).toEqual([]);
    expect(reopened.bitmaps.hasDeferred).toBe(false);
    expect(arr(reopened.bitmaps.loadFromDisk("k:2"))).toEqual([4]);
  });

  it("names thousands of per-user flag keys by user ID, as an overlay that lasts until a write of one of them", () => {
    t = deferring();
    const state = internals(t.store);
    const b = state.bitmaps;
    const readKeys = Array.from({ length: 3000 }, (_, i) => key.userFlag(i + 1, "read"));
    state.write(() => void b.addMany(key.userFlag(5, "read"), [1, 2]));
    b.clearCache();
    b.get(key.userFlag(6, "read"));
    state.write(() => b.addDeferred([...readKeys, key.userFlag(9, "starred")], ids(77)));
    const journal = () => [...state.tables.meta.getRange({ start: "deferred", end: "deferree" })];
    expect(journal()).toHaveLength(1);
    const stored = journal()[0]!.value as { keys: string[]; users: [string, Uint8Array][] };
    // The 3,001 keys as two small bitmaps of user IDs, not as 3,001 strings.
    expect(stored.keys).toEqual([]);
    expect(stored.users.map(([flag]) => flag).sort()).toEqual(["read", "starred"]);
    expect(stored.users.reduce((n, [, bytes]) => n + bytes.length, 0)).toBeLessThan(200);
    // Nothing to settle: the entry stays, read by every load (cached, cold, or another process's).
    expect(b.hasDeferred).toBe(false);
    expect(arr(b.get(key.userFlag(5, "read")))).toEqual([1, 2, 77]);
    expect(arr(b.get(key.userFlag(6, "read")))).toEqual([77]);
    expect(arr(fresh(state).get(key.userFlag(3000, "read")))).toEqual([77]);
    expect(arr(fresh(state).get(key.userFlag(3001, "read")))).toEqual([]);
    expect(arr(fresh(state).get(key.userFlag(9, "starred")))).toEqual([77]);
    expect(arr(fresh(state).get(key.userFlag(10, "starred")))).toEqual([]);
    // A write of one key settles that key: marking the message unread again sticks, here and after a reopen.
    state.write(() => void b.removeMany(key.userFlag(7, "read"), [77]));
    expect(arr(b.get(key.userFlag(7, "read")))).toEqual([]);
    expect(arr(fresh(state).get(key.userFlag(7, "read")))).toEqual([]);
    const reopened = internals(t.reopen());
    expect(reopened.bitmaps.hasDeferred).toBe(false);
    expect([...reopened.tables.meta.getKeys({ start: "deferred", end: "deferree" })]).toHaveLength(1);
    expect(arr(reopened.bitmaps.get(key.userFlag(7, "read")))).toEqual([]);
    expect(arr(reopened.bitmaps.get(key.userFlag(8, "read")))).toEqual([77]);
    expect(arr(reopened.bitmaps.get(key.userFlag(5, "read")))).toEqual([1, 2, 77]);
  });

  it("addDeferredForUsers (user IDs) journals, lists and reads exactly as addDeferred on the users' keys", () => {
    const users = [...Array.from({ length: 3000 }, (_, i) => i + 1), 5000];
    // The same writes through each API: one user's bitmap cached with the ID already in it, one cached without.
    const run = (viaUsers: boolean) => {
      const store = deferring();
      const state = internals(store.store);
      const b = state.bitmaps;
      state.write(() => void b.addMany(key.userFlag(5, "read"), [1, 2, 77]));
      state.write(() => void b.addMany(key.userFlag(6, "read"), [1]));
      b.clearCache();
      b.get(key.userFlag(5, "read"));
      b.get(key.userFlag(6, "read"));
      state.write(() =>
        viaUsers
          ? b.addDeferredForUsers("read", users, ids(77))
          : b.addDeferred(
              users.map((u) => key.userFlag(u, "read")),
              ids(77),
            ),
      );
      const journal = [...state.tables.meta.getRange({ start: "deferred", end: "deferree" })].map(({ key, value }) => {
        const { users: byFlag, ...rest } = value as { users: [string, Uint8Array][] };
        return {
          key,
          ...rest,
          users: byFlag.map(([flag, bytes]) => [
            flag,
            [...RoaringBitmap32.deserialize(Buffer.from(bytes), "portable")],
          ]),
        };
      });
      const reads = [5, 6, 7, 3000, 3001, 5000].map((u) => [
        arr(b.get(key.userFlag(u, "read"))),
        arr(fresh(state).get(key.userFlag(u, "read"))),
      ]);
      const holders = arr(fresh(state).get(key.userFlagHolders("read")));
      store.cleanup();
      return { journal, reads, holders, deferred: b.hasDeferred };
    };
    const viaUsers = run(true);
    expect(viaUsers).toEqual(run(false));
    // User 5 held the ID already (cached whole): not journaled; every other user is, and listed as a holder.
    const journaled = viaUsers.journal[0]!.users[0]![1] as number[];
    expect(journaled).toEqual(users.filter((u) => u !== 5));
    expect(viaUsers.holders).toEqual(expect.arrayContaining(users));
    expect(viaUsers.reads).toEqual([
      [
        [1, 2, 77],
        [1, 2, 77],
      ],
      [
        [1, 77],
        [1, 77],
      ],
      [[77], [77]],
      [[77], [77]],
      [[], []],
      [[77], [77]],
    ]);
  });

  it("addDeferredForUsers reaches every user key held in memory (cached, versioned, marked absent), also after many left the cache", () => {
    t = deferring();
    const state = internals(t.store);
    const b = state.bitmaps;
    const read = (u: number) => key.userFlag(u, "read");
    const everyone = Array.from({ length: 2000 }, (_, i) => i + 1);
    const stored = [...everyone.slice(0, 1500), 1700];
    // 1,501 cached keys; then 1,451 of them leave the cache (a follower's forgetKeys), past the rebuild threshold.
    state.write(() => {
      for (const u of stored) b.add(read(u), 1);
    });
    for (const u of stored) b.get(read(u));
    b.forgetKeys([...everyone.slice(50, 1500), 1700].map(read));
    // Versioned without a cached entry (a derived cache asked), and marked absent (a deletion's probe of a key
    // with no chunk at all); a probe of a chunk the key never had marks nothing (it has others).
    const v0 = b.version(read(1600));
    expect(b.removeStored(read(1700), [5 * CHUNK])).toEqual([]);
    expect(b.removeStored(read(1800), [5 * CHUNK])).toEqual([]);
    state.write(() => b.addDeferredForUsers("read", everyone, ids(77)));
    // Cached: the entry in memory has it (a stale cached bitmap would answer [1]).
    expect(arr(b.get(read(10)))).toEqual([1, 77]);
    expect(b.version(read(1600))).not.toBe(v0);
    // The absent mark went: a deletion of the ID reaches the key.
    expect(state.write(() => b.removeStored(read(1700), [77]))).toEqual([77]);
    expect(arr(b.get(read(1700)))).toEqual([1]);
    expect(arr(fresh(state).get(read(1700)))).toEqual([1]);
    expect(arr(b.get(read(1000)))).toEqual([1, 77]);
    expect(arr(b.get(read(1999)))).toEqual([77]);
    expect(arr(fresh(state).get(read(1999)))).toEqual([77]);
    expect(state.write(() => b.removeStored(read(1800), [77]))).toEqual([77]);
    // Loaded since (no rebuild in between): cached, and so reached.
    state.write(() => b.addDeferredForUsers("read", everyone, ids(78)));
    expect(arr(b.get(read(1999)))).toEqual([77, 78]);
    expect(arr(fresh(state).get(read(1999)))).toEqual([77, 78]);
  });

  it("settles the oldest lasting entries once there are more than MAX_LASTING_ENTRIES", () => {
    t = deferring();
    const state = internals(t.store);
    const b = state.bitmaps;
    const readers = [key.userFlag(1, "read"), key.userFlag(2, "read")];
    for (let i = 0; i <= MAX_LASTING_ENTRIES; i++) state.write(() => b.addDeferred(readers, ids(100 + i)));
    const entries = () => [...state.tables.meta.getKeys({ start: "deferred", end: "deferree" })].length;
    expect(entries()).toBe(MAX_LASTING_ENTRIES + 1);
    expect(b.hasDeferred).toBe(true);
    // One slice settles the oldest entry's two keys, which leave every entry: the others went with them.
    state.write(() => b.settleDeferred(500));
    expect(b.hasDeferred).toBe(false);
    expect(entries()).toBe(0);
    const all = Array.from({ length: MAX_LASTING_ENTRIES + 1 }, (_, i) => 100 + i);
    expect(arr(fresh(state).get(readers[0]!))).toEqual(all);
    state.write(() => b.addDeferred([key.userFlag(3, "read")], ids(500)));
    expect(b.hasDeferred).toBe(false);
    expect(entries()).toBe(1);
  });

  it("random sequences of writes agree with a model in memory, in a crashed store's view and after settling", () => {
    // Plain keys and per-user flag keys (journaled as user IDs, lasting when only those) of two flags.
    const KEYS = ["r:a", "r:b", key.userFlag(7, "read"), key.userFlag(8, "read"), key.userFlag(7, "starred")];
    // Few IDs over three chunks, so that writes of every kind meet on the same IDs.
    const id = fc.constantFrom(1, 2, 3, CHUNK + 1, CHUNK + 2, 2 * CHUNK + 5, 2 * CHUNK + 6, 3 * CHUNK - 1);
    const someKeys = fc.subarray(KEYS, { minLength: 1 });
    const op = fc.oneof(
      fc.record({
        kind: fc.constant("add" as const),
        key: fc.constantFrom(...KEYS),
        ids: fc.array(id, { maxLength: 4 }),
      }),
      fc.record({
        kind: fc.constant("remove" as const),
        key: fc.constantFrom(...KEYS),
        ids: fc.array(id, { maxLength: 4 }),
      }),
      fc.record({
        kind: fc.constant("addDeferred" as const),
        keys: someKeys,
        ids: fc.array(id, { minLength: 1, maxLength: 4 }),
      }),
      fc.record({
        kind: fc.constant("removeDeferred" as const),
        keys: someKeys,
        ids: fc.array(id, { minLength: 1, maxLength: 4 }),
      }),
      fc.record({ kind: fc.constant("settle" as const), keys: fc.integer({ min: 1, max: 3 }) }),
      fc.record({
        kind: fc.constant("fail" as const),
        key: fc.constantFrom(...KEYS),
        ids: fc.array(id, { maxLength: 3 }),
      }),
      fc.record({ kind: fc.constant("clearCache" as const) }),
      fc.record({ kind: fc.constant("partialLoad" as const), key: fc.constantFrom(...KEYS) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 25 }), (ops) => {
        const store = deferring();
        try {
          const state = internals(store.store);
          const b = state.bitmaps;
          const model = new Map<string, Set<number>>(KEYS.map((k) => [k, new Set()]));
          for (const o of ops) {
            if (o.kind === "add") {
              state.write(() => void b.addMany(o.key, o.ids));
              for (const x of o.ids) model.get(o.key)!.add(x);
            } else if (o.kind === "remove") {
              state.write(() => void b.removeMany(o.key, o.ids));
              for (const x of o.ids) model.get(o.key)!.delete(x);
            } else if (o.kind === "addDeferred" || o.kind === "removeDeferred") {
              const set = new RoaringBitmap32(o.ids);
              state.write(() =>
                o.kind === "addDeferred" ? b.addDeferred(o.keys, set) : b.removeDeferred(o.keys, set),
              );
              for (const k of o.keys)
                for (const x of o.ids) {
                  if (o.kind === "addDeferred") model.get(k)!.add(x);
                  else model.get(k)!.delete(x);
                }
            } else if (o.kind === "settle") {
              if (b.hasDeferred) state.write(() => b.settleDeferred(o.keys));
            } else if (o.kind === "fail") {
              try {
                state.write(() => {
                  b.addDeferred([o.key], new RoaringBitmap32([...o.ids, 1]));
                  b.removeMany(o.key, o.ids);
                  b.get(o.key);
                  throw new Error("abort");
                });
              } catch {
                // The failure is the point: nothing may change.
              }
            } else if (o.kind === "clearCache") b.clearCache();
            else b.getFrom(o.key, 2 * CHUNK);
            for (const k of KEYS) {
              const want = [...model.get(k)!].sort((x, y) => x - y);
              if (arr(b.get(k)).join() !== want.join()) return false;
              if (arr(fresh(state).get(k)).join() !== want.join()) return false;
            }
          }
          settleAll(state);
          const settled = fresh(state);
          if (settled.hasDeferred) return false;
          return KEYS.every((k) => arr(settled.get(k)).join() === [...model.get(k)!].sort((x, y) => x - y).join());
        } finally {
          store.cleanup();
        }
      }),
      { numRuns: 60 },
    );
  });
});
