/**
 * @module narrow/window
 * Zulip's range logic (limit_query_to_range + post_process_limited_query), on a
 * bitmap: each side is a rank/select slice, never a walk over the narrow. The
 * found_* formulas and their quirks (num_before = 0 => found_oldest false unless
 * anchored to the left) are copied exactly.
 */
import type { ReadonlyBitmap } from "../index/bitmap-store.js";
import { bitmapSet, type MatchingSet } from "./lazy.js";

/** Zulip's LARGER_THAN_MAX_MESSAGE_ID: the anchor value of "newest". */
export const NEWEST_ANCHOR = 10_000_000_000_000_000;

export interface WindowRequest {
  /** 0 = oldest, NEWEST_ANCHOR = newest, otherwise a message ID (clamped to [0, 1e16]). */
  readonly anchor: number;
  readonly numBefore: number;
  readonly numAfter: number;
  readonly includeAnchor: boolean;
}

export interface WindowResult {
  readonly ids: readonly number[];
  readonly foundAnchor: boolean;
  readonly foundOldest: boolean;
  readonly foundNewest: boolean;
  readonly historyLimited: boolean;
}

/** The window of `matching` (a bitmap, or a lazily evaluated narrow: narrow/lazy.ts). */
export function selectWindow(matching: ReadonlyBitmap | MatchingSet, request: WindowRequest): WindowResult {
  const set = "lastUpTo" in matching ? matching : bitmapSet(matching);
  const lastUpTo = (max: number | null, limit: number) => set.lastUpTo(max, limit);
  const firstFrom = (min: number | null, limit: number) => set.firstFrom(min, limit);
  const anchor = request.anchor;
  const anchoredLeft = anchor === 0;
  const anchoredRight = anchor >= NEWEST_ANCHOR;
  const numBefore = request.numBefore;
  const numAfter = anchoredRight ? 0 : request.numAfter;
  const include = request.includeAnchor ? 1 : 0;
  const needBefore = !anchoredLeft && numBefore > 0;
  const needAfter = !anchoredRight && numAfter > 0;

  let rows: number[];
  if (needBefore && needAfter) {
    rows = [...lastUpTo(anchor - 1, numBefore), ...firstFrom(anchor, numAfter + 1)];
  } else if (needBefore) {
    const limit = numBefore + (anchoredRight ? 0 : include);
    rows = lastUpTo(anchoredRight ? null : anchor - (1 - include), limit);
  } else if (needAfter) {
    rows = firstFrom(anchoredLeft ? null : anchor + (1 - include), numAfter + include);
  } else {
    rows = set.has(anchor) ? [anchor] : [];
  }

  if (anchoredRight) {
    // Everything selected is before the anchor (at most numBefore of it): no re-slicing.
    const before = numBefore && rows.length > numBefore ? rows.slice(-numBefore) : rows;
    return {
      ids: before,
      foundAnchor: false,
      foundOldest: anchoredLeft || before.length < numBefore,
      foundNewest: true,
      historyLimited: false,
    };
  }
  // rows ascend: [beforeStart, atStart) below the anchor, [atStart, afterStart) equal to it, the rest above.
  let atStart = 0;
  while (atStart < rows.length && rows[atStart]! < anchor) atStart++;
  let afterStart = atStart;
  while (afterStart < rows.length && rows[afterStart]! === anchor) afterStart++;
  const beforeStart = numBefore ? Math.max(0, atStart - numBefore) : 0;
  const afterEnd = numAfter ? Math.min(rows.length, afterStart + numAfter) : rows.length;
  const beforeCount = atStart - beforeStart;
  const afterCount = afterEnd - afterStart;
  return {
    ids: beforeStart === 0 && afterEnd === rows.length ? rows : rows.slice(beforeStart, afterEnd),
    foundAnchor: afterStart - atStart === 1,
    foundOldest: anchoredLeft || beforeCount < numBefore,
    foundNewest: afterCount < numAfter,
    // No plan-based history limit (first_visible_message_id is always 0 here).
    historyLimited: false,
  };
}
