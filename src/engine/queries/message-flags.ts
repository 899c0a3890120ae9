/**
 * @module queries/message-flags
 * The API flag list of messages for one user, read from the per-user bitmaps.
 * Messages without a row (shared history) are ["read", "historical"], like Zulip.
 */
import { RoaringBitmap32, idsView, type ReadonlyBitmap } from "../index/bitmap-store.js";
import { key, type StoredFlag } from "../index/keys.js";
import { userFlagHas } from "../index/user-flag-holders.js";
import { withdrawnRows } from "../index/withdrawn-rows.js";
import type { ReceivedSets } from "../received.js";
import type { NarrowReader } from "../directory.js";

import { API_FLAGS, type ApiFlag } from "../flags.js";

export { API_FLAGS, EDITABLE_FLAGS, type ApiFlag } from "../flags.js";

/** The bit of "read" in a flag mask (API_FLAGS' order). */
const READ_BIT = API_FLAGS.indexOf("read");

/** Flag lists are interned per bitmask (10 bits): equal flags are the same (frozen) array. */
const INTERNED: (readonly ApiFlag[] | undefined)[] = new Array<readonly ApiFlag[] | undefined>(
  1 << API_FLAGS.length,
).fill(undefined);
const NO_ROW: readonly ApiFlag[] = Object.freeze(["read", "historical"]);

function flagsForMask(mask: number): readonly ApiFlag[] {
  let flags = INTERNED[mask];
  if (!flags) {
    const list: ApiFlag[] = [];
    API_FLAGS.forEach((name, bit) => {
      if (mask & (1 << bit)) list.push(name);
    });
    INTERNED[mask] = flags = Object.freeze(list);
  }
  return flags;
}

/*
 * Reused for every window (synchronously): a roaring bitmap is a native object freed by
 * a weak callback, and allocating a dozen per query cost more than the intersections.
 */
const WINDOW = new RoaringBitmap32();
const PART = new RoaringBitmap32();
let windowIds = new Uint32Array(256);
/** One flag mask per window ID: allocating a typed array costs ~0.7 µs even for 151 IDs. */
let windowMasks = new Uint16Array(256);

/** A sorted window's IDs in a reused typed array (WINDOW.copyFrom reads it at once). */
function idsArray(ids: readonly number[]): Uint32Array {
  if (windowIds.length < ids.length) windowIds = new Uint32Array(Math.max(ids.length, windowIds.length * 2));
  for (let i = 0; i < ids.length; i++) windowIds[i] = ids[i]!;
  return windowIds.length === ids.length ? windowIds : windowIds.subarray(0, ids.length);
}

interface FlagKeys {
  readonly dm: string;
  readonly sender: string;
  readonly historical: string;
  readonly granted: string;
  readonly read: string;
  readonly starred: string;
  readonly collapsed: string;
  readonly mentioned: string;
  readonly topicWildcard: string;
  readonly groupMentioned: string;
  readonly alertWord: string;
}

/**
 * A user's flag bitmap keys, built once: a freshly concatenated key is hashed again on
 * every lookup, a dozen times per window. Bounded by clearing (rebuilding is cheap).
 */
const FLAG_KEYS = new Map<number, FlagKeys>();
const MAX_FLAG_KEY_USERS = 100_000;

function flagKeys(userId: number): FlagKeys {
  let keys = FLAG_KEYS.get(userId);
  if (!keys) {
    if (FLAG_KEYS.size >= MAX_FLAG_KEY_USERS) FLAG_KEYS.clear();
    keys = {
      dm: key.userFlag(userId, "dm"),
      sender: key.sender(userId),
      historical: key.userFlag(userId, "historical"),
      granted: key.userFlag(userId, "granted"),
      read: key.userFlag(userId, "read"),
      starred: key.userFlag(userId, "starred"),
      collapsed: key.userFlag(userId, "collapsed"),
      mentioned: key.userFlag(userId, "mentioned"),
      topicWildcard: key.userFlag(userId, "topic_wildcard_mentioned"),
      groupMentioned: key.userFlag(userId, "group_mentioned"),
      alertWord: key.userFlag(userId, "has_alert_word"),
    };
    FLAG_KEYS.set(userId, keys);
  }
  return keys;
}

