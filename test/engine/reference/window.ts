/**
 * @module test/engine/reference/window
 * Zulip's limit_query_to_range + post_process_limited_query, transcribed literally
 * from zerver/lib/narrow.py (see ../shared/reference/zulip-messages.md §2.4–§2.5)
 * onto a plain sorted array. Deliberately independent of src/engine/narrow/window.ts.
 * first_visible_message_id is always 0 (no plan-based history limit).
 */

/** Zulip's LARGER_THAN_MAX_MESSAGE_ID. */
export const LARGER_THAN_MAX_MESSAGE_ID = 10_000_000_000_000_000;

export interface RefWindow {
  readonly ids: number[];
  readonly foundAnchor: boolean;
  readonly foundOldest: boolean;
  readonly foundNewest: boolean;
  readonly historyLimited: boolean;
}

/**
 * The rows of `matching` (ascending IDs) that `ORDER BY id DESC LIMIT limit`, with an optional upper bound, returns.
 */
function descLimit(matching: readonly number[], upper: number | null, limit: number): number[] {
  const kept = matching.filter((id) => upper === null || id <= upper);
  return kept.slice(Math.max(0, kept.length - limit));
}

/** The rows `ORDER BY id ASC LIMIT limit` returns, with an optional lower bound. */
function ascLimit(matching: readonly number[], lower: number | null, limit: number): number[] {
  return matching.filter((id) => lower === null || id >= lower).slice(0, limit);
}

/**
 * `matching` must be sorted ascending. `anchor` is already parsed (clamped to
 * [0, 10^16]). Returns the window and Zulip's found_* / history_limited values.
 */
export function referenceWindow(
  matching: readonly number[],
  anchor: number,
  numBeforeIn: number,
  numAfterIn: number,
  includeAnchor: boolean,
): RefWindow {
  const firstVisibleMessageId = 0;
  const anchoredToLeft = anchor === 0;
  const anchoredToRight = anchor >= LARGER_THAN_MAX_MESSAGE_ID;
  const numBefore = numBeforeIn;
  // fetch_messages: "if anchored_to_right: num_after = 0".
  const numAfter = anchoredToRight ? 0 : numAfterIn;
  const inc = includeAnchor ? 1 : 0;
  const notInc = includeAnchor ? 0 : 1;

  // ---- limit_query_to_range ----
  const needBeforeQuery = !anchoredToLeft && numBefore > 0;
  const needAfterQuery = !anchoredToRight && numAfter > 0;
  const needBothSides = needBeforeQuery && needAfterQuery;
  let beforeAnchor = 0;
  let afterAnchor = 0;
  let beforeLimit = 0;
  let afterLimit = 0;
  if (needBothSides) {
    beforeAnchor = anchor - 1;
    afterAnchor = Math.max(anchor, firstVisibleMessageId);
    beforeLimit = numBefore;
    afterLimit = numAfter + 1;
  } else if (needBeforeQuery) {
    beforeAnchor = anchor - notInc;
    beforeLimit = numBefore;
    if (!anchoredToRight) beforeLimit += inc;
  } else if (needAfterQuery) {
    afterAnchor = Math.max(anchor + notInc, firstVisibleMessageId);
    afterLimit = numAfter + inc;
  }
  let rows: number[];
  const beforeRows = needBeforeQuery ? descLimit(matching, anchoredToRight ? null : beforeAnchor, beforeLimit) : [];
  const afterRows = needAfterQuery ? ascLimit(matching, anchoredToLeft ? null : afterAnchor, afterLimit) : [];
  if (needBothSides) rows = [...beforeRows, ...afterRows];
  else if (needBeforeQuery) rows = beforeRows;
  else if (needAfterQuery) rows = afterRows;
  else rows = matching.filter((id) => id === anchor);
  // The outer "ORDER BY message_id ASC".
  rows.sort((a, b) => a - b);

  // ---- post_process_limited_query ----
  const visibleRows = firstVisibleMessageId > 0 ? rows.filter((id) => id >= firstVisibleMessageId) : rows;
  const rowsLimited = visibleRows.length !== rows.length;
  let before: number[];
  let anchorRows: number[];
  let after: number[];
  let postNumAfter = numAfter;
  if (anchoredToRight) {
    postNumAfter = 0;
    before = visibleRows.slice();
    anchorRows = [];
    after = [];
  } else {
    before = visibleRows.filter((id) => id < anchor);
    anchorRows = visibleRows.filter((id) => id === anchor);
    after = visibleRows.filter((id) => id > anchor);
  }
  // Python: before_rows[-1 * num_before:] (num_before > 0 here).
  if (numBefore) before = before.slice(before.length - Math.min(numBefore, before.length));
  if (postNumAfter) after = after.slice(0, postNumAfter);
  const foundOldest = anchoredToLeft || before.length < numBefore;
  const foundNewest = anchoredToRight || after.length < postNumAfter;
  return {
    ids: [...before, ...anchorRows, ...after],
    foundAnchor: anchorRows.length === 1,
    foundOldest,
    foundNewest,
    historyLimited: rowsLimited && foundOldest,
  };
}
