/**
 * @module actions/move-rows
 * Who keeps, gains and loses the rows (Zulip's UserMessage rows) of messages moved to
 * another channel, and how parley's derived received sets are made to say so.
 *
 * Zulip (do_update_message): users with any subscription to the old channel (active or
 * not) who are not active subscribers of the new one lose their rows; if the new
 * channel's history is protected, every active subscriber of it gets a row, marked
 * read, unless they had one; everyone else keeps what they had, flags included. Of the
 * users who lost rows, those who can no longer read the messages (all of them for a
 * private channel, only guests for a public one) get a delete_message event.
 *
 * parley derives rows instead of storing them (received.ts): after rewriteMessages the
 * messages are in the new channel's bitmap, so a user's subscription intervals there
 * (or being the sender) derive a row, and nothing in the old channel does any more. The
 * outcome above is reproduced per user and message by the `granted` bitmap, for a row
 * the new place does not derive (kept, or gained; a historical row stays historical),
 * and the `withdrawn` one, for a derived row Zulip took away. A gained row starts read
 * with no other flag (stale bits of a row lost earlier are cleared); a lost row's flag
 * bits stay, invisible without a row. A historical row stays historical wherever the
 * messages go: where the new place would derive a row, that derived row is withdrawn.
 *
 * Only users with a subscription (of any state) to either channel can change: for
 * anyone else the old place derived nothing but being the sender, and so does the new.
 *
 * Withdrawn rows are written grouped (index/withdrawn-rows.ts) where many users end up
 * with the same withdrawn set among the moved messages (a topic moved into a public
 * channel is withdrawn from each of its members): every group loses the moved messages
 * and the move's outcome is written anew, so planning and writing cost per group, not
 * per member holding a bitmap.
 */
import { EMPTY, RoaringBitmap32, type Bitmap, type BitmapStore, type ReadonlyBitmap } from "../index/bitmap-store.js";
import { key, type StoredFlag } from "../index/keys.js";
import { holdsUserFlag } from "../index/user-flag-holders.js";
import {
  addWithdrawnGroup,
  groupedAmong,
  stripWithdrawnGroups,
  withdrawnRows,
  type GroupedAmong,
} from "../index/withdrawn-rows.js";
import type { StoreState } from "../state.js";
import { ROLE, type Channel, type Subscription } from "../types.js";

/** Flags a gained row must not inherit from a row the user lost earlier (Zulip's new row is read only). */
const STALE_ON_GAIN: readonly StoredFlag[] = [
  "starred",
  "collapsed",
  "mentioned",
  "group_mentioned",
  "topic_wildcard_mentioned",
  "has_alert_word",
];

/** What a channel move does to rows, decided before the messages move and applied after. */
export interface ChannelMoveRows {
  /** Users whose rows Zulip deletes (users_losing_usermessages). */
  readonly rowLosers: ReadonlySet<number>;
  /**
   * Users who may no longer read the messages (users_losing_access): they get delete_message.
   * A set built while planning (a staged move's earlier turns): the write asks it of up to every user.
   */
  readonly losingAccess: ReadonlySet<number>;
  /**
   * Whether a user had a row for `targetId` before the move; undefined when the move
   * does not change their rows (read them afterwards).
   */
  hadTargetRow(userId: number): boolean | undefined;
  /** Writes the bits; call inside the write, after the messages moved. */
  apply(): void;
}

/** One kind of row bits of one user among the moved messages: what there is, what there should be. */
interface RowBits {
  readonly want: ReadonlyBitmap;
  readonly have: ReadonlyBitmap;
}

interface UserRows {
  readonly userId: number;
  readonly before: ReadonlyBitmap;
  readonly after: ReadonlyBitmap;
  readonly historical: RowBits;
  readonly granted: RowBits;
}

/** A user's withdrawn rows among the moved messages after the move, and those of their own bitmap before. */
interface WithdrawnAfter {
  readonly after: ReadonlyBitmap;
  readonly own: ReadonlyBitmap;
}

/**
 * Fewest users sharing a withdrawn set that are written as a group (fewer: per-user
 * bitmaps, as stores before groups hold). A setting so that tests can write either form
 * and compare what readers see.
 */
export const WITHDRAWN_GROUPING = { minUsers: 32 };