/** Windows up to this many IDs test membership per ID; larger ones intersect once per flag. */
const PROBE_LIMIT = 24;
const ROW_BIT = 1 << 15;
const HISTORICAL_BIT = 1 << 8;
const STREAM_WILDCARD_BIT = 1 << 4;
const WILDCARD_BITS = STREAM_WILDCARD_BIT | (1 << 5);

/**
 * Flags of a window of messages for one user, from bitmaps alone (no records read), in
 * one pass: one mask per ID, and each flag bitmap is skipped when it is empty or lies
 * outside the window's ID range, otherwise probed per ID (small windows) or intersected
 * with the window once and merged by position. `allRows` says the window came from the
 * user's personal history, so every message has a row.
 */
export function flagsForWindow(
  state: NarrowReader,
  received: ReceivedSets,
  userId: number,
  realmId: number,
  ids: readonly number[],
  allRows: boolean,
): (readonly ApiFlag[])[] {
  const n = ids.length;
  if (n === 0) return [];
  const b = state.bitmaps;
  let sorted = true;
  let lo = ids[0]!;
  let hi = ids[0]!;
  for (let i = 1; i < n; i++) {
    const id = ids[i]!;
    if (id <= ids[i - 1]!) sorted = false;
    if (id < lo) lo = id;
    if (id > hi) hi = id;
  }
  if (windowMasks.length < n) windowMasks = new Uint16Array(Math.max(n, windowMasks.length * 2));
  const masks = windowMasks;
  masks.fill(0, 0, n);
  let windowSize = -1;
  /** Marks `bits` on the window's IDs in `bitmap`; returns how many there were (-1: not counted). */
  const mark = (bitmap: ReadonlyBitmap, bits: number): number => {
    if (bitmap.isEmpty || bitmap.maximum() < lo || bitmap.minimum() > hi) return 0;
    if (n <= PROBE_LIMIT) {
      for (let i = 0; i < n; i++) if (bitmap.has(ids[i]!)) masks[i]! |= bits;
      return -1;
    }
    if (windowSize < 0) {
      WINDOW.copyFrom(sorted ? idsArray(ids) : Uint32Array.from(ids));
      windowSize = WINDOW.size;
    }
    // One count decides: none, all, or whichever of hits and misses is smaller is
    // listed (a read set usually covers nearly all of a window).
    const common = WINDOW.andCardinality(bitmap);
    if (common === 0) return 0;
    if (common === windowSize) {
      for (let i = 0; i < n; i++) masks[i]! |= bits;
      return common;
    }
    const inverted = common > windowSize / 2;
    PART.copyFrom(WINDOW);
    if (inverted) PART.andNotInPlace(bitmap);
    else PART.andInPlace(bitmap);
    const listed = idsView(PART);
    if (sorted) {
      // Both ascending: a merge finds each listed ID's position.
      let j = 0;
      if (inverted) {
        for (let i = 0; i < n; i++) {
          if (j < listed.length && ids[i] === listed[j]) j++;
          else masks[i]! |= bits;
        }
        return common;
      }
      for (let k = 0; k < listed.length; k++) {
        const id = listed[k]!;
        while (ids[j]! < id) j++;
        masks[j]! |= bits;
      }
      return common;
    }
    const inListed = new Set(listed);
    for (let i = 0; i < n; i++) if (inListed.has(ids[i]!) !== inverted) masks[i]! |= bits;
    return common;
  };
  const k = flagKeys(userId);
  if (!allRows) {
    // Every ID received in a channel has a row: then direct and own messages add none.
    // (The channel part from the window's lowest ID on: a cold newest window then loads
    // the last chunks of the user's channels, not their whole history.)
    if (mark(received.channelPart(userId, lo), ROW_BIT) !== n) {
      mark(b.get(k.dm), ROW_BIT);
      mark(b.get(k.sender), ROW_BIT);
      mark(b.get(k.granted), ROW_BIT);
    }
    // Rows a move took away, which the channel part or the sender set still derive.
    const withdrawn = withdrawnRows(b, userId);
    if (!withdrawn.isEmpty && withdrawn.maximum() >= lo && withdrawn.minimum() <= hi)
      for (let i = 0; i < n; i++) if (withdrawn.has(ids[i]!)) masks[i]! &= ~ROW_BIT;
  }
  mark(b.get(k.historical), HISTORICAL_BIT | ROW_BIT);
  mark(b.get(k.read), 1 << 0);
  mark(b.get(k.starred), 1 << 1);
  mark(b.get(k.collapsed), 1 << 2);
  mark(b.get(k.mentioned), 1 << 3);
  mark(b.get(key.streamWildcard(realmId)), STREAM_WILDCARD_BIT);
  mark(b.get(k.topicWildcard), 1 << 5);
  mark(b.get(k.groupMentioned), 1 << 6);
  mark(b.get(k.alertWord), 1 << 7);
  const out = new Array<readonly ApiFlag[]>(n);
  for (let i = 0; i < n; i++) {
    let mask = masks[i]!;
    if (!allRows && !(mask & ROW_BIT)) {
      out[i] = NO_ROW;
      continue;
    }
    mask &= ~ROW_BIT;
    // A historical row is never stream-wildcard mentioned (it was not received at send).
    if (mask & HISTORICAL_BIT) mask &= ~STREAM_WILDCARD_BIT;
    if (mask & WILDCARD_BITS) mask |= 1 << 9;
    out[i] = flagsForMask(mask);
  }
  return out;
}

