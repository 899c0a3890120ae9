/**
 * @module narrow/lazy
 * A narrow's matching IDs evaluated only as far as a window needs them. Instead of
 * intersecting whole sets, the most selective positive step (the "driver") is walked
 * from the anchor with rank/select, a chunk of its IDs at a time: each chunk is
 * intersected with the other positive steps and the universe and has the complements
 * removed, and chunks double in size until the window is full, so the cost follows the
 * distance walked, never the size of the sets. A plan without positive steps walks its
 * universe; complements that cover long runs (a user's read set is "everything up to
 * X" plus scattered IDs) are jumped over with a rank-based search instead of walked.
 *
 * Invariant: a MatchingSet answers exactly what executePlan's bitmap would; the
 * property tests against the brute-force reference check both.
 */
import { restrictedRange, sliceByRank, type Bitmap, type ReadonlyBitmap } from "../index/bitmap-store.js";
import { universeOf, type Plan, type PlanContext } from "./plan.js";

const U32_MAX = 0xffffffff;
/** The first chunk is the window's size, at least this many IDs. */
const MIN_CHUNK = 32;
/**
 * ...with this margin: a chunk of exactly `limit` driver IDs fills the window only if
 * every one of them matches, so any filtering cost a second chunk (first_unread's 150
 * after: 138 found in the first, then a second range operation for the last 12).
 */
const FIRST_MARGIN = 1.25;

/**
 * The next chunk's size: enough for what is missing at the acceptance rate seen so far
 * (with a margin), eight times the last when nothing matched yet, never less than the
 * last: a walk takes a few chunks, and a narrow that matches little near the anchor
 * soon becomes one pass over the rest of the driver (what executePlan would do).
 */
function nextSpan(span: number, examined: number, got: number, limit: number): number {
  if (got === 0) return span * 8;
  const estimate = Math.ceil(((limit - got) * examined * 1.25) / got) + MIN_CHUNK;
  return Math.max(span, estimate);
}

/** The ordered operations a window needs from a narrow's matching set. */
export interface MatchingSet {
  /** The last `limit` matching IDs <= maxInclusive (null: no bound), ascending. */
  lastUpTo(maxInclusive: number | null, limit: number): number[];
  /** The first `limit` matching IDs >= minInclusive (null: no bound), ascending. */
  firstFrom(minInclusive: number | null, limit: number): number[];
  has(id: number): boolean;
}

/** A materialised bitmap as a MatchingSet: rank/select slices. */
export function bitmapSet(set: ReadonlyBitmap): MatchingSet {
  return {
    lastUpTo(maxInclusive, limit) {
      if (limit <= 0 || (maxInclusive !== null && maxInclusive < 0)) return [];
      const end = maxInclusive === null || maxInclusive >= U32_MAX ? set.size : set.rank(maxInclusive);
      const start = Math.max(0, end - limit);
      return sliceByRank(set, start, end - start);
    },
    firstFrom(minInclusive, limit) {
      if (limit <= 0) return [];
      if (minInclusive !== null && minInclusive > U32_MAX) return [];
      const start = minInclusive === null || minInclusive <= 0 ? 0 : set.rank(minInclusive - 1);
      return sliceByRank(set, start, limit);
    },
    has: (id) => id >= 0 && id <= U32_MAX && set.has(id),
  };
}

/** Smallest y >= x not in `set` (IDs in a long run of `set` are skipped in O(log run) rank calls). */
export function nextAbsent(set: ReadonlyBitmap, x: number): number {
  if (!set.has(x)) return x;
  const before = x === 0 ? 0 : set.rank(x - 1);
  // Every ID of [x, y] is in the set iff rank(y) - rank(x - 1) = y - x + 1.
  const full = (y: number) => set.rank(y) - before === y - x + 1;
  const max = set.maximum();
  let step = 1;
  let lo = x; // known full up to lo
  while (lo + step <= max && full(lo + step)) {
    lo += step;
    step *= 2;
  }
  let hi = Math.min(lo + step, max + 1); // first candidate known not full (or past the set)
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (full(mid)) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** Largest y <= x not in `set`, or -1 (IDs in a long run are skipped as in nextAbsent). */
export function prevAbsent(set: ReadonlyBitmap, x: number): number {
  if (x < 0) return -1;
  if (!set.has(x)) return x;
  const upTo = set.rank(x);
  // Every ID of [y, x] is in the set iff rank(x) - rank(y - 1) = x - y + 1.
  const full = (y: number) => upTo - (y === 0 ? 0 : set.rank(y - 1)) === x - y + 1;
  const min = set.minimum();
  let step = 1;
  let hi = x; // known full down to hi
  while (hi - step >= min && full(hi - step)) {
    hi -= step;
    step *= 2;
  }
  let lo = Math.max(hi - step, min - 1); // known not full (or below the set)
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (full(mid)) hi = mid;
    else lo = mid;
  }
  return lo;
}

/**
 * The plan's matching set, lazily. `extraComplements` are removed too (first_unread's
 * read and muted sets). A plan that is one shared-history channel step is that bitmap.
 * `floor` is an ID below which nothing can match (narrow/first-unread.ts matchFloor):
 * walks start there, and a walk down from below it returns at once.
 */