const NO_GROUPS: GroupedAmong = { parts: [], of: () => EMPTY, users: () => new Set() };

/** The smallest and largest of a set of IDs (asked once for a move's thousands of users). */
interface IdRange {
  readonly min: number;
  readonly max: number;
}

/**
 * The part of `ids` a subscription's intervals cover: `ids` itself or EMPTY when the
 * intervals cover all or none of its range (the usual cases, no bitmap built).
 */
function covered(
  ids: ReadonlyBitmap,
  sub: Subscription | undefined,
  range: IdRange | null = ids.isEmpty ? null : { min: ids.minimum(), max: ids.maximum() },
): ReadonlyBitmap {
  if (!sub || range === null) return EMPTY;
  const { min, max } = range;
  let parts: Bitmap | null = null;
  for (const iv of sub.intervals) {
    const to = iv.to ?? Number.POSITIVE_INFINITY;
    if (iv.from <= min && to > max) return ids;
    if (to <= min || iv.from > max) continue;
    const range = new RoaringBitmap32().addRange(iv.from, Math.min(to, max + 1));
    (parts ??= new RoaringBitmap32()).orInPlace(RoaringBitmap32.and(ids, range));
  }
  return parts ?? EMPTY;
}

function or(a: ReadonlyBitmap, b: ReadonlyBitmap): ReadonlyBitmap {
  if (a.isEmpty || a === b) return b;
  if (b.isEmpty) return a;
  return RoaringBitmap32.or(a, b);
}

function andNot(a: ReadonlyBitmap, b: ReadonlyBitmap): ReadonlyBitmap {
  if (a.isEmpty || b.isEmpty) return a;
  if (a === b) return EMPTY;
  return RoaringBitmap32.andNot(a, b);
}

function and(a: ReadonlyBitmap, b: ReadonlyBitmap): ReadonlyBitmap {
  if (a.isEmpty || b.isEmpty) return EMPTY;
  if (a === b) return a;
  return RoaringBitmap32.and(a, b);
}

function same(a: ReadonlyBitmap, b: ReadonlyBitmap): boolean {
  return a === b || (a.isEmpty && b.isEmpty) || a.isEqual(b);
}

/**
 * A user's rows among `ids` as the store derives them now: their intervals in
 * `channelId` (where the messages are), being the sender, historical and granted rows,
 * minus withdrawn ones (own and grouped). `sent` is the part of `ids` the user sent.
 */
export function rowsAmong(
  state: StoreState,
  userId: number,
  channelId: number,
  ids: ReadonlyBitmap,
  sent: ReadonlyBitmap,
): ReadonlyBitmap {
  const derived = or(covered(ids, state.subsByUser.get(userId)?.get(channelId)), sent);
  const stored = or(storedAmong(state, userId, "historical", ids), storedAmong(state, userId, "granted", ids));
  const withdrawn = withdrawnRows(state.bitmaps, userId);
  return or(andNot(derived, withdrawn.isEmpty ? EMPTY : RoaringBitmap32.and(withdrawn, ids)), stored);
}

/**
 * The part of `ids` in one of the user's row bitmaps. Most users have none of these: the
 * flag's holders say so, and a held key without IDs there is found without loading it.
 */
function storedAmong(state: StoreState, userId: number, flag: StoredFlag, ids: ReadonlyBitmap): ReadonlyBitmap {
  if (ids.isEmpty || !holdsUserFlag(state.bitmaps, userId, flag)) return EMPTY;
  const k = key.userFlag(userId, flag);
  if (!state.bitmaps.holdsAnyIn(k, ids.minimum(), ids.maximum())) return EMPTY;
  const stored = state.bitmaps.get(k);
  // All or none of them (a topic moved out and back: thousands of users withdrawn from
  // all of it) is `ids` itself or EMPTY, which the set helpers above answer without work.
  const common = stored.andCardinality(ids);
  return common === 0 ? EMPTY : common === ids.size ? ids : RoaringBitmap32.and(stored, ids);
}

/**
 * Decides, before `moved` leave `from` for `to`, every row change of the move.
 * `sentBy` maps each sender of a moved message to the part of `moved` they sent.
 * `movedBefore` says whether any of them was moved between channels before (its edit
 * history names a previous channel): only such a move writes granted or withdrawn bits
 * (delete-messages.ts relies on the same), so without one nobody's are probed; at
 * 10,000 members those probes, one LMDB read each, were most of the plan.
 */
