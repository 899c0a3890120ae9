/**
 * @module index/withdrawn-rows
 * Rows a move between channels withdrew (actions/move-rows.ts): channel messages a user's
 * subscription intervals (or being the sender) would derive a row for, but Zulip deleted
 * the row. Two forms, whose union is the user's withdrawn set:
 * - per user, `u:<id>:withdrawn` (index/keys.ts): sets few users share;
 * - grouped: a group is a set of messages and a set of users, each of whom has every
 *   one of those messages withdrawn. Moving a topic into a channel with public history
 *   withdraws the same messages from each of its thousands of members; one group says
 *   so in two bitmaps, and moving the topic out again rewrites that group, not
 *   thousands of per-user bitmaps (at 10,000 members, reading and rewriting those was
 *   most of such a move: ~540 ms of planning, ~120 ms of writes).
 *
 * Groups live in the bitmap store, so they are written, committed, rolled back and
 * replicated (a follower forgets written keys) as every index is: `wg` holds the live
 * group IDs, `wg:<id>:m` a group's messages and `wg:<id>:u` its users. A group is
 * removed once its messages are (they moved again or were deleted). Stores written
 * before groups existed hold per-user bitmaps only, which remain valid: nothing to migrate.
 *
 * Readers cost one bitmap probe when there is no group. Otherwise each user's union is
 * memoised per bitmap store until any group key changes (their versions form the stamp).
 */
import { EMPTY, RoaringBitmap32, type BitmapStore, type ReadonlyBitmap } from "./bitmap-store.js";
import { key } from "./keys.js";
import { userFlagBitmap } from "./user-flag-holders.js";

interface BitmapGetter {
  get(key: string): ReadonlyBitmap;
}

/** Bitmap reads the memoised readers need (BitmapStore, or a reader's view of one). */
export interface WithdrawnReader extends BitmapGetter {
  version(key: string): number;
}

export interface WithdrawnGroup {
  readonly id: number;
  readonly messages: ReadonlyBitmap;
  readonly users: ReadonlyBitmap;
}

const LIST = "wg";
/** Key names built once per group (the stamp asks for both on every read while groups exist). */
const KEYS = new Map<number, readonly [string, string]>();
function keysOf(id: number): readonly [string, string] {
  let keys = KEYS.get(id);
  if (keys === undefined) {
    if (KEYS.size >= 10_000) KEYS.clear();
    KEYS.set(id, (keys = [`wg:${id}:m`, `wg:${id}:u`]));
  }
  return keys;
}
const messagesKey = (id: number) => keysOf(id)[0];
const usersKey = (id: number) => keysOf(id)[1];

/** Whether a bitmap key is one of the groups' (verify: they are user state, not derived). */
export function isWithdrawnGroupKey(name: string): boolean {
  return name === LIST || name.startsWith("wg:");
}

interface Memo {
  readonly stamp: string;
  readonly groups: readonly WithdrawnGroup[];
  /** Per user, their withdrawn set (per-user bitmap version it was built with, and the set). */
  readonly byUser: Map<number, { readonly version: number; readonly set: ReadonlyBitmap }>;
}

const MAX_MEMO_USERS = 100_000;
const memos = new WeakMap<WithdrawnReader, Memo>();

/** Changes whenever any group changes (every group key's version, and the list's). */
function stampOf(bitmaps: WithdrawnReader, list: ReadonlyBitmap): string {
  let stamp = String(bitmaps.version(LIST));
  for (const id of list) stamp += `:${id}.${bitmaps.version(messagesKey(id))}.${bitmaps.version(usersKey(id))}`;
  return stamp;
}

function memoOf(bitmaps: WithdrawnReader): Memo | null {
  const list = bitmaps.get(LIST);
  if (list.isEmpty) return null;
  const stamp = stampOf(bitmaps, list);
  let memo = memos.get(bitmaps);
  if (memo === undefined || memo.stamp !== stamp) {
    const groups = list
      .toArray()
      .map((id) => ({ id, messages: bitmaps.get(messagesKey(id)), users: bitmaps.get(usersKey(id)) }));
    memo = { stamp, groups, byUser: new Map() };
    memos.set(bitmaps, memo);
  }
  return memo;
}

/** Every live group (none in most stores). Live bitmaps: do not mutate. */
export function withdrawnGroups(bitmaps: WithdrawnReader): readonly WithdrawnGroup[] {
  return memoOf(bitmaps)?.groups ?? [];
}

/**
 * A stamp that changes whenever the user's withdrawn set may have changed (for caches
 * derived from it, received.ts).
 */
export function withdrawnVersion(bitmaps: WithdrawnReader, userId: number): string {
  const own = bitmaps.version(key.userFlag(userId, "withdrawn"));
  const memo = memoOf(bitmaps);
  return memo === null ? String(own) : `${own}/${memo.stamp}`;
}

