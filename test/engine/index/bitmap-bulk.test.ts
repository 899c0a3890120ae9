/**
 * BitmapStore's bulk writes by bitmap (addAll, removeAll: a move's rows for thousands of
 * users), and the serialization of a chunk that is the whole bitmap: what is in memory
 * equals what is on disk after the commit and after a reopen, a failed write gives
 * everything back, and few changes still go out as deltas.
 */
import { afterEach, describe, expect, it } from "vitest";
import { DELTA_LIMIT, RoaringBitmap32, serializeChunk } from "../../../src/engine/index/bitmap-store.js";
import { internals } from "../../../src/engine/internal.js";
import { tempStore, type TempStore } from "../../support/temp-store.js";

const CHUNK = 1 << 16;
const K = "test:bulk";

let t: TempStore;
afterEach(() => t?.cleanup());

/** IDs spread over three chunks, runs and singles. */
function spread(seed: number, count: number): number[] {
  const out = new Set<number>();
  let x = seed;
  while (out.size < count) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out.add(CHUNK + (Math.floor(x / 65536) % (3 * CHUNK)));
  }
  return [...out].sort((a, b) => a - b);
}

describe("bulk bitmap writes", () => {
  it("addAll and removeAll change memory and disk alike, count what changed, and roll back exactly", () => {
    t = tempStore();
    const state = internals(t.store);
    const b = state.bitmaps;
    const base = spread(1, 5000);
    state.write(() => void b.addMany(K, base));
    const more = new RoaringBitmap32(spread(2, 4000));
    const expected = RoaringBitmap32.or(new RoaringBitmap32(base), more);
    state.write(() => expect(b.addAll(K, more)).toBe(RoaringBitmap32.andNot(more, new RoaringBitmap32(base)).size));
    expect(b.get(K).isEqual(expected)).toBe(true);
    const gone = new RoaringBitmap32(spread(3, 3000));
    state.write(() => expect(b.removeAll(K, gone)).toBe(RoaringBitmap32.and(expected, gone).size));
    expected.andNotInPlace(gone);
    expect(b.get(K).isEqual(expected)).toBe(true);
    expect(b.loadFromDisk(K).isEqual(expected)).toBe(true);

    expect(() =>
      state.write(() => {
        b.removeAll(K, new RoaringBitmap32(spread(4, 2000)));
        b.addAll(K, new RoaringBitmap32(spread(5, 2000)));
        throw new Error("abort");
      }),
    ).toThrow("abort");
    expect(b.get(K).isEqual(expected)).toBe(true);
    expect(b.loadFromDisk(K).isEqual(expected)).toBe(true);
    expect(internals(t.reopen()).bitmaps.get(K).isEqual(expected)).toBe(true);
  });

  it("writes a few removed IDs of a big chunk as a delta, and nothing for IDs that were not there", () => {
    t = tempStore();
    const state = internals(t.store);
    const b = state.bitmaps;
    state.write(() => void b.addAll(K, new RoaringBitmap32().addRange(CHUNK, CHUNK + 5000)));
    const puts: unknown[] = [];
    const put = state.tables.bitmapChunks.putSync.bind(state.tables.bitmapChunks);
    state.tables.bitmapChunks.putSync = (k, v) => (puts.push(k), put(k, v));
    const few = new RoaringBitmap32().addRange(CHUNK + 10, CHUNK + 10 + DELTA_LIMIT);
    state.write(() => expect(b.removeAll(K, few)).toBe(DELTA_LIMIT));
    expect(puts).toEqual([[K, 1, 1]]);
    puts.length = 0;
    state.write(() => expect(b.removeAll(K, few)).toBe(0));
    expect(puts).toEqual([]);
    expect(b.loadFromDisk(K).size).toBe(5000 - DELTA_LIMIT);
  });

  it("removeStored of many IDs rewrites a small chunk whole and a big one as a delta, memory and disk alike", () => {
    t = tempStore();
    const state = internals(t.store);
    const b = state.bitmaps;
    const small = "test:small";
    const big = "test:big";
    state.write(() => {
      b.addAll(small, new RoaringBitmap32().addRange(CHUNK, CHUNK + 500));
      b.addAll(big, new RoaringBitmap32().addRange(CHUNK, CHUNK + 5000));
    });
    const puts: unknown[] = [];
    const put = state.tables.bitmapChunks.putSync.bind(state.tables.bitmapChunks);
    state.tables.bitmapChunks.putSync = (k, v) => (puts.push(k), put(k, v));
    const ids = Array.from({ length: 100 }, (_, i) => CHUNK + 2 * i);
    state.write(() => {
      expect(b.removeStored(small, ids, new RoaringBitmap32(ids))).toHaveLength(100);
      expect(b.removeStored(big, ids, new RoaringBitmap32(ids))).toHaveLength(100);
    });
    expect(puts).toEqual([
      [small, 1],
      [big, 1, 1],
    ]);
    for (const k of [small, big]) expect(b.loadFromDisk(k).isEqual(b.get(k))).toBe(true);
    expect(b.get(small).size).toBe(400);
    expect(b.get(big).size).toBe(4900);
  });

  it("serializes a chunk that is the whole bitmap as the cut-out chunk would be", () => {
    for (const ids of [[CHUNK + 3], spread(6, 300).filter((id) => id < 2 * CHUNK), [2 * CHUNK, 2 * CHUNK + 1]]) {
      const bitmap = new RoaringBitmap32(ids);
      const chunk = ids[0]! >>> 16;
      const bytes = serializeChunk(bitmap, chunk)!;
      expect(RoaringBitmap32.deserialize(bytes, "portable").toArray()).toEqual(ids);
    }
    // Two chunks: each gets its own part.
    const two = new RoaringBitmap32([CHUNK + 1, 2 * CHUNK + 2]);
    expect(RoaringBitmap32.deserialize(serializeChunk(two, 1)!, "portable").toArray()).toEqual([CHUNK + 1]);
    expect(RoaringBitmap32.deserialize(serializeChunk(two, 2)!, "portable").toArray()).toEqual([2 * CHUNK + 2]);
    expect(serializeChunk(two, 3)).toBeNull();
  });
});