export function planChannelMoveRows(
  state: StoreState,
  from: Channel,
  to: Channel,
  moved: ReadonlyBitmap,
  sentBy: ReadonlyMap<number, ReadonlyBitmap>,
  targetId: number,
  movedBefore = true,
): ChannelMoveRows {
  const steps = planChannelMoveRowsInSteps(state, from, to, moved, sentBy, targetId, movedBefore);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}

/**
 * How many users of the two channels planChannelMoveRowsInSteps looks at between two
 * yields: 1-13 ms a step at 10,000 members on a loaded machine, a topic moved before
 * included (bench/move-rows-cpu --plan-only). A setting, so that tests plan a handful
 * of users in several steps.
 */
export const MOVE_ROWS_STEP = { users: 1000 };

/**
 * planChannelMoveRows, yielding after every MOVE_ROWS_STEP.users users of the two
 * channels, so that a staged move can plan its rows over several turns of the event loop
 * (a topic moved before, moved into or out of a 10,000-member channel: 12-120 ms of CPU for
 * the whole plan in one turn on a loaded machine). It reads the state as it goes: the caller must drop the plan when
 * a write committed between two steps changed what it reads (move-staging's spoiling).
 */
export function* planChannelMoveRowsInSteps(
  state: StoreState,
  from: Channel,
  to: Channel,
  moved: ReadonlyBitmap,
  sentBy: ReadonlyMap<number, ReadonlyBitmap>,
  targetId: number,
  movedBefore = true,
): Generator<void, ChannelMoveRows, void> {
  const movedRows = (userId: number, flag: "granted" | "withdrawn", ids: ReadonlyBitmap) =>
    movedBefore ? storedAmong(state, userId, flag, ids) : EMPTY;
  const grouped = movedBefore ? groupedAmong(state.bitmaps, moved) : NO_GROUPS;
  /** Users whose withdrawn rows among `moved` are written anew: the groups' users and whoever changes. */
  const withdrawnAfter = new Map<number, WithdrawnAfter>();
  const protectedTarget = !to.historyPublicToSubscribers;
  const rowLosers = new Set<number>();
  const losingAccess = new Set<number>();
  const targetRows = new Map<number, boolean>();
  const changes: UserRows[] = [];
  const movedHasTarget = moved.has(targetId);
  const movedRange = moved.isEmpty ? null : { min: moved.minimum(), max: moved.maximum() };
  const loses = (userId: number) => {
    rowLosers.add(userId);
    if (to.inviteOnly || state.users.get(userId)?.role === ROLE.GUEST) losingAccess.add(userId);
  };
  let looked = 0;
  for (const userId of state.usersOfRealm(from.realmId)) {
    const subs = state.subsByUser.get(userId);
    const subFrom = subs?.get(from.id);
    const subTo = subs?.get(to.id);
    if (subFrom === undefined && subTo === undefined) continue;
    if (++looked % MOVE_ROWS_STEP.users === 0) yield;
    const sent = sentBy.get(userId) ?? EMPTY;
    const coveredFrom = covered(moved, subFrom, movedRange);
    const withdrawnOwn = movedRows(userId, "withdrawn", moved);
    const withdrawnGrouped = grouped.of(userId);
    const withdrawnHave = or(withdrawnOwn, withdrawnGrouped);
    if (subTo === undefined && coveredFrom === moved && sent.isEmpty && withdrawnHave.isEmpty) {
      // Received only from the old channel (most users leaving a large channel for a small
      // one): the row goes, and the new place derives none, so no bit is written, whatever
      // historical or granted bits may lie under their intervals (neither counts there).
      loses(userId);
      targetRows.set(userId, movedHasTarget);
      continue;
    }
    if (
      subTo === undefined &&
      coveredFrom === moved &&
      sent.isEmpty &&
      storedAmong(state, userId, "historical", withdrawnHave).isEmpty
    ) {
      // The same, with rows withdrawn (a topic moved into the old channel and out again):
      // they lose the rows they had, and the withdrawn bits go (the new place derives none).
      loses(userId);
      targetRows.set(userId, !withdrawnHave.has(targetId));
      withdrawnAfter.set(userId, { after: EMPTY, own: withdrawnOwn });
      continue;
    }
    const coveredTo = covered(moved, subTo, movedRange);
    const activeInTarget = subTo?.active === true;
    if (coveredFrom === moved && coveredTo === moved && activeInTarget && withdrawnHave.isEmpty) {
      // Received in both places (the common case): nothing changes, so whether they have
      // the target's row is the same after the move (hadTargetRow leaves it to be read then).
      continue;
    }
    // A granted row is only where the intervals do not cover the message; a historical
    // one there or where a derived row was withdrawn.
    const uncovered = andNot(moved, coveredFrom);
    const historicalHave = storedAmong(state, userId, "historical", or(uncovered, withdrawnHave));
    const grantedHave = movedRows(userId, "granted", uncovered);
    const stored = or(historicalHave, grantedHave);
    const before = or(andNot(or(coveredFrom, sent), withdrawnHave), stored);
    const derivedAfter = or(coveredTo, sent);
    const loser = subFrom !== undefined && !activeInTarget;
    targetRows.set(userId, before.has(targetId));
    if (loser) loses(userId);
    const after = loser ? EMPTY : activeInTarget && protectedTarget ? moved : before;
    // A historical row stays one (flag included), standing in for a derived row it withdraws.
    const historicalWant = and(after, historicalHave);
    const historical = { want: historicalWant, have: historicalHave };
    const granted = { want: andNot(andNot(after, derivedAfter), historicalWant), have: grantedHave };
    const withdrawn = { want: or(andNot(derivedAfter, after), and(derivedAfter, historicalWant)), have: withdrawnHave };
    // The groups lose the moved messages: what they withdrew from this user is written again.
    if (!same(withdrawn.want, withdrawn.have) || !withdrawnGrouped.isEmpty)
      withdrawnAfter.set(userId, { after: withdrawn.want, own: withdrawnOwn });
    // Only bits to write make a change: a row lost with nothing stored needs none.
    const unchanged = [historical, granted].every((bits) => same(bits.want, bits.have));
    if (unchanged && andNot(after, before).isEmpty) continue;
    changes.push({ userId, before, after, historical, granted });
  }
  // A group's user the loop passed over (a sender without a subscription to either
  // channel) keeps what it withdrew from them.
  for (const userId of grouped.users()) {
    if (withdrawnAfter.has(userId)) continue;
    const own = movedRows(userId, "withdrawn", moved);
    withdrawnAfter.set(userId, { after: or(own, grouped.of(userId)), own });
  }
  // The bits to write, worked out now and in steps of their own (a staged move's planning
  // turns), so that the write only writes them: grouping 10,000 users' withdrawn sets, a
  // native comparison each, was a third of a topic's write moving it back into a big channel.
  yield;
  const rows = new RowWriter();
  let worked = 0;
  for (const change of changes) {
    applyUserRows(rows, change);
    if (++worked % MOVE_ROWS_STEP.users === 0) yield;
  }
  const groups = yield* planWithdrawn(rows, withdrawnAfter);
  const groupsHeldMoved = grouped.parts.length > 0;
  return {
    rowLosers,
    losingAccess,
    hadTargetRow: (userId) => targetRows.get(userId),
    apply() {
      // The groups lose the moved messages (when any held them) before the new ones are added.
      if (groupsHeldMoved) stripWithdrawnGroups(state.bitmaps, moved);
      for (const group of groups) addWithdrawnGroup(state.bitmaps, group.ids, group.users);
      rows.flush(state.bitmaps);
    },
  };
}