/** The user's withdrawn rows, both forms (usually EMPTY). Do not mutate. */
export function withdrawnRows(bitmaps: WithdrawnReader, userId: number): ReadonlyBitmap {
  const own = userFlagBitmap(bitmaps, userId, "withdrawn");
  const memo = memoOf(bitmaps);
  if (memo === null) return own;
  const version = bitmaps.version(key.userFlag(userId, "withdrawn"));
  const known = memo.byUser.get(userId);
  if (known !== undefined && known.version === version) return known.set;
  const parts = memo.groups.filter((g) => g.users.has(userId)).map((g) => g.messages);
  const set = parts.length === 0 ? own : RoaringBitmap32.orMany([own, ...parts]);
  if (memo.byUser.size >= MAX_MEMO_USERS) memo.byUser.clear();
  memo.byUser.set(userId, { version, set });
  return set;
}

/** Whether the message's row was withdrawn from the user (reads the groups without the memo: access rules). */
export function isWithdrawn(bitmaps: BitmapGetter, userId: number, messageId: number): boolean {
  if (userFlagBitmap(bitmaps, userId, "withdrawn").has(messageId)) return true;
  // The list copied out, not iterated: roaring's iterator costs ~20 µs to set up even for
  // the empty list of most stores, and a content edit asks this three times.
  for (const id of bitmaps.get(LIST).toUint32Array())
    if (bitmaps.get(messagesKey(id)).has(messageId) && bitmaps.get(usersKey(id)).has(userId)) return true;
  return false;
}

/** The groups' part among some messages: per group, its messages among them and its users. */
export interface GroupedAmong {
  readonly parts: readonly { readonly ids: ReadonlyBitmap; readonly users: ReadonlyBitmap }[];
  /** The grouped withdrawn rows of one user among the messages. */
  of(userId: number): ReadonlyBitmap;
  /** Every user any of the groups names there. */
  users(): ReadonlySet<number>;
}

/** What the groups withdraw among `ids`, read once for a move's or a deletion's thousands of users. */
export function groupedAmong(bitmaps: WithdrawnReader, ids: ReadonlyBitmap): GroupedAmong {
  const parts: { ids: ReadonlyBitmap; users: ReadonlyBitmap }[] = [];
  for (const g of withdrawnGroups(bitmaps)) {
    const common = g.messages.andCardinality(ids);
    if (common === 0) continue;
    // All of them (a topic moved out and back) is `ids` itself, which set helpers answer without work.
    parts.push({ ids: common === ids.size ? ids : RoaringBitmap32.and(g.messages, ids), users: g.users });
  }
  return {
    parts,
    of(userId) {
      let out: ReadonlyBitmap = EMPTY;
      for (const part of parts) {
        if (!part.users.has(userId)) continue;
        out = out.isEmpty ? part.ids : RoaringBitmap32.or(out, part.ids);
      }
      return out;
    },
    users() {
      const out = new Set<number>();
      for (const part of parts) for (const userId of part.users) out.add(userId);
      return out;
    },
  };
}

/** Takes `ids` out of every group (their rows are rewritten, or the messages are gone); empty groups go. */
export function stripWithdrawnGroups(bitmaps: BitmapStore, ids: ReadonlyBitmap): void {
  for (const g of withdrawnGroups(bitmaps)) {
    const common = RoaringBitmap32.and(g.messages, ids);
    if (common.isEmpty) continue;
    if (common.size === g.messages.size) {
      bitmaps.removeAll(usersKey(g.id), new RoaringBitmap32(g.users));
      bitmaps.removeAll(LIST, new RoaringBitmap32([g.id]));
    }
    bitmaps.removeAll(messagesKey(g.id), common);
  }
}

/**
 * Withdraws `messages` from every one of `users` as a group: added to a group of exactly
 * those users if there is one (a topic moved back and forth between the same channels),
 * else a new one. The messages must be in no group that names any of the users for others.
 */
export function addWithdrawnGroup(bitmaps: BitmapStore, messages: ReadonlyBitmap, users: ReadonlyBitmap): void {
  if (messages.isEmpty || users.isEmpty) return;
  const same = withdrawnGroups(bitmaps).find((g) => g.users.size === users.size && g.users.isEqual(users));
  if (same !== undefined) {
    bitmaps.addAll(messagesKey(same.id), messages);
    return;
  }
  const list = bitmaps.get(LIST);
  const id = list.isEmpty ? 1 : list.maximum() + 1;
  bitmaps.addAll(usersKey(id), users);
  bitmaps.addAll(messagesKey(id), messages);
  bitmaps.add(LIST, id);
}

/** The groups as persisted (verify), bypassing the cache. */
export function persistedWithdrawnGroups(bitmaps: BitmapStore): WithdrawnGroup[] {
  return bitmaps
    .loadFromDisk(LIST)
    .toArray()
    .map((id) => ({ id, messages: bitmaps.loadFromDisk(messagesKey(id)), users: bitmaps.loadFromDisk(usersKey(id)) }));
}
