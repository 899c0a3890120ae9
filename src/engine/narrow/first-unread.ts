/**
 * @module narrow/first-unread
 * A user's oldest unread message in their personal history: min(personal \ read).
 * Every narrow that requires unread over personal history (is:unread, the first_unread
 * probe) matches nothing below it, so lazy walks start there instead of jumping over
 * the read runs each time, and a backward walk from below it ends at once.
 *
 * Kept exact by validation, not by event handlers: the memo records the read bitmap's
 * version and the personal set's stamp; any flag change, historical row, direct
 * message, own send or subscription change invalidates it (a mark-unread of an older
 * message so moves the position back). New channel messages only add IDs above
 * everything, so they leave a found position valid and extend an "all read" one.
 */
import type { NarrowReader } from "../directory.js";
import type { ReadonlyBitmap } from "../index/bitmap-store.js";
import { RoaringBitmap32, valueRange } from "../index/bitmap-store.js";
import { key } from "../index/keys.js";
import type { Plan, PlanContext } from "./plan.js";
import { nextAbsent } from "./lazy.js";

/** The smallest ID >= from in `personal` and not in `read`, or null. */
function firstUnreadFrom(personal: ReadonlyBitmap, read: ReadonlyBitmap, from: number): number | null {
  if (personal.isEmpty) return null;
  const max = personal.maximum();
  // Read once: size sums every container.
  const size = personal.size;
  let lo = Math.max(from, personal.minimum());
  let span = 64;
  while (lo <= max) {
    lo = nextAbsent(read, lo);
    if (lo > max) return null;
    const startRank = lo === 0 ? 0 : personal.rank(lo - 1);
    if (startRank >= size) return null;
    const endRank = Math.min(size, startRank + span);
    const hi = personal.select(endRank - 1)!;
    const unread = valueRange(personal, lo, hi + 1).andNotInPlace(read);
    if (!unread.isEmpty) return unread.minimum();
    if (endRank === size) return null;
    lo = hi + 1;
    span *= 8;
  }
  return null;
}

/** min(personal(user) \ read(user)), or null when the user has read everything. */
export function firstUnreadPosition(ctx: PlanContext<NarrowReader>): number | null {
  const userId = ctx.user.id;
  const received = ctx.received;
  const read = ctx.state.bitmaps.get(key.userFlag(userId, "read"));
  const stamp = `${received.personalStamp(userId)}/${ctx.state.bitmaps.version(key.userFlag(userId, "read"))}`;
  const last = ctx.state.lastMessageId;
  const memo = received.firstUnreadMemo.get(userId);
  if (memo && memo.stamp === stamp && memo.upTo <= last) {
    if (memo.at === null) {
      if (memo.upTo === last) return null;
      // Only new messages since: the first unread among them, if any.
      const at = firstUnreadFrom(received.personal(userId), read, memo.upTo + 1);
      received.firstUnreadMemo.set(userId, { at, upTo: last, stamp });
      return at;
    }
    // A cheap check that the memo still names a real unread message (a send rolled back
    // after it was computed would not change the stamp).
    if (!read.has(memo.at) && received.personal(userId).has(memo.at)) return memo.at;
  }
  const at = firstUnreadFrom(received.personal(userId), read, 0);
  received.firstUnreadMemo.set(userId, { at, upTo: last, stamp });
  return at;
}

/** Past every message ID: the floor of a narrow that can match nothing. */
export const NO_MATCH_FLOOR = 0x100000000;

/**
 * The lowest ID a plan can match: the user's first unread position when the plan
 * (or `extraComplements`) excludes the user's read messages and ranges over personal
 * history, else 0.
 */
export function matchFloor(
  ctx: PlanContext<NarrowReader>,
  plan: Plan,
  extraComplements: readonly ReadonlyBitmap[] = [],
): number {
  if (plan.universe !== "personal") return 0;
  const read = ctx.state.bitmaps.get(key.userFlag(ctx.user.id, "read"));
  if (!extraComplements.includes(read) && !plan.steps.some((s) => s.complement && s.bitmap === read)) return 0;
  return firstUnreadPosition(ctx) ?? NO_MATCH_FLOOR;
}

/** For tests: the same minimum by brute force. */
export function firstUnreadBruteForce(ctx: PlanContext<NarrowReader>): number | null {
  const read = ctx.state.bitmaps.get(key.userFlag(ctx.user.id, "read"));
  const unread = RoaringBitmap32.andNot(ctx.received.personal(ctx.user.id), read);
  return unread.isEmpty ? null : unread.minimum();
}
