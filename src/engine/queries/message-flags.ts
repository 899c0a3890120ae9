/**
 * @module queries/message-flags
 * The API flag list of messages for one user, read from the per-user bitmaps.
 * Messages without a row (shared history) are ["read", "historical"], like Zulip.
 */
import { RoaringBitmap32, type ReadonlyBitmap } from "../index/bitmap-store.js";
import { key } from "../index/keys.js";
import type { ReceivedSets } from "../received.js";
import type { StoreState } from "../state.js";

/** Every flag name the API knows, in Zulip's bit order (plus the deprecated alias). */
export const API_FLAGS = [
  "read",
  "starred",
  "collapsed",
  "mentioned",
  "stream_wildcard_mentioned",
  "topic_wildcard_mentioned",
  "group_mentioned",
  "has_alert_word",
  "historical",
  "wildcard_mentioned",
] as const;
export type ApiFlag = (typeof API_FLAGS)[number];

/** Flags a client may change. */
export const EDITABLE_FLAGS: readonly ApiFlag[] = ["read", "starred", "collapsed"];

/** Flag lists are interned per bitmask: equal flags are the same (frozen) array. */
const INTERNED = new Map<number, readonly ApiFlag[]>();
const NO_ROW: readonly ApiFlag[] = Object.freeze(["read", "historical"]);

function flagsForMask(mask: number): readonly ApiFlag[] {
  let flags = INTERNED.get(mask);
  if (!flags) {
    const list: ApiFlag[] = [];
    API_FLAGS.forEach((name, bit) => {
      if (mask & (1 << bit)) list.push(name);
    });
    INTERNED.set(mask, (flags = Object.freeze(list)));
  }
  return flags;
}

/**
 * Flags of a window of messages for one user, from bitmaps alone (no records read):
 * each flag bitmap is intersected with the window once. `allRows` says the window
 * came from the user's personal history, so every message has a row.
 */
export function flagsForWindow(state: StoreState, received: ReceivedSets, userId: number, realmId: number, ids: readonly number[], allRows: boolean): (readonly ApiFlag[])[] {
  if (ids.length === 0) return [];
  const b = state.bitmaps;
  const window = new RoaringBitmap32(ids);
  const hit = (bitmap: ReadonlyBitmap) => RoaringBitmap32.and(window, bitmap);
  const historical = hit(b.get(key.userFlag(userId, "historical")));
  const rows = allRows
    ? window
    : RoaringBitmap32.orMany([hit(received.channelPart(userId)), hit(b.get(key.userFlag(userId, "dm"))), historical, hit(b.get(key.sender(userId)))]);
  const parts: [ReadonlyBitmap, number][] = [
    [hit(b.get(key.userFlag(userId, "read"))), 0],
    [hit(b.get(key.userFlag(userId, "starred"))), 1],
    [hit(b.get(key.userFlag(userId, "collapsed"))), 2],
    [hit(b.get(key.userFlag(userId, "mentioned"))), 3],
    [hit(b.get(key.streamWildcard(realmId))).andNotInPlace(historical), 4],
    [hit(b.get(key.userFlag(userId, "topic_wildcard_mentioned"))), 5],
    [hit(b.get(key.userFlag(userId, "group_mentioned"))), 6],
    [hit(b.get(key.userFlag(userId, "has_alert_word"))), 7],
    [historical, 8],
  ];
  const masks = new Map<number, number>();
  for (const [bitmap, bit] of parts) for (const id of bitmap) masks.set(id, (masks.get(id) ?? 0) | (1 << bit));
  const wildcardBits = (1 << 4) | (1 << 5);
  return ids.map((id) => {
    if (!rows.has(id)) return NO_ROW;
    let mask = masks.get(id) ?? 0;
    if (mask & wildcardBits) mask |= 1 << 9;
    return flagsForMask(mask);
  });
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

  constructor(streamWildcard: boolean) {
    this.#base = streamWildcard ? (1 << 4) | (1 << 9) : 0;
  }

  /** Records one per-user bit (a key.userFlag key) the send wrote. */
  record(userId: number, flag: string): void {
    const bit = (API_FLAGS as readonly string[]).indexOf(flag);
    if (bit < 0) return;
    let mask = (this.#masks.get(userId) ?? 0) | (1 << bit);
    if (bit === 5) mask |= 1 << 9;
    this.#masks.set(userId, mask);
  }

  flagsFor(userId: number): readonly ApiFlag[] {
    return flagsForMask(this.#base | (this.#masks.get(userId) ?? 0));
  }
}