/**
 * Collects a move's row writes, keys grouped by the IDs they gain or lose (most users
 * get or lose the same moved set), and writes them (BitmapStore defers the chunks of
 * many keys with the same IDs to later writes). A key gets disjoint IDs from its add and its remove, so
 * their order does not matter.
 */
const MAX_COMPARED_GROUPS = 8;

/**
 * The entry of `groups` (by the sets' sizes) for a set equal to `ids`, made by `make` if
 * none: most users of a move get or lose the same moved set, often the very same bitmap.
 */
function groupOfSet<T extends { readonly ids: ReadonlyBitmap }>(
  groups: Map<number, T[]>,
  ids: ReadonlyBitmap,
  make: () => T,
): T {
  let sameSize = groups.get(ids.size);
  if (sameSize === undefined) groups.set(ids.size, (sameSize = []));
  // The first few groups of a size only: thousands of distinct sets must not compare pairwise.
  let group = sameSize.slice(0, MAX_COMPARED_GROUPS).find((g) => g.ids === ids || g.ids.isEqual(ids));
  if (group === undefined) sameSize.push((group = make()));
  return group;
}

/**
 * The withdrawn rows among the moved messages after the move: users sharing a set with at
 * least WITHDRAWN_GROUPING.minUsers others get it as a group (returned, for the write to
 * add), and each other user's own bitmap is made to hold their set (collected in `rows`).
 * Reads nothing of the store; yields every MOVE_ROWS_STEP.users users.
 */
