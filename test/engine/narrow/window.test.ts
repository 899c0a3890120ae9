import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { RoaringBitmap32, type ReadonlyBitmap } from "../../../src/engine/index/bitmap-store.js";
import { NEWEST_ANCHOR, selectWindow, type WindowResult } from "../../../src/engine/narrow/window.js";

const S = new RoaringBitmap32([10, 20, 30, 40, 50]);
const U32 = 0xffffffff;

function win(
  set: ReadonlyBitmap,
  anchor: number,
  numBefore: number,
  numAfter: number,
  includeAnchor = true,
): WindowResult {
  return selectWindow(set, { anchor, numBefore, numAfter, includeAnchor });
}
function r(ids: number[], foundAnchor: boolean, foundOldest: boolean, foundNewest: boolean): WindowResult {
  return { ids, foundAnchor, foundOldest, foundNewest, historyLimited: false };
}

describe("selectWindow: both sides", () => {
  it("anchor present, sides exactly filled", () => {
    expect(win(S, 30, 2, 2)).toEqual(r([10, 20, 30, 40, 50], true, false, false));
  });
  it("anchor present, sides not filled", () => {
    expect(win(S, 30, 5, 5)).toEqual(r([10, 20, 30, 40, 50], true, true, true));
    expect(win(S, 30, 1, 3)).toEqual(r([20, 30, 40, 50], true, false, true));
  });
  it("anchor absent: the extra after-row is trimmed", () => {
    expect(win(S, 35, 1, 1)).toEqual(r([30, 40], false, false, false));
    expect(win(S, 35, 3, 1)).toEqual(r([10, 20, 30, 40], false, false, false));
    expect(win(S, 35, 4, 1)).toEqual(r([10, 20, 30, 40], false, true, false));
  });
  it("include_anchor is not applied when both sides are queried (Zulip's view forbids the combination)", () => {
    expect(win(S, 30, 1, 1, false)).toEqual(r([20, 30, 40], true, false, false));
  });
  it("anchor below every ID", () => {
    expect(win(S, 5, 2, 2)).toEqual(r([10, 20], false, true, false));
  });
});

describe("selectWindow: before only", () => {
  it("with include_anchor: the anchor row comes on top of num_before", () => {
    expect(win(S, 30, 2, 0)).toEqual(r([10, 20, 30], true, false, false));
    expect(win(S, 30, 1, 0)).toEqual(r([20, 30], true, false, false));
    expect(win(S, 30, 3, 0)).toEqual(r([10, 20, 30], true, true, false));
  });
  it("with include_anchor and an absent anchor", () => {
    expect(win(S, 35, 2, 0)).toEqual(r([20, 30], false, false, false));
    expect(win(S, 35, 3, 0)).toEqual(r([10, 20, 30], false, false, false));
    expect(win(S, 35, 4, 0)).toEqual(r([10, 20, 30], false, true, false));
  });
  it("without include_anchor", () => {
    expect(win(S, 30, 2, 0, false)).toEqual(r([10, 20], false, false, false));
    expect(win(S, 30, 3, 0, false)).toEqual(r([10, 20], false, true, false));
    expect(win(S, 10, 3, 0, false)).toEqual(r([], false, true, false));
  });
  it("anchor above every ID", () => {
    expect(win(S, 1000, 2, 0)).toEqual(r([40, 50], false, false, false));
  });
});

describe("selectWindow: after only", () => {
  it("with include_anchor: num_before = 0 quirk leaves found_oldest false", () => {
    expect(win(S, 30, 0, 2)).toEqual(r([30, 40, 50], true, false, false));
    expect(win(S, 30, 0, 3)).toEqual(r([30, 40, 50], true, false, true));
    expect(win(S, 10, 0, 10)).toEqual(r([10, 20, 30, 40, 50], true, false, true));
  });
  it("without include_anchor", () => {
    expect(win(S, 30, 0, 2, false)).toEqual(r([40, 50], false, false, false));
    expect(win(S, 30, 0, 3, false)).toEqual(r([40, 50], false, false, true));
    expect(win(S, 50, 0, 1, false)).toEqual(r([], false, false, true));
  });
  it("absent anchor", () => {
    expect(win(S, 35, 0, 1)).toEqual(r([40], false, false, false));
  });
});

