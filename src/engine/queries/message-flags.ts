/**
 * @module queries/message-flags
 * The API flag list of messages for one user, read from the per-user bitmaps.
 * Messages without a row (shared history) are ["read", "historical"], like Zulip.
 */
import { hasRow } from "../access.js";
import { RoaringBitmap32, type ReadonlyBitmap } from "../index/bitmap-store.js";
import { key } from "../index/keys.js";
import type { ReceivedSets } from "../received.js";
import type { StoreState } from "../state.js";
import type { Message } from "../types.js";

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

/** A reader of one user's flags; create one per request (bitmaps are looked up once). */
export function flagReader(state: StoreState, userId: number): (message: Message) => ApiFlag[] {
  const b = state.bitmaps;
  const read = b.get(key.userFlag(userId, "read"));
  const starred = b.get(key.userFlag(userId, "starred"));
  const collapsed = b.get(key.userFlag(userId, "collapsed"));
  const mentioned = b.get(key.userFlag(userId, "mentioned"));
  const topicWildcard = b.get(key.userFlag(userId, "topic_wildcard_mentioned"));
  const groupMentioned = b.get(key.userFlag(userId, "group_mentioned"));
  const alert = b.get(key.userFlag(userId, "has_alert_word"));
  const historical = b.get(key.userFlag(userId, "historical"));
  let streamWildcard: ReturnType<typeof b.get> | null = null;
  return (message) => {
    const id = message.id;
    if (!hasRow(state, userId, message)) return ["read", "historical"];
    const flags: ApiFlag[] = [];
    if (read.has(id)) flags.push("read");
    if (starred.has(id)) flags.push("starred");
    if (collapsed.has(id)) flags.push("collapsed");
    if (mentioned.has(id)) flags.push("mentioned");
    const isHistorical = historical.has(id);
    streamWildcard ??= b.get(key.streamWildcard(message.realmId));
    // Zulip gives the stream-wildcard bit only to rows created at send, never to historical ones.
    const stream = !isHistorical && streamWildcard.has(id);
    const topic = topicWildcard.has(id);
    if (stream) flags.push("stream_wildcard_mentioned");
    if (topic) flags.push("topic_wildcard_mentioned");
    if (groupMentioned.has(id)) flags.push("group_mentioned");
    if (alert.has(id)) flags.push("has_alert_word");
    if (isHistorical) flags.push("historical");
    if (stream || topic) flags.push("wildcard_mentioned");
    return flags;
  };
}

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
