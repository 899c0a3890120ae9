/**
 * @module received
 * What a user received, derived instead of stored: sending to a channel writes nothing
 * per subscriber. A user's channel part is the union, over their subscription
 * intervals, of channel bitmap ∩ [from, to); their personal universe adds the direct
 * messages they are in, the messages they sent (Zulip always gives the sender a row)
 * their materialised historical rows and the rows a move between channels granted them,
 * minus the rows such a move withdrew although the intervals of the message's new
 * channel (or being its sender) derive them (index/keys.ts, actions/move-rows.ts).
 *
 * The channel part is cached per user and extended incrementally as messages arrive;
 * a subscription change (version bump) forces a rebuild, and so does a message leaving
 * or joining a channel other than by being sent (a move, a deletion: `forgetChanged`,
 * which the store calls with every change set). It may be built from an ID on
 * only (a window's flags need no more), and is then extended downward when a reader
 * needs more: at 10M, a user's first newest-window after a cold start loaded the whole
 * history of their 25 channels (3,800 chunks, 1.3 s from disk) for one window's rows.
 */
import {
  RoaringBitmap32,
  chunkStartOf,
  subtractInPlace,
  valueRange,
  type Bitmap,
  type ReadonlyBitmap,
} from "./index/bitmap-store.js";
import { BoundedCache } from "./index/bounded-cache.js";
import { key } from "./index/keys.js";
import { withdrawnRows, withdrawnVersion } from "./index/withdrawn-rows.js";
import type { ChangeSet } from "./events/change-set.js";
import type { StoreState } from "./state.js";

/** A user's oldest unread personal message as last computed, and what it depended on. */
export interface FirstUnreadMemo {
  /** The message ID, or null when everything up to `upTo` was read. */
  readonly at: number | null;
  /** lastMessageId when computed. */
  readonly upTo: number;
  /** personalStamp() and the read bitmap's version when computed. */
  readonly stamp: string;
}

interface PartKeys {
  readonly dm: string;
  readonly historical: string;
  readonly sender: string;
  readonly granted: string;
}

interface CacheEntry {
  readonly bitmap: Bitmap;
  upTo: number;
  readonly version: number;
  /** The set is complete for IDs >= from (0: whole). */
  from: number;
}

/** Byte budgets of the derived per-user sets (each cache). */
const DEFAULT_CACHE_BYTES = 128 * 1024 * 1024;

function sizeOf(bitmap: ReadonlyBitmap): number {
  return 64 + bitmap.getSerializationSizeInBytes("portable");
}

export class ReceivedSets {
  readonly #state: StoreState;
  readonly #cache: BoundedCache<number, CacheEntry>;
  readonly #personal: BoundedCache<number, { readonly bitmap: Bitmap; upTo: number; readonly stamp: string }>;
  /** Per user: where narrow/first-unread.ts found the oldest unread message (see there). */
  readonly firstUnreadMemo = new Map<number, FirstUnreadMemo>();
  readonly #partKeys = new Map<number, PartKeys>();
  /** restrictToPersonalInPlace's working set (synchronous use only). */
  readonly #scratch = new RoaringBitmap32();

  constructor(state: StoreState, cacheBytes = DEFAULT_CACHE_BYTES) {
    this.#state = state;
    this.#cache = new BoundedCache(cacheBytes);
    this.#personal = new BoundedCache(cacheBytes);
  }