describe("selectWindow: anchored left (anchor = oldest = 0)", () => {
  it("after only, found_oldest always true", () => {
    expect(win(S, 0, 0, 2)).toEqual(r([10, 20], false, true, false));
    expect(win(S, 0, 0, 5)).toEqual(r([10, 20, 30, 40, 50], false, true, false));
    expect(win(S, 0, 0, 6)).toEqual(r([10, 20, 30, 40, 50], false, true, true));
    expect(win(S, 0, 0, 2, false)).toEqual(r([10, 20], false, true, false));
  });
  it("num_before is ignored", () => {
    expect(win(S, 0, 7, 2)).toEqual(r([10, 20], false, true, false));
  });
  it("neither side: an exact lookup of ID 0", () => {
    expect(win(S, 0, 3, 0)).toEqual(r([], false, true, false));
    expect(win(S, 0, 0, 0)).toEqual(r([], false, true, false));
  });
});

describe("selectWindow: anchored right (anchor = newest)", () => {
  it("before only, num_after forced to 0, found_newest always true", () => {
    expect(win(S, NEWEST_ANCHOR, 2, 0)).toEqual(r([40, 50], false, false, true));
    expect(win(S, NEWEST_ANCHOR, 2, 9)).toEqual(r([40, 50], false, false, true));
    expect(win(S, NEWEST_ANCHOR, 5, 0)).toEqual(r([10, 20, 30, 40, 50], false, false, true));
    expect(win(S, NEWEST_ANCHOR, 6, 0, false)).toEqual(r([10, 20, 30, 40, 50], false, true, true));
    expect(win(S, 2 * NEWEST_ANCHOR, 1, 0)).toEqual(r([50], false, false, true));
  });
  it("num_before = 0: nothing, found_oldest false", () => {
    expect(win(S, NEWEST_ANCHOR, 0, 0)).toEqual(r([], false, false, true));
    expect(win(S, NEWEST_ANCHOR, 0, 10)).toEqual(r([], false, false, true));
  });
  it("NEWEST_ANCHOR is Zulip's LARGER_THAN_MAX_MESSAGE_ID", () => {
    expect(NEWEST_ANCHOR).toBe(10 ** 16);
  });
});

describe("selectWindow: neither side", () => {
  it("is an exact lookup of the anchor, whatever include_anchor says", () => {
    expect(win(S, 30, 0, 0)).toEqual(r([30], true, false, false));
    expect(win(S, 30, 0, 0, false)).toEqual(r([30], true, false, false));
    expect(win(S, 35, 0, 0)).toEqual(r([], false, false, false));
  });
});

describe("selectWindow: empty set", () => {
  const E = new RoaringBitmap32();
  it("reports both ends found when a side was requested", () => {
    expect(win(E, NEWEST_ANCHOR, 5, 0)).toEqual(r([], false, true, true));
    expect(win(E, 0, 0, 5)).toEqual(r([], false, true, true));
    expect(win(E, 7, 2, 2)).toEqual(r([], false, true, true));
  });
});