export function lazyMatching(
  ctx: PlanContext,
  plan: Plan,
  extraComplements: readonly ReadonlyBitmap[] = [],
  floor = 0,
): MatchingSet {
  // With a topic, planNarrow's topic step is the named channel's own topic bitmap, a
  // subset of that channel's: the channel step then removes nothing (channel+topic
  // becomes one bitmap, sliced by rank).
  const topicInChannel = plan.steps.some((s) => !s.complement && s.term.kind === "topic");
  const namedChannel = topicInChannel ? plan.steps.find((s) => !s.complement && s.term.kind === "channel") : undefined;
  const positives = plan.steps.filter((s) => !s.complement && s !== namedChannel).map((s) => s.bitmap);
  // Deduplicated: first_unread passes the read set that an is:unread step also removes.
  const negatives = [
    ...new Set([...plan.steps.filter((s) => s.complement).map((s) => s.bitmap), ...extraComplements]),
  ].filter((b) => !b.isEmpty);
  const channelStep = plan.steps.some(
    (s) => !s.complement && (s.term.kind === "channel" || s.term.kind === "channels"),
  );
  if (positives.length === 1 && negatives.length === 0 && plan.universe === "shared" && channelStep)
    return bitmapSet(positives[0]!);

  positives.sort((a, b) => a.size - b.size);
  const universeIsDriver = positives.length === 0;
  const driver = universeIsDriver ? universeOf(ctx, plan.universe) : positives[0]!;
  const others = positives.slice(1);

  /** Narrows a chunk of driver IDs, in place, to those that match: every other step applied. */
  const restrict = (part: Bitmap): void => {
    for (const other of others) {
      if (part.isEmpty) return;
      part.andInPlace(other);
    }
    if (!universeIsDriver && !part.isEmpty) {
      if (plan.universe === "personal") ctx.received.restrictToPersonalInPlace(ctx.user.id, part);
      else if (!channelStep) part.andInPlace(universeOf(ctx, "shared"));
    }
    for (const negative of negatives) {
      if (part.isEmpty) break;
      part.andNotInPlace(negative);
    }
  };

  // Chunks are ID ranges sized by the driver's mean density: rank() and select() cost
  // microseconds inside dense (bitset) containers, a range intersection does not. A
  // chunk's driver IDs are counted to size the next one.
  let density = 0;
  const widthOf = (span: number): number => {
    if (density === 0) density = driver.size / (driver.maximum() - driver.minimum() + 1);
    return Math.max(1, Math.ceil(span / density));
  };

  return {
    lastUpTo(maxInclusive, limit) {
      if (limit <= 0 || driver.isEmpty) return [];
      let hi = maxInclusive === null ? driver.maximum() : Math.min(maxInclusive, driver.maximum());
      if (hi < floor) return [];
      const min = Math.max(driver.minimum(), floor);
      const chunks: number[][] = [];
      let got = 0;
      let examined = 0;
      let span = Math.max(Math.ceil(limit * FIRST_MARGIN), MIN_CHUNK);
      while (got < limit && hi >= min) {
        for (const negative of negatives) hi = prevAbsent(negative, hi);
        if (hi < min) break;
        const lo = Math.max(min, hi - widthOf(span) + 1);
        const chunk = restrictedRange(driver, lo, hi + 1, restrict, limit - got, true);
        examined += chunk.examined;
        if (chunk.ids.length > 0) chunks.push(chunk.ids);
        got += chunk.ids.length;
        if (lo === min) break;
        hi = lo - 1;
        span = nextSpan(span, examined, got, limit);
      }
      if (chunks.length === 1) return chunks[0]!;
      const out: number[] = [];
      for (let i = chunks.length - 1; i >= 0; i--) for (const id of chunks[i]!) out.push(id);
      return out;
    },
    firstFrom(minInclusive, limit) {
      if (limit <= 0 || driver.isEmpty) return [];
      if (minInclusive !== null && minInclusive > U32_MAX) return [];
      let lo = Math.max(minInclusive === null ? driver.minimum() : Math.max(minInclusive, driver.minimum()), floor);
      const max = driver.maximum();
      const out: number[] = [];
      let examined = 0;
      let span = Math.max(Math.ceil(limit * FIRST_MARGIN), MIN_CHUNK);
      while (out.length < limit && lo <= max) {
        for (const negative of negatives) lo = nextAbsent(negative, lo);
        if (lo > max) break;
        const hi = Math.min(max, lo + widthOf(span) - 1);
        const chunk = restrictedRange(driver, lo, hi + 1, restrict, limit - out.length, false);
        examined += chunk.examined;
        for (const id of chunk.ids) out.push(id);
        if (hi === max) break;
        lo = hi + 1;
        span = nextSpan(span, examined, out.length, limit);
      }
      return out;
    },
    has(id) {
      if (id < floor || id < 0 || id > U32_MAX || !driver.has(id)) return false;
      // Probes, no range operation: restrict's steps for a one-ID chunk.
      for (const other of others) if (!other.has(id)) return false;
      for (const negative of negatives) if (negative.has(id)) return false;
      if (universeIsDriver) return true;
      if (plan.universe === "shared") return channelStep || universeOf(ctx, "shared").has(id);
      return restrictedRange(driver, id, id + 1, restrict, 1, false).ids.length === 1;
    },
  };
}