  /**
   * Channel messages the user received while subscribed: all of them, or (`fromId`)
   * at least those with IDs >= fromId, lower ones possibly missing. Cached: do not mutate.
   */
  channelPart(userId: number, fromId = 0): ReadonlyBitmap {
    // Whole chunks, as the channel bitmaps load them: scrolling back through history
    // then extends the set once per chunk, not on every older window.
    const from = chunkStartOf(fromId);
    const state = this.#state;
    const version = state.subscriptionVersion.get(userId) ?? 0;
    const last = state.lastMessageId;
    let entry = this.#cache.get(userId);
    if (entry && entry.version === version) {
      if (entry.upTo < last) this.#cache.resize(userId, 4 * this.#extend(userId, entry, last));
      if (entry.from > from) {
        const older = this.#build(userId, from, entry.from);
        entry.bitmap.orInPlace(older);
        entry.from = from;
        this.#cache.resize(userId, sizeOf(older));
      }
      return entry.bitmap;
    }
    entry = { bitmap: this.#build(userId, from, last + 1), upTo: last, version, from };
    this.#cache.set(userId, entry, sizeOf(entry.bitmap));
    return entry.bitmap;
  }

  /**
   * The user's personal history: Zulip's UserMessage rows. Cached per user, rebuilt
   * when any part changes other than by new channel messages (which extend it).
   * Do not mutate.
   */
  personal(userId: number): ReadonlyBitmap {
    const channelPart = this.channelPart(userId);
    const stamp = this.#partsStamp(userId);
    const last = this.#state.lastMessageId;
    const cached = this.#personal.get(userId);
    if (cached && cached.stamp === stamp) {
      if (cached.upTo < last) {
        const fresh = valueRange(channelPart, cached.upTo + 1);
        if (!fresh.isEmpty) {
          cached.bitmap.orInPlace(fresh);
          this.#personal.resize(userId, 4 * fresh.size);
        }
        cached.upTo = last;
      }
      return cached.bitmap;
    }
    const bitmap = this.#withStored(userId, RoaringBitmap32.orMany([channelPart, ...this.#derivedParts(userId)]));
    this.#personal.set(userId, { bitmap, upTo: last, stamp }, sizeOf(bitmap));
    return bitmap;
  }

  /**
   * personal(user) ∩ x without building the personal set: the intersection is
   * distributed over its parts, so the cost follows |x|, not the user's history.
   */
  restrictToPersonal(userId: number, x: ReadonlyBitmap): Bitmap {
    if (x.isEmpty) return new RoaringBitmap32();
    const cached = this.#personal.peek(userId);
    if (cached && cached.stamp === this.#partsStamp(userId) && cached.upTo === this.#state.lastMessageId)
      return RoaringBitmap32.and(x, cached.bitmap);
    const derived = RoaringBitmap32.orMany(
      [this.channelPart(userId), ...this.#derivedParts(userId)].map((part) => RoaringBitmap32.and(x, part)),
    );
    return this.#withStored(userId, derived, x);
  }

  /**
   * x ∩ personal(user), in place (no bitmap allocated): x minus what no part of the
   * personal set holds, found in a reused scratch bitmap.
   */
  restrictToPersonalInPlace(userId: number, x: Bitmap): void {
    if (x.isEmpty) return;
    const cached = this.#personal.peek(userId);
    if (cached && cached.stamp === this.#partsStamp(userId) && cached.upTo === this.#state.lastMessageId) {
      x.andInPlace(cached.bitmap);
      return;
    }
    if (!this.#withdrawn(userId).isEmpty) {
      // Rare (a move took rows): the parts no longer simply add up.
      x.copyFrom(this.restrictToPersonal(userId, x));
      return;
    }
    const outside = this.#scratch.copyFrom(x);
    subtractInPlace(outside, this.channelPart(userId));
    for (const part of [...this.#derivedParts(userId), ...this.#storedParts(userId)]) {
      if (outside.isEmpty) return;
      subtractInPlace(outside, part);
    }
    if (!outside.isEmpty) x.andNotInPlace(outside);
  }

  /** receivedAtSend(user) ∩ x, distributed the same way. */
  restrictToReceivedAtSend(userId: number, x: ReadonlyBitmap): Bitmap {
    const b = this.#state.bitmaps;
    const k = this.#keys(userId);
    const out = RoaringBitmap32.orMany(
      [this.channelPart(userId), b.get(k.dm), b.get(k.sender)].map((part) => RoaringBitmap32.and(x, part)),
    );
    const withdrawn = this.#withdrawn(userId);
    if (!withdrawn.isEmpty) out.andNotInPlace(withdrawn);
    const granted = b.get(k.granted);
    if (!granted.isEmpty) out.orInPlace(RoaringBitmap32.and(x, granted));
    return out;
  }

  /** The user's withdrawn rows, own and grouped (usually none). */
  #withdrawn(userId: number): ReadonlyBitmap {
    return withdrawnRows(this.#state.bitmaps, userId);
  }

  /** Derived rows besides the channel part: direct messages, own messages. A move may withdraw them. */
  #derivedParts(userId: number): ReadonlyBitmap[] {
    const b = this.#state.bitmaps;
    const k = this.#keys(userId);
    return [b.get(k.dm), b.get(k.sender)];
  }

  /** Rows stored as such: historical ones, and those a move granted. */
  #storedParts(userId: number): ReadonlyBitmap[] {
    const b = this.#state.bitmaps;
    const k = this.#keys(userId);
    return [b.get(k.historical), b.get(k.granted)];
  }

  /**
   * `derived` (the user's derived rows, within `within` when given) minus withdrawn rows,
   * plus the stored rows: a historical row may be on a message whose derived row a move
   * withdrew (the user starred it afterwards), never a granted one. In place; returned.
   */
  #withStored(userId: number, derived: Bitmap, within?: ReadonlyBitmap): Bitmap {
    const withdrawn = this.#withdrawn(userId);
    if (!withdrawn.isEmpty) derived.andNotInPlace(withdrawn);
    for (const part of this.#storedParts(userId))
      if (!part.isEmpty) derived.orInPlace(within === undefined ? part : RoaringBitmap32.and(within, part));
    return derived;
  }

  /** The user's part keys, built once (every narrow over personal history checks their versions). */
  #keys(userId: number): PartKeys {
    let keys = this.#partKeys.get(userId);
    if (!keys) {
      if (this.#partKeys.size >= 100_000) this.#partKeys.clear();
      keys = {
        dm: key.userFlag(userId, "dm"),
        historical: key.userFlag(userId, "historical"),
        sender: key.sender(userId),
        granted: key.userFlag(userId, "granted"),
      };
      this.#partKeys.set(userId, keys);
    }
    return keys;
  }

  /** Changes whenever personal() changes other than by new channel messages. */
  personalStamp(userId: number): string {
    return this.#partsStamp(userId);
  }

  /** Changes whenever a part of personal() changes other than by new channel messages. */
  #partsStamp(userId: number): string {
    const b = this.#state.bitmaps;
    const k = this.#keys(userId);
    const subscriptions = this.#state.subscriptionVersion.get(userId) ?? 0;
    const rows = `${b.version(k.historical)}:${b.version(k.granted)}:${withdrawnVersion(b, userId)}`;
    return `${subscriptions}:${b.version(k.dm)}:${b.version(k.sender)}:${rows}`;
  }

  /**
   * Messages received (no historical rows; the sender always has a row, unless a move
   * took it), counting rows a move granted. A new bitmap.
   */
  receivedAtSend(userId: number): Bitmap {
    const bitmaps = this.#state.bitmaps;
    const k = this.#keys(userId);
    const out = RoaringBitmap32.orMany([this.channelPart(userId), bitmaps.get(k.dm), bitmaps.get(k.sender)]);
    const withdrawn = this.#withdrawn(userId);
    if (!withdrawn.isEmpty) out.andNotInPlace(withdrawn);
    return out.orInPlace(bitmaps.get(k.granted));
  }

  /** Forget cached sets (after a failed write, or to bound memory). */
  /** Users whose sets or memos are held, per kind (tests: after a failed batch, what a fresh open holds). */
  cachedUsers(): { readonly channelParts: number[]; readonly personal: number[]; readonly firstUnread: number[] } {
    return {
      channelParts: this.#cache.entries().map(([userId]) => userId),
      personal: this.#personal.entries().map(([userId]) => userId),
      firstUnread: [...this.firstUnreadMemo.keys()],
    };
  }

  clear(): void {
    this.#cache.clear();
    this.#personal.clear();
    this.firstUnreadMemo.clear();
  }

  /**
   * After a commit: forgets the sets of every user whose channel part the write changed
   * other than by new messages, that is where a message left or joined a channel (a
   * move) or was deleted. A cached set holding one of those IDs is stale, and so is
   * one of a user with a subscription (active or not) to a channel a message moved into:
   * their intervals may now cover it. Costs one intersection per cached user.
   */
  forgetChanged(changes: ChangeSet): void {
    if (changes.everything) {
      this.clear();
      return;
    }
    // forEach, not for-of: no entry array per message (a move names 5,000, in the turn of its write).
    const ids: number[] = [];
    changes.message.forEach((change, id) => {
      if (change.fields.has("channel") || change.fields.has("deleted")) ids.push(id);
    });
    if (ids.length === 0) return;
    const changed = RoaringBitmap32.from(ids);
    // The channels they are in now. A move's thousands are in one: the first of them names
    // it, and its bitmap takes them all off what is left to place (a meta read, or a native
    // call, per message was a tenth of a 5,000-message move's write).
    const into = new Set<number>();
    const first = changed.minimum();
    const unplaced = changed.clone();
    while (!unplaced.isEmpty) {
      const id = unplaced.minimum();
      unplaced.remove(id);
      const meta = this.#state.metaOf(id);
      if (meta === undefined || meta[0] <= 0 || into.has(meta[0])) continue;
      into.add(meta[0]);
      subtractInPlace(unplaced, this.#state.bitmaps.getFrom(key.channel(meta[0]), first));
    }
    const stale = (userId: number, bitmap: ReadonlyBitmap): boolean => {
      if (bitmap.intersects(changed)) return true;
      const subs = this.#state.subsByUser.get(userId);
      if (subs) for (const channelId of into) if (subs.has(channelId)) return true;
      return false;
    };
    for (const [userId, entry] of this.#cache.entries()) if (stale(userId, entry.bitmap)) this.#forget(userId);
    for (const [userId, entry] of this.#personal.entries()) if (stale(userId, entry.bitmap)) this.#forget(userId);
  }

  #forget(userId: number): void {
    this.#cache.delete(userId);
    this.#personal.delete(userId);
    this.firstUnreadMemo.delete(userId);
  }

  /** The channel part within IDs [from, to), loading channel bitmaps only from `from` on. */
  #build(userId: number, from: number, to: number): Bitmap {
    const subs = this.#state.subsByUser.get(userId);
    if (!subs || from >= to) return new RoaringBitmap32();
    const parts: ReadonlyBitmap[] = [];
    for (const sub of subs.values()) {
      const channel = this.#state.bitmaps.getFrom(key.channel(sub.channelId), from);
      if (channel.isEmpty) continue;
      for (const iv of sub.intervals) {
        const start = Math.max(iv.from, from);
        const end = Math.min(iv.to ?? to, to);
        if (end <= start) continue;
        // The whole bitmap when the range covers it. A partly loaded one is complete
        // from `from` on, so over [start, end) too.
        if (start <= channel.minimum() && end > channel.maximum()) parts.push(channel);
        else parts.push(RoaringBitmap32.and(channel, new RoaringBitmap32().addRange(start, end)));
      }
    }
    return RoaringBitmap32.orMany(parts);
  }

  /** Adds channel messages newer than the entry; returns how many were added. */
  #extend(userId: number, entry: CacheEntry, last: number): number {
    let added = 0;
    const subs = this.#state.subsByUser.get(userId);
    if (subs) {
      for (const sub of subs.values()) {
        const open = sub.intervals[sub.intervals.length - 1];
        if (!open || open.to !== null) continue;
        const start = Math.max(entry.upTo + 1, open.from);
        const fresh = valueRange(this.#state.bitmaps.getFrom(key.channel(sub.channelId), start), start);
        if (!fresh.isEmpty) {
          entry.bitmap.orInPlace(fresh);
          added += fresh.size;
        }
      }
    }
    entry.upTo = last;
    return added;
  }
}