describe("selectWindow: anchors at and beyond 2^32", () => {
  const B = new RoaringBitmap32([1, 70000, U32 - 1, U32]);
  it("anchor at 2^32-1", () => {
    expect(win(B, U32, 1, 1)).toEqual(r([U32 - 1, U32], true, false, true));
    expect(win(B, U32, 0, 1, false)).toEqual(r([], false, false, true));
    expect(win(B, U32, 1, 0, false)).toEqual(r([U32 - 1], false, false, false));
    expect(win(B, U32, 0, 0)).toEqual(r([U32], true, false, false));
  });
  it("anchor above 2^32 behaves as above every ID, without being 'newest'", () => {
    expect(win(B, 2 ** 32, 2, 2)).toEqual(r([U32 - 1, U32], false, false, true));
    expect(win(B, 2 ** 32, 1, 0)).toEqual(r([U32], false, false, false));
    expect(win(B, 2 ** 40, 9, 0, false)).toEqual(r([1, 70000, U32 - 1, U32], false, true, false));
    expect(win(B, 2 ** 40, 0, 3)).toEqual(r([], false, false, true));
    expect(win(B, 2 ** 33, 0, 0)).toEqual(r([], false, false, false));
    expect(win(B, NEWEST_ANCHOR - 1, 1, 1)).toEqual(r([U32], false, false, true));
  });
  it("ranks work across chunk boundaries", () => {
    expect(win(B, 70000, 1, 1)).toEqual(r([1, 70000, U32 - 1], true, false, false));
    expect(win(B, 65536, 0, 1)).toEqual(r([70000], false, false, false));
  });
});

/** Zulip's limit_query_to_range + post_process_limited_query, transcribed over a sorted list. */
function reference(
  all: number[],
  anchor: number,
  numBefore: number,
  numAfter0: number,
  include: boolean,
): WindowResult {
  const anchoredLeft = anchor === 0;
  const anchoredRight = anchor >= NEWEST_ANCHOR;
  const numAfter = anchoredRight ? 0 : numAfter0;
  const needBefore = !anchoredLeft && numBefore > 0;
  const needAfter = !anchoredRight && numAfter > 0;
  const desc = (bound: number | null, limit: number) =>
    limit === 0 ? [] : all.filter((id) => bound === null || id <= bound).slice(-limit);
  const asc = (bound: number | null, limit: number) =>
    all.filter((id) => bound === null || id >= bound).slice(0, limit);
  let rows: number[];
  if (needBefore && needAfter) rows = [...desc(anchor - 1, numBefore), ...asc(anchor, numAfter + 1)];
  else if (needBefore)
    rows = desc(anchoredRight ? null : anchor - (include ? 0 : 1), numBefore + (include && !anchoredRight ? 1 : 0));
  else if (needAfter) rows = asc(anchoredLeft ? null : anchor + (include ? 0 : 1), numAfter + (include ? 1 : 0));
  else rows = all.filter((id) => id === anchor);
  let before = anchoredRight ? rows : rows.filter((id) => id < anchor);
  const at = anchoredRight ? [] : rows.filter((id) => id === anchor);
  let after = anchoredRight ? [] : rows.filter((id) => id > anchor);
  if (numBefore) before = before.slice(-numBefore);
  if (numAfter) after = after.slice(0, numAfter);
  return {
    ids: [...before, ...at, ...after],
    foundAnchor: at.length === 1,
    foundOldest: anchoredLeft || before.length < numBefore,
    foundNewest: anchoredRight || after.length < numAfter,
    historyLimited: false,
  };
}

describe("selectWindow agrees with a transcription of Zulip's algorithm", () => {
  it("on random sets and requests", () => {
    const idArb = fc.oneof(
      fc.integer({ min: 1, max: 300 }),
      fc.integer({ min: 65500, max: 65600 }),
      fc.integer({ min: U32 - 5, max: U32 }),
    );
    const anchorArb = fc.oneof(
      fc.constant(0),
      fc.constant(NEWEST_ANCHOR),
      idArb,
      fc.integer({ min: 2 ** 32, max: 2 ** 34 }),
    );
    fc.assert(
      fc.property(
        fc.uniqueArray(idArb, { maxLength: 40 }),
        anchorArb,
        fc.nat(8),
        fc.nat(8),
        fc.boolean(),
        (ids, anchor, nb, na, include) => {
          const sorted = [...ids].sort((a, b) => a - b);
          const set = new RoaringBitmap32(sorted);
          expect(win(set, anchor, nb, na, include)).toEqual(reference(sorted, anchor, nb, na, include));
        },
      ),
      { seed: 20240501, numRuns: 2000 },
    );
  });
});
