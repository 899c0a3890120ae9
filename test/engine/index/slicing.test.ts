import { describe, expect, it } from "vitest";
import { RoaringBitmap32, sliceByRank, valueRange } from "../../../src/engine/index/bitmap-store.js";

describe("value-range slicing", () => {
  const set = new RoaringBitmap32([3, 70000, 70001, 140000, 4294967295]);

  it("valueRange keeps IDs in [from, to), default to the end of the ID space", () => {
    expect(valueRange(set, 70000).toArray()).toEqual([70000, 70001, 140000, 4294967295]);
    expect(valueRange(set, 4, 140000).toArray()).toEqual([70000, 70001]);
    expect(valueRange(set, 140001, 140002).toArray()).toEqual([]);
    expect(valueRange(new RoaringBitmap32(), 0).toArray()).toEqual([]);
  });

  it("sliceByRank returns the IDs at ranks [start, start + count), clipped to the set", () => {
    expect(sliceByRank(set, 1, 2)).toEqual([70000, 70001]);
    expect(sliceByRank(set, 3, 10)).toEqual([140000, 4294967295]);
    expect(sliceByRank(set, 5, 1)).toEqual([]);
    expect(sliceByRank(set, 0, 0)).toEqual([]);
    const big = new RoaringBitmap32();
    for (let i = 0; i < 80000; i++) big.add(i * 12 + 5);
    expect(sliceByRank(big, 79900, 100)).toEqual(Array.from(big.toUint32Array().slice(79900)));
  });
});