/** What a caller already knows of a user's row, saving the bitmap reads that would tell it. */
export interface KnownRow {
  /** The user received the message at send (so it is not a historical row). */
  readonly received?: boolean;
  /** The user's personal mention flags, just written by the caller. */
  readonly mentions?: readonly ("mentioned" | "group_mentioned" | "topic_wildcard_mentioned")[];
  /** The message mentions its whole channel (its record's wildcard is "stream"). */
  readonly streamWildcard?: boolean;
}

const MENTION_BITS = { mentioned: 1 << 3, topic_wildcard_mentioned: 1 << 5, group_mentioned: 1 << 6 } as const;

/**
 * A user's flags for one message they have a row for (received, or a historical row),
 * from bitmaps alone: what an event about the message tells each recipient. One
 * membership test per flag (flagsForWindow's range checks cost more than they save for
 * one ID), and none for what the caller knows: an edit's event asks this for every
 * recipient with a queue.
 */
export function rowFlags(
  state: NarrowReader,
  userId: number,
  realmId: number,
  id: number,
  known: KnownRow = {},
): readonly ApiFlag[] {
  const b = state.bitmaps;
  // Users who never held a flag's bitmap are skipped without reading it (most users, most flags).
  const has = (flag: StoredFlag) => userFlagHas(b, userId, flag, id);
  let mask = 0;
  if (has("read")) mask |= 1 << 0;
  if (has("starred")) mask |= 1 << 1;
  if (has("collapsed")) mask |= 1 << 2;
  if (known.mentions !== undefined) for (const flag of known.mentions) mask |= MENTION_BITS[flag];
  else {
    if (has("mentioned")) mask |= MENTION_BITS.mentioned;
    if (has("topic_wildcard_mentioned")) mask |= MENTION_BITS.topic_wildcard_mentioned;
    if (has("group_mentioned")) mask |= MENTION_BITS.group_mentioned;
  }
  if (has("has_alert_word")) mask |= 1 << 7;
  // A historical row is never stream-wildcard mentioned (it was not received at send).
  if (known.received !== true && has("historical")) mask |= HISTORICAL_BIT;
  else if (known.streamWildcard ?? b.get(key.streamWildcard(realmId)).has(id)) mask |= STREAM_WILDCARD_BIT;
  if (mask & WILDCARD_BITS) mask |= 1 << 9;
  return flagsForMask(mask);
}