function* planWithdrawn(
  rows: RowWriter,
  withdrawnAfter: ReadonlyMap<number, WithdrawnAfter>,
): Generator<void, { ids: ReadonlyBitmap; users: ReadonlyBitmap }[], void> {
  const sets = new Map<number, { ids: ReadonlyBitmap; users: number[] }[]>();
  let worked = 0;
  for (const [userId, { after }] of withdrawnAfter) {
    if (!after.isEmpty) groupOfSet(sets, after, () => ({ ids: after, users: [] })).users.push(userId);
    if (++worked % MOVE_ROWS_STEP.users === 0) yield;
  }
  const groups: { ids: ReadonlyBitmap; users: ReadonlyBitmap }[] = [];
  const inGroups = new Set<number>();
  for (const sameSize of sets.values())
    for (const { ids, users } of sameSize) {
      if (users.length < WITHDRAWN_GROUPING.minUsers) continue;
      groups.push({ ids, users: new RoaringBitmap32(users) });
      for (const userId of users) inGroups.add(userId);
    }
  for (const [userId, { after, own }] of withdrawnAfter) {
    const want = inGroups.has(userId) ? EMPTY : after;
    const add = andNot(want, own);
    const remove = andNot(own, want);
    if (!add.isEmpty) rows.addAll(key.userFlag(userId, "withdrawn"), add);
    if (!remove.isEmpty) rows.removeAll(key.userFlag(userId, "withdrawn"), remove);
    if (++worked % MOVE_ROWS_STEP.users === 0) yield;
  }
  return groups;
}

class RowWriter {
  /** By the IDs' size: groups of equal ID sets. */
  readonly #groups = new Map<number, { ids: ReadonlyBitmap; add: string[]; remove: string[] }[]>();

  addAll(k: string, ids: ReadonlyBitmap): void {
    this.#group(ids).add.push(k);
  }

  removeAll(k: string, ids: ReadonlyBitmap): void {
    this.#group(ids).remove.push(k);
  }

  #group(ids: ReadonlyBitmap) {
    return groupOfSet(this.#groups, ids, () => ({ ids, add: [], remove: [] }));
  }

  flush(b: BitmapStore): void {
    for (const sameSize of this.#groups.values()) {
      for (const { ids, add, remove } of sameSize) {
        b.addDeferred(add, ids);
        b.removeDeferred(remove, ids);
      }
    }
  }
}

/**
 * Writes one user's row bits. No per-user entry goes into the change set: the write
 * names every moved message with its "channel" field, and whatever keeps a user's rows
 * or flags of a message must drop them on that (a 5,000-message move would otherwise
 * list 5,000 IDs for each of thousands of users in the change log).
 */
function applyUserRows(b: RowWriter, rows: UserRows): void {
  const { userId } = rows;
  const set = (flag: StoredFlag, bits: RowBits) => {
    const add = andNot(bits.want, bits.have);
    const remove = andNot(bits.have, bits.want);
    // In bulk: thousands of users may each get or lose the 5,000 IDs of a move.
    if (!add.isEmpty) b.addAll(key.userFlag(userId, flag), add);
    if (!remove.isEmpty) b.removeAll(key.userFlag(userId, flag), remove);
  };
  set("historical", rows.historical);
  set("granted", rows.granted);
  const gained = andNot(rows.after, rows.before);
  if (!gained.isEmpty) {
    b.addAll(key.userFlag(userId, "read"), gained);
    for (const flag of STALE_ON_GAIN) b.removeAll(key.userFlag(userId, flag), gained);
  }
}
