import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  DELTA_LIMIT,
  MAX_KEY_NAME_BYTES,
  SMALL_CHUNK_IDS,
  maximumOfPortable,
  RoaringBitmap32,
  serializeChunk,
  subtractInPlace,
} from "../../../src/engine/index/bitmap-store.js";
import { internals } from "../../../src/engine/internal.js";
import { foldName, foldTopic, key } from "../../../src/engine/index/keys.js";
import { SCHEMA_VERSION } from "../../../src/engine/storage/tables.js";
import type { Store } from "../../../src/engine/index.js";
import { tempStore, type TempStore } from "../../support/temp-store.js";

const K = "test:k";
const CHUNK = 1 << 16;

/** Every persisted non-empty chunk of `name`, as [chunk, ids]: its base XOR its delta, decoded from disk by hand. */
function chunksOf(store: Store, name: string): [number, number[]][] {
  const chunks = new Map<number, Set<number>>();
  const at = (chunk: number) => chunks.get(chunk) ?? chunks.set(chunk, new Set()).get(chunk)!;
  for (const { key: k, value } of internals(store).tables.bitmapChunks.getRange({
    start: [name, 0],
    end: [name, CHUNK],
  })) {
    const ids = at(k[1]);
    if (k.length === 2) for (const id of RoaringBitmap32.deserialize(value, "portable").toArray()) ids.add(id);
    else
      for (let i = 0; i < value.length; i += 2) {
        const id = k[1] * CHUNK + Buffer.from(value).readUInt16LE(i);
        if (!ids.delete(id)) ids.add(id);
      }
  }
  return [...chunks].filter(([, ids]) => ids.size > 0).map(([chunk, ids]) => [chunk, [...ids].sort((a, b) => a - b)]);
}

/** Which entries `name` has on disk: "c" for a chunk's base, "c+" for its delta. */
function layoutOf(store: Store, name: string): string[] {
  return [...internals(store).tables.bitmapChunks.getKeys({ start: [name, 0], end: [name, CHUNK] })].map(
    (k) => `${k[1]}${k.length === 3 ? "+" : ""}`,
  );
}

/** Raw persisted bytes of every chunk of every key, hex-encoded. */
function diskImage(store: Store): string[] {
  const out: string[] = [];
  for (const { key: k, value } of internals(store).tables.bitmapChunks.getRange())
    out.push(`${k[0]}#${k[1]}=${Buffer.from(value).toString("hex")}`);
  return out;
}