/** A stored flag's bits in a flag mask (topic_wildcard_mentioned also sets the deprecated wildcard_mentioned). */
function maskOf(flag: string): number {
  const bit = (API_FLAGS as readonly string[]).indexOf(flag);
  if (bit < 0) return 0;
  return bit === 5 ? (1 << bit) | (1 << 9) : 1 << bit;
}

/**
 * Flags of a message just sent, for its recipients, from what the send itself wrote:
 * a new message can carry only the per-user bits its own write set (read for the
 * sender, mentions) plus the message-level stream wildcard. Computed without reading
 * any per-user bitmap, so a message event to 10,000 queues costs no bitmap loads.
 */
export class FlagsAtSend {
  readonly #masks = new Map<number, number>();
  readonly #base: number;
  /** Users born read in bulk (recordBornRead): a bitmap, not 10,000 map entries. */
  #bornRead: ReadonlyBitmap | null = null;
  /** Per-user bits written in bulk (recordForUsers): each flag's mask bits and its users. */
  readonly #bulk: { readonly mask: number; readonly users: ReadonlyBitmap }[] = [];

  constructor(streamWildcard: boolean) {
    this.#base = streamWildcard ? (1 << 4) | (1 << 9) : 0;
  }

  /** Records one per-user bit (a key.userFlag key) the send wrote. */
  record(userId: number, flag: string): void {
    const mask = maskOf(flag);
    if (mask !== 0) this.#masks.set(userId, (this.#masks.get(userId) ?? 0) | mask);
  }

  /** Records one flag's bit for many users (a group mention of thousands), without a map entry each. */
  recordForUsers(flag: string, userIds: readonly number[]): void {
    const mask = maskOf(flag);
    if (mask !== 0 && userIds.length > 0) this.#bulk.push({ mask, users: RoaringBitmap32.from(userIds) });
  }

  /** The read bit for many users (a notice born read for a channel's thousands); once per send. */
  recordBornRead(userIds: readonly number[]): void {
    if (this.#bornRead !== null) throw new Error("FlagsAtSend.recordBornRead: called twice");
    this.#bornRead = RoaringBitmap32.from(userIds);
  }

  #mask(userId: number): number {
    let mask = this.#masks.get(userId) ?? 0;
    for (const bulk of this.#bulk) if (bulk.users.has(userId)) mask |= bulk.mask;
    return this.#bornRead?.has(userId) === true ? mask | (1 << READ_BIT) : mask;
  }

  /** Whether the send wrote the user's read bit (born read), without building their flag list. */
  bornRead(userId: number): boolean {
    return (this.#mask(userId) & (1 << READ_BIT)) !== 0;
  }

  flagsFor(userId: number): readonly ApiFlag[] {
    return flagsForMask(this.#base | this.#mask(userId));
  }

  /**
   * The users the send wrote a bit for (mentions, alert words) and who were not born
   * read: the few a missed-message email may concern.
   */
  unreadUsersWithBits(): number[] {
    const out: number[] = [];
    for (const userId of this.#masks.keys()) if (!this.bornRead(userId)) out.push(userId);
    for (const bulk of this.#bulk)
      for (const userId of bulk.users) if (!this.#masks.has(userId) && !this.bornRead(userId)) out.push(userId);
    // A user in two bulk flags (a group and a topic wildcard mention) once.
    return this.#bulk.length > 1 ? [...new Set(out)] : out;
  }
}