describe("BitmapStore chunked persistence", () => {
  let t: TempStore;
  beforeEach(() => {
    t = tempStore();
  });
  afterEach(() => {
    vi.restoreAllMocks();
    t.cleanup();
  });

  const ids = [1, 2, 65535, 65536, 65537, 5 * CHUNK + 17, 0xffffffff];

  it("persists bits from several 2^16 chunks, one LMDB entry per non-empty chunk", () => {
    const s = t.store;
    internals(s).write(() => {
      expect(internals(s).bitmaps.addMany(K, ids)).toEqual(ids);
    });
    expect(chunksOf(s, K)).toEqual([
      [0, [1, 2, 65535]],
      [1, [65536, 65537]],
      [5, [5 * CHUNK + 17]],
      [65535, [0xffffffff]],
    ]);
    internals(s).bitmaps.clearCache();
    expect(internals(s).bitmaps.cachedBytes).toBe(0);
    expect(internals(s).bitmaps.get(K).toArray()).toEqual(ids);
    const reopened = t.reopen();
    expect(internals(reopened).bitmaps.get(K).toArray()).toEqual(ids);
    expect(internals(reopened).bitmaps.loadFromDisk(K).toArray()).toEqual(ids);
    expect([...internals(reopened).bitmaps.persistedKeys()]).toEqual([K]);
  });

  it("keys that share a prefix stay separate on disk", () => {
    const s = t.store;
    internals(s).write(() => {
      internals(s).bitmaps.addMany("p", [1, CHUNK]);
      internals(s).bitmaps.addMany("p2", [2]);
      internals(s).bitmaps.addMany("p:x", [3, 2 * CHUNK]);
      internals(s).bitmaps.addMany("o", [4]);
    });
    internals(s).bitmaps.clearCache();
    expect(internals(s).bitmaps.get("p").toArray()).toEqual([1, CHUNK]);
    expect(internals(s).bitmaps.loadFromDisk("p2").toArray()).toEqual([2]);
    expect(internals(s).bitmaps.loadFromDisk("p:x").toArray()).toEqual([3, 2 * CHUNK]);
    expect([...internals(s).bitmaps.persistedKeys()]).toEqual(["o", "p", "p2", "p:x"]);
  });

  it("an unknown key is empty and persists nothing", () => {
    const s = t.store;
    expect(internals(s).bitmaps.get("nope").size).toBe(0);
    internals(s).write(() => undefined);
    expect(chunksOf(s, "nope")).toEqual([]);
  });

  it("add/addMany/removeMany report only actual changes", () => {
    const s = t.store;
    internals(s).write(() => {
      const b = internals(s).bitmaps;
      expect(b.add(K, 10)).toBe(true);
      expect(b.add(K, 10)).toBe(false);
      expect(b.addMany(K, [9, 10, 11])).toEqual([9, 11]);
      expect(b.removeMany(K, [11, 12])).toEqual([11]);
    });
    expect(internals(s).bitmaps.get(K).toArray()).toEqual([9, 10]);
    expect(chunksOf(s, K)).toEqual([[0, [9, 10]]]);
  });

  it("an update writes only the deltas of the big chunks it touched; small chunks and deltas past their limit are rewritten whole", () => {
    const s = t.store;
    const b = internals(s).bitmaps;
    // Chunk 0 is big (over SMALL_CHUNK_IDS); chunks 1 and 3 are small.
    const big = Array.from({ length: SMALL_CHUNK_IDS + 100 }, (_, i) => 2 * i + 1);
    internals(s).write(() => void b.addMany(K, [...big, CHUNK + 1, 3 * CHUNK + 1]));
    expect(layoutOf(s, K)).toEqual(["0", "1", "3"]);
    const put = vi.spyOn(internals(s).tables.bitmapChunks, "putSync");
    const remove = vi.spyOn(internals(s).tables.bitmapChunks, "removeSync");
    internals(s).write(() => {
      b.add(K, 2);
      b.add(K, CHUNK + 2);
      b.removeMany(K, [3 * CHUNK + 1]);
    });
    // Chunk 0 gains a delta beside its untouched base; chunk 1 is rewritten; chunk 3 is emptied.
    expect(put.mock.calls.map((c) => c[0])).toEqual([
      [K, 0, 1],
      [K, 1],
    ]);
    expect(remove.mock.calls.map((c) => c[0])).toEqual([[K, 3]]);
    expect(layoutOf(s, K)).toEqual(["0", "0+", "1"]);
    expect(chunksOf(s, K)).toEqual([
      [0, [1, 2, ...big.slice(1)]],
      [1, [CHUNK + 1, CHUNK + 2]],
    ]);
    put.mockClear();
    // A write that changes no bitmap writes no chunk at all.
    internals(s).write(() => void b.add(K, 1));
    expect(put).not.toHaveBeenCalled();
    // An ID added and removed in one write flips nothing.
    internals(s).write(() => {
      b.add(K, 4);
      b.removeMany(K, [4]);
    });
    expect(layoutOf(s, K)).toEqual(["0", "0+", "1"]);
    // Removing the ID the delta added empties the delta: only the base is left.
    internals(s).write(() => void b.removeMany(K, [2]));
    expect(layoutOf(s, K)).toEqual(["0", "1"]);
    // DELTA_LIMIT single changes fit the delta; one more folds it into a new base.
    const evens = Array.from({ length: DELTA_LIMIT + 1 }, (_, i) => 2 * i + 2);
    for (const id of evens.slice(0, DELTA_LIMIT)) internals(s).write(() => void b.add(K, id));
    expect(layoutOf(s, K)).toEqual(["0", "0+", "1"]);
    internals(s).write(() => void b.add(K, evens[DELTA_LIMIT]!));
    expect(layoutOf(s, K)).toEqual(["0", "1"]);
    b.clearCache();
    expect(b.get(K).toArray()).toEqual(
      [...new Set([...big, ...evens])].sort((x, y) => x - y).concat([CHUNK + 1, CHUNK + 2]),
    );
  });

  it("deltas and bases agree with memory after any sequence of writes, failed ones included (randomized)", () => {
    const s = t.store;
    const b = internals(s).bitmaps;
    let seed = 7;
    // mulberry32: a linear congruential generator's low bits repeat too soon here.
    const rand = (n: number) => {
      seed = (seed + 0x6d2b79f5) | 0;
      let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
      return ((x ^ (x >>> 14)) >>> 0) % n;
    };
    const model = new Map<string, Set<number>>();
    const keys = ["r:a", "r:b", "r:c"];
    for (let step = 0; step < 400; step++) {
      const k = keys[rand(keys.length)]!;
      const fail = rand(10) === 0;
      // Chunks of up to 3000 IDs: some grow past SMALL_CHUNK_IDS (deltas), some stay small (rewritten).
      const change = Array.from(
        { length: rand(5) === 0 ? 300 + rand(900) : 1 + rand(4) },
        () => rand(3) * CHUNK + rand(rand(2) === 0 ? 3000 : 600),
      );
      const adding = rand(3) !== 0;
      const single = rand(2) === 0;
      const peek = rand(4) === 0;
      const apply = () => {
        if (adding && change.length > 20 && rand(2) === 0) b.addBitmap(k, new RoaringBitmap32(change));
        // One ID at a time: on a key not cached, add() loads only the chunks from the ID's on.
        else if (adding && single) for (const id of change) b.add(k, id);
        else if (adding) b.addMany(k, change);
        else b.removeMany(k, change);
        // A read inside the write loads the older chunks under the write's own changes.
        if (peek) expect(b.get(k).size).toBeGreaterThanOrEqual(adding ? new Set(change).size : 0);
      };
      if (fail) {
        expect(() =>
          internals(s).write(() => {
            apply();
            throw new Error("boom");
          }),
        ).toThrow("boom");
        continue;
      }
      internals(s).write(apply);
      const set = model.get(k) ?? new Set<number>();
      for (const id of change)
        if (adding) set.add(id);
        else set.delete(id);
      model.set(k, set);
      if (rand(20) === 0) b.clearCache();
      if (step % 25 === 0) {
        for (const x of keys) {
          expect(b.loadFromDisk(x).toArray()).toEqual([...(model.get(x) ?? [])].sort((p, q) => p - q));
          expect(b.isEmpty(x)).toBe((model.get(x)?.size ?? 0) === 0);
        }
      }
    }
    const want = (k: string) => [...(model.get(k) ?? [])].sort((x, y) => x - y);
    for (const k of keys) expect(b.get(k).toArray()).toEqual(want(k));
    const reopened = internals(t.reopen()).bitmaps;
    for (const k of keys) {
      expect(reopened.loadFromDisk(k).toArray()).toEqual(want(k));
      expect(reopened.get(k).toArray()).toEqual(want(k));
      expect(chunksOf(t.store, k).flatMap(([, ids]) => ids)).toEqual(want(k));
    }
  });

  it("adding one ID to a key not cached reads only the chunks from its own on; a read loads the rest", () => {
    const s = t.store;
    const b = internals(s).bitmaps;
    internals(s).write(() => void b.addMany(K, [3, CHUNK + 4, 5 * CHUNK + 6]));
    b.clearCache();
    const ranges = vi.spyOn(internals(s).tables.bitmapChunks, "getRange");
    internals(s).write(() => expect(b.add(K, 5 * CHUNK + 7)).toBe(true));
    expect(ranges.mock.calls.map(([options]) => (options?.start as unknown[] | undefined)?.[1])).toEqual([5]);
    expect(b.isEmpty(K)).toBe(false);
    expect(b.get(K).toArray()).toEqual([3, CHUNK + 4, 5 * CHUNK + 6, 5 * CHUNK + 7]);
    // An older ID into a partly loaded key loads the older chunks first.
    b.clearCache();
    internals(s).write(() => void b.add(K, 5 * CHUNK + 8));
    internals(s).write(() => void b.add(K, CHUNK + 9));
    expect(b.get(K).toArray()).toEqual([3, CHUNK + 4, CHUNK + 9, 5 * CHUNK + 6, 5 * CHUNK + 7, 5 * CHUNK + 8]);
    expect(chunksOf(s, K)).toEqual([
      [0, [3]],
      [1, [CHUNK + 4, CHUNK + 9]],
      [5, [5 * CHUNK + 6, 5 * CHUNK + 7, 5 * CHUNK + 8]],
    ]);
  });

  it("getFrom reads only the chunks from the given ID's chunk on; get completes the entry", () => {
    const s = t.store;
    const b = internals(s).bitmaps;
    internals(s).write(() => void b.addMany(K, [3, CHUNK + 4, 4 * CHUNK + 5, 6 * CHUNK + 6]));
    b.clearCache();
    const ranges = vi.spyOn(internals(s).tables.bitmapChunks, "getRange");
    const suffix = b.getFrom(K, 4 * CHUNK + 100);
    expect(ranges.mock.calls.map(([options]) => (options?.start as unknown[] | undefined)?.[1])).toEqual([4]);
    expect(suffix.toArray()).toEqual([4 * CHUNK + 5, 6 * CHUNK + 6]);
    // A lower start loads only what is missing; get loads the rest.
    expect(b.getFrom(K, CHUNK).toArray()).toEqual([CHUNK + 4, 4 * CHUNK + 5, 6 * CHUNK + 6]);
    expect(b.get(K).toArray()).toEqual([3, CHUNK + 4, 4 * CHUNK + 5, 6 * CHUNK + 6]);
    expect(ranges.mock.calls.map(([options]) => (options?.start as unknown[] | undefined)?.[1])).toEqual([4, 1, 0]);
  });

  it("isEmpty answers from disk without caching the key, and sees older chunks under a partly loaded one", () => {
    const s = t.store;
    const b = internals(s).bitmaps;
    expect(b.isEmpty(K)).toBe(true);
    internals(s).write(() => void b.add(K, 2));
    b.clearCache();
    expect(b.isEmpty(K)).toBe(false);
    expect(b.cachedKeys()).toEqual([]);
    // A write that adds to chunk 3 and is rolled back leaves an empty partial entry over chunk 3 on.
    expect(() =>
      internals(s).write(() => {
        b.add(K, 3 * CHUNK);
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(b.isEmpty(K)).toBe(false);
    internals(s).write(() => void b.removeMany(K, [2]));
    expect(b.isEmpty(K)).toBe(true);
  });

  it("addBitmap adds in bulk: returns only new IDs, writes exactly the chunks they fall in, and rolls back", () => {
    const s = t.store;
    const b = internals(s).bitmaps;
    internals(s).write(() => void b.addMany(K, [1, CHUNK + 1, 4 * CHUNK + 1]));
    const put = vi.spyOn(internals(s).tables.bitmapChunks, "putSync");
    internals(s).write(() => {
      // Chunk 1 gains nothing (CHUNK + 1 is there), chunk 4 neither; chunks 0, 2 and 3 do.
      expect([
        ...b.addBitmap(K, new RoaringBitmap32([1, 2, CHUNK + 1, 2 * CHUNK + 5, 3 * CHUNK, 4 * CHUNK + 1])),
      ]).toEqual([2, 2 * CHUNK + 5, 3 * CHUNK]);
    });
    expect(put.mock.calls.map((c) => c[0]).sort((x, y) => x[1] - y[1])).toEqual([
      [K, 0],
      [K, 2],
      [K, 3],
    ]);
    expect(chunksOf(s, K)).toEqual([
      [0, [1, 2]],
      [1, [CHUNK + 1]],
      [2, [2 * CHUNK + 5]],
      [3, [3 * CHUNK]],
      [4, [4 * CHUNK + 1]],
    ]);
    const disk = diskImage(s);
    expect(() =>
      internals(s).write(() => {
        b.addBitmap(K, new RoaringBitmap32([3, 5 * CHUNK]));
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(b.get(K).toArray()).toEqual([1, 2, CHUNK + 1, 2 * CHUNK + 5, 3 * CHUNK, 4 * CHUNK + 1]);
    expect(diskImage(s)).toEqual(disk);
    expect(internals(t.reopen()).bitmaps.get(K).toArray()).toEqual([
      1,
      2,
      CHUNK + 1,
      2 * CHUNK + 5,
      3 * CHUNK,
      4 * CHUNK + 1,
    ]);
  });

  it("addRange adds a range across chunks as whole-chunk rewrites, and a failed write gives it back", () => {
    const s = t.store;
    const b = internals(s).bitmaps;
    internals(s).write(() => void b.addMany(K, [5, CHUNK + 7]));
    expect(internals(s).write(() => b.addRange(K, 3, 2 * CHUNK + 10))).toBe(2 * CHUNK + 7 - 2);
    expect(layoutOf(s, K)).toEqual(["0", "1", "2"]);
    const want = Array.from({ length: 2 * CHUNK + 7 }, (_, i) => i + 3);
    expect(b.get(K).toArray()).toEqual(want);
    expect(internals(t.reopen()).bitmaps.get(K).toArray()).toEqual(want);
    const reopened = internals(t.store).bitmaps;
    const bytes = reopened.cachedBytes;
    expect(() =>
      internals(t.store).write(() => {
        reopened.addRange(K, 1, 3 * CHUNK);
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(reopened.get(K).toArray()).toEqual(want);
    expect(reopened.cachedBytes).toBe(bytes);
    expect(internals(t.store).write(() => reopened.addRange(K, 10, 20))).toBe(0);
  });

  it("a sent message writes only the chunks of its own ID", () => {
    const s = t.store;
    const { realm, owner } = s.createRealm({
      subdomain: "",
      name: "T",
      owner: { email: "o@t.dev", fullName: "Olive" },
    });
    s.subscribe(owner.id, { channels: [{ name: "general" }] });
    s.sendMessage({ senderId: owner.id, to: { type: "channel", channel: "general", topic: "a" }, content: "one" });
    const put = vi.spyOn(internals(s).tables.bitmapChunks, "putSync");
    s.sendMessage({ senderId: owner.id, to: { type: "channel", channel: "general", topic: "a" }, content: "two" });
    const written = put.mock.calls.map((c) => c[0]);
    expect(written.length).toBeGreaterThan(0);
    expect(written.every((k) => k[1] === 0)).toBe(true);
    expect(written.map((k) => k[0])).toContain(key.realm(realm.id));
  });

  it("rollback on a failed write leaves cache and disk unchanged", () => {
    const s = t.store;
    internals(s).write(() => void internals(s).bitmaps.addMany(K, [1, CHUNK + 1]));
    const disk = diskImage(s);
    const counters = { ...internals(s).counters };
    expect(() =>
      internals(s).write(() => {
        internals(s).allocate("nextMessageId");
        internals(s).bitmaps.addMany(K, [2, 2 * CHUNK]);
        internals(s).bitmaps.removeMany(K, [1, CHUNK + 1]);
        internals(s).bitmaps.add(K, 3);
        internals(s).bitmaps.add("fresh:key", 7);
        internals(s).tables.meta.putSync("junk", 1);
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(internals(s).bitmaps.get(K).toArray()).toEqual([1, CHUNK + 1]);
    expect(internals(s).bitmaps.get("fresh:key").toArray()).toEqual([]);
    expect(diskImage(s)).toEqual(disk);
    expect(internals(s).tables.meta.get("junk")).toBeUndefined();
    expect(internals(s).counters).toEqual(counters);
    // Nothing dirty is left behind: clearCache is allowed, and disk still agrees.
    internals(s).bitmaps.clearCache();
    expect(internals(s).bitmaps.get(K).toArray()).toEqual([1, CHUNK + 1]);
    // The next successful write commits only its own change.
    internals(s).write(() => void internals(s).bitmaps.add(K, 4));
    expect(internals(t.reopen()).bitmaps.get(K).toArray()).toEqual([1, 4, CHUNK + 1]);
  });

  it("a rolled-back write gives back the cache-size estimate it charged", () => {
    const s = t.store;
    internals(s).write(() => void internals(s).bitmaps.addMany(K, [1, 2]));
    const failing = () =>
      expect(() =>
        internals(s).write(() => {
          internals(s).bitmaps.addMany(K, [3, 4, 5]);
          internals(s).bitmaps.add("fresh:key", 7);
          throw new Error("boom");
        }),
      ).toThrow("boom");
    failing(); // may load "fresh:key" into the cache (an empty entry, as on disk)
    const bytes = internals(s).bitmaps.cachedBytes;
    for (let i = 0; i < 5; i++) failing();
    expect(internals(s).bitmaps.cachedBytes).toBe(bytes);
  });

  it("clearCache refuses while changes are uncommitted (and the write is rolled back)", () => {
    const s = t.store;
    expect(() =>
      internals(s).write(() => {
        internals(s).bitmaps.add(K, 5);
        internals(s).bitmaps.clearCache();
      }),
    ).toThrow("clearCache with uncommitted bitmap changes");
    expect(internals(s).bitmaps.get(K).toArray()).toEqual([]);
    expect(chunksOf(s, K)).toEqual([]);
  });

  it("nested writes are refused without losing the outer write", () => {
    const s = t.store;
    expect(() => internals(s).write(() => internals(s).write(() => internals(s).bitmaps.add(K, 1)))).toThrow(
      "nested write transaction",
    );
    expect(internals(s).bitmaps.get(K).size).toBe(0);
    internals(s).write(() => void internals(s).bitmaps.add(K, 2));
    expect(internals(s).bitmaps.get(K).toArray()).toEqual([2]);
  });

  it("a commit re-measures what it changed: a dense chunk costs its real size, not 4 bytes an ID", () => {
    const s = t.store;
    const before = internals(s).bitmaps.cachedBytes;
    internals(s).write(
      () =>
        void internals(s).bitmaps.addMany(
          K,
          Array.from({ length: CHUNK }, (_, i) => i),
        ),
    );
    // 65,536 IDs: the add-time estimate was 256 KB; in memory they are one 8 KB bitmap container.
    expect(internals(s).bitmaps.cachedBytes - before).toBeLessThan(20_000);
  });

  it("small growth keeps its estimate until it adds up, then is re-measured", () => {
    const b = internals(t.store).bitmaps;
    internals(t.store).write(() => void b.add(K, 1));
    const before = b.cachedBytes;
    // 100 sparse IDs: charged 4 bytes each and not re-measured (measuring walks every container).
    internals(t.store).write(
      () =>
        void b.addMany(
          K,
          Array.from({ length: 100 }, (_, i) => 10 + i),
        ),
    );
    expect(b.cachedBytes - before).toBe(400);
    // Past 16 KB of charged growth the commit measures the real size: 8,000 dense IDs are one run.
    internals(t.store).write(
      () =>
        void b.addMany(
          K,
          Array.from({ length: 8000 }, (_, i) => 1000 + i),
        ),
    );
    expect(b.cachedBytes - before).toBeLessThan(4 * 8100);
    expect(b.cachedBytes - before).toBeGreaterThan(0);
  });

  it("a key's version changes with every change after it was first asked for, including a rolled-back one", () => {
    const b = internals(t.store).bitmaps;
    internals(t.store).write(() => void b.add(K, 1)); // before anyone asked: nothing to invalidate
    const v0 = b.version(K);
    expect(b.version(K)).toBe(v0);
    internals(t.store).write(() => void b.add(K, 2));
    const v1 = b.version(K);
    expect(v1).not.toBe(v0);
    expect(() =>
      internals(t.store).write(() => {
        b.add(K, 3);
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(b.version(K)).not.toBe(v1);
  });

  it("small cached bitmaps are charged their per-entry overhead", () => {
    const s = t.store;
    const before = internals(s).bitmaps.cachedBytes;
    internals(s).write(() => {
      for (let i = 0; i < 100; i++) internals(s).bitmaps.add(`small:${i}`, i + 1);
    });
    // Each holds one ID (a few serialized bytes) but costs hundreds of bytes of memory.
    expect(internals(s).bitmaps.cachedBytes - before).toBeGreaterThanOrEqual(100 * 500);
  });

  it("evicted entries reload from disk with the same content", () => {
    t.cleanup();
    t = tempStore({ bitmapCacheBytes: 1 });
    const s = t.store;
    internals(s).write(() => {
      internals(s).bitmaps.addMany("a", [1, 2, 3]);
      internals(s).bitmaps.addMany("b", [CHUNK, 2 * CHUNK]);
    });
    expect(internals(s).bitmaps.cachedBytes).toBeLessThanOrEqual(1);
    expect(internals(s).bitmaps.get("a").toArray()).toEqual([1, 2, 3]);
    expect(internals(s).bitmaps.get("b").toArray()).toEqual([CHUNK, 2 * CHUNK]);
  });
});

describe("keys too long for LMDB", () => {
  let t: TempStore;
  beforeEach(() => {
    t = tempStore();
  });
  afterEach(() => t.cleanup());

  it("read as empty (they can never have been written) and are refused for writing", () => {
    const bitmaps = internals(t.store).bitmaps;
    const long = `ct:1:${"x".repeat(100_000)}`;
    const longUnicode = `t:1:${"🐙".repeat(MAX_KEY_NAME_BYTES / 4 + 1)}`;
    for (const k of [long, longUnicode]) {
      expect(bitmaps.get(k).size).toBe(0);
      expect(bitmaps.loadFromDisk(k).size).toBe(0);
      expect(() => internals(t.store).write(() => bitmaps.add(k, 1))).toThrow(/longer than/);
      expect(() => internals(t.store).write(() => bitmaps.addMany(k, [1]))).toThrow(/longer than/);
      expect(internals(t.store).write(() => bitmaps.removeMany(k, [1]))).toEqual([]);
    }
    // The longest allowed name still round-trips.
    const longest = "y".repeat(MAX_KEY_NAME_BYTES);
    internals(t.store).write(() => bitmaps.add(longest, 7));
    expect(bitmaps.loadFromDisk(longest).toArray()).toEqual([7]);
  });
});

describe("subtractInPlace", () => {
  it("equals andNot whether the set is small against the part (through the intersection) or not", () => {
    const big = new RoaringBitmap32(Array.from({ length: 50_000 }, (_, i) => 3 * i + 1));
    for (const ids of [[1, 2, 4, 7, 150_001, 149_998, 9_000_000], Array.from({ length: 20_000 }, (_, i) => 2 * i)]) {
      const set = new RoaringBitmap32(ids);
      const want = RoaringBitmap32.andNot(set, big).toArray();
      subtractInPlace(set, big);
      expect(set.toArray()).toEqual(want);
    }
    const untouched = new RoaringBitmap32([5, 6]);
    subtractInPlace(untouched, new RoaringBitmap32());
    expect(untouched.toArray()).toEqual([5, 6]);
  });
});

describe("maximumOfPortable", () => {
  it("reads the largest ID from the bytes of array, bitmap and run containers, one or many", () => {
    let seed = 11;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const cases: InstanceType<typeof RoaringBitmap32>[] = [
      new RoaringBitmap32([0]),
      new RoaringBitmap32([7]),
      new RoaringBitmap32([CHUNK - 1]),
      new RoaringBitmap32([0xffffffff]),
      new RoaringBitmap32().addRange(5, 9000),
      new RoaringBitmap32().addRange(3 * CHUNK, 3 * CHUNK + 70_000),
    ];
    for (let i = 0; i < 200; i++) {
      const b = new RoaringBitmap32();
      const containers = 1 + random(6);
      for (let c = 0; c < containers; c++) {
        const high = random(40) * CHUNK;
        const kind = random(3);
        if (kind === 0) for (let j = 0; j < 1 + random(50); j++) b.add(high + random(CHUNK));
        else if (kind === 1) for (let j = 0; j < 5000 + random(3000); j++) b.add(high + random(CHUNK));
        else b.addRange(high + random(1000), high + 1000 + random(CHUNK - 1000));
      }
      cases.push(b);
    }
    for (const b of cases) {
      for (const optimize of [false, true]) {
        const copy = new RoaringBitmap32(b);
        if (optimize) copy.runOptimize();
        expect(maximumOfPortable(copy.serialize("portable")), `${copy.size} ids`).toBe(copy.maximum());
      }
    }
    expect(maximumOfPortable(new RoaringBitmap32().serialize("portable"))).toBeUndefined();
    expect(maximumOfPortable(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]))).toBeUndefined();
  });
});

describe("maximaWithPrefix", () => {
  let t: TempStore;
  afterEach(() => t.cleanup());

  it("lists every non-empty key under a prefix with its largest ID, from disk or cache, deltas included", () => {
    t = tempStore();
    const b = internals(t.store).bitmaps;
    const big = Array.from({ length: SMALL_CHUNK_IDS + 10 }, (_, i) => 3 * i + 1);
    internals(t.store).write(() => {
      b.addMany("p:1:a", [1, 2, 5 * CHUNK + 3]);
      b.addMany("p:1:b", big);
      b.addMany("p:1:", [9]);
      b.addMany("p:1:c", [4]);
      b.addMany("p:10:x", [100]);
      b.addMany("p:1", [101]);
      b.addMany("p:2:y", [102]);
    });
    // "b" gets a delta raising its maximum; "c" is emptied (no chunk left).
    internals(t.store).write(() => {
      b.add("p:1:b", 3 * SMALL_CHUNK_IDS + 500);
      b.removeMany("p:1:c", [4]);
    });
    expect(internals(t.store).tables.bitmapChunks.get(["p:1:b", 0, 1])).toBeDefined();
    const expected = [
      ["p:1:", 9],
      ["p:1:a", 5 * CHUNK + 3],
      ["p:1:b", 3 * SMALL_CHUNK_IDS + 500],
    ];
    expect(b.maximaWithPrefix("p:1:")).toEqual(expected);
    b.clearCache();
    expect(b.maximaWithPrefix("p:1:")).toEqual(expected);
    // Listing caches nothing; a partly loaded entry answers from memory.
    expect(b.cachedKeys()).toEqual([]);
    b.getFrom("p:1:a", 5 * CHUNK);
    expect(b.maximaWithPrefix("p:1:")).toEqual(expected);
  });
});

describe("serializeChunk", () => {
  it("returns only the chunk's IDs, or null when the chunk is empty", () => {
    const b = new RoaringBitmap32([3, CHUNK - 1, CHUNK, 2 * CHUNK + 5]);
    const decode = (bytes: Uint8Array | null) =>
      bytes === null ? null : RoaringBitmap32.deserialize(bytes, "portable").toArray();
    expect(decode(serializeChunk(b, 0))).toEqual([3, CHUNK - 1]);
    expect(decode(serializeChunk(b, 1))).toEqual([CHUNK]);
    expect(decode(serializeChunk(b, 2))).toEqual([2 * CHUNK + 5]);
    expect(serializeChunk(b, 3)).toBeNull();
    expect(serializeChunk(new RoaringBitmap32(), 0)).toBeNull();
  });
});

describe("foldTopic", () => {
  it("upper-cases per code point without changing length", () => {
    expect(foldTopic("ß")).toBe("ß");
    expect(foldTopic("straße")).toBe("STRAßE");
    expect(foldTopic("é")).toBe("É");
    expect(foldTopic("café Crème")).toBe("CAFÉ CRÈME");
    expect(foldTopic("ﬁx")).toBe("ﬁX"); // U+FB01 upper-cases to "FI": kept
    expect(foldTopic("ŉ")).toBe("ŉ"); // upper-cases to "ʼN": kept
    expect(foldTopic("😀 ok")).toBe("😀 OK");
    expect(foldTopic("")).toBe("");
    for (const s of ["ß", "straße", "ﬁx", "ŉ", "ǰ", "😀 ok", "ΐ", "i̇"])
      expect([...foldTopic(s)].length).toBe([...s].length);
    expect(foldTopic("ß")).not.toBe("ß".toUpperCase());
    expect(foldName).toBe(foldTopic);
  });

  it("makes topic keys case-insensitive", () => {
    expect(key.channelTopic(3, "Café")).toBe(key.channelTopic(3, "CAFÉ"));
    expect(key.channelTopic(3, "Café")).toBe("ct:3:CAFÉ");
    expect(key.topic(1, "straße")).toBe("t:1:STRAßE");
    expect(key.topic(1, "straße")).not.toBe(key.topic(1, "STRASSE"));
  });
});

describe("store format versions", () => {
  let t: TempStore;
  beforeEach(() => {
    t = tempStore();
  });
  afterEach(() => t.cleanup());

  it("opens a version-1 store (no deltas) and marks it current at its first write; refuses a newer one", () => {
    const b = internals(t.store).bitmaps;
    const ids = Array.from({ length: SMALL_CHUNK_IDS + 1 }, (_, i) => i + 1);
    internals(t.store).write(() => void b.addMany(K, ids));
    // What a version-1 build left: bases only.
    expect(layoutOf(t.store, K)).toEqual(["0"]);
    internals(t.store).tables.meta.putSync("schemaVersion", 1); // outside a write: a write stamps its own version
    const reopened = internals(t.reopen());
    expect(reopened.tables.meta.get("schemaVersion")).toBe(1);
    expect(reopened.bitmaps.get(K).toArray()).toEqual(ids);
    reopened.write(() => void reopened.bitmaps.add(K, 5000));
    expect(reopened.tables.meta.get("schemaVersion")).toBe(SCHEMA_VERSION);
    expect(layoutOf(t.store, K)).toEqual(["0", "0+"]);
    reopened.tables.meta.putSync("schemaVersion", SCHEMA_VERSION + 1);
    expect(() => t.reopen()).toThrow(
      new RegExp(`schema version ${SCHEMA_VERSION + 1}; this build reads versions 1 to ${SCHEMA_VERSION}`),
    );
  });
});
