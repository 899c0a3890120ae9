/**
 * @module queries/unread
 * The /register unread_msgs summary, from bitmaps: unread = personal history AND NOT
 * read, minus channels whose subscription is inactive; newest 50,000 kept, like
 * Zulip's MAX_UNREAD_MESSAGES. Muted channels/topics are listed but not counted.
 */
import { RoaringBitmap32, valueRange, type Bitmap } from "../index/bitmap-store.js";
import { key } from "../index/keys.js";
import { mentionedSet, mutedSet, type PlanContext } from "../narrow/plan.js";
import type { MessageMeta } from "../types.js";
import type { StoreState } from "../state.js";

/** A message's meta, falling back to its record for data written before message_meta existed. */
export function metaOf(state: StoreState, id: number): MessageMeta | undefined {
  return state.metaOf(id);
}

export const MAX_UNREAD_MESSAGES = 50000;

export interface UnreadSummary {
  readonly count: number;
  readonly pms: readonly { readonly otherUserId: number; readonly unreadMessageIds: readonly number[] }[];
  readonly streams: readonly { readonly streamId: number; readonly topic: string; readonly unreadMessageIds: readonly number[] }[];
  readonly huddles: readonly { readonly userIdsString: string; readonly unreadMessageIds: readonly number[] }[];
  readonly mentions: readonly number[];
  readonly oldUnreadsMissing: boolean;
}

/** All of the user's unread message IDs (ascending), before the 50,000 cap. */
export function unreadSet(ctx: PlanContext): Bitmap {
  const { state, user } = ctx;
  const unread = RoaringBitmap32.andNot(ctx.received.personal(user.id), state.bitmaps.get(key.userFlag(user.id, "read")));
  for (const sub of state.subsByUser.get(user.id)?.values() ?? []) {
    if (!sub.active) unread.andNotInPlace(state.bitmaps.get(key.channel(sub.channelId)));
  }
  return unread;
}

/**
 * Mentions and counts by bitmaps; the unread IDs are grouped into conversations by
 * the in-memory message -> conversation index (index/message-conversations.ts), so a
 * message's row is decoded once per process, not once per summary. Groups are listed
 * in the order of their oldest unread ID.
 */
export function unreadSummary(ctx: PlanContext): UnreadSummary {
  const { state, user } = ctx;
  const all = unreadSet(ctx);
  const oldUnreadsMissing = all.size > MAX_UNREAD_MESSAGES;
  const kept = oldUnreadsMissing ? valueRange(all, all.select(all.size - MAX_UNREAD_MESSAGES)!) : all;
  const muted = mutedSet(ctx, null);
  const personalMentions = RoaringBitmap32.or(state.bitmaps.get(key.userFlag(user.id, "mentioned")), state.bitmaps.get(key.userFlag(user.id, "group_mentioned")));
  // Personal mentions count even in muted conversations; the others only outside them.
  const mentioned = RoaringBitmap32.andNot(mentionedSet(ctx), muted).orInPlace(personalMentions).andInPlace(kept);

  const index = state.messageConversations;
  const groups = new Map<number, number[]>();
  for (const id of kept.toUint32Array()) {
    const ordinal = index.ordinalOf(id);
    if (ordinal === 0) continue;
    const ids = groups.get(ordinal);
    if (ids) ids.push(id);
    else groups.set(ordinal, [id]);
  }
  const pms = new Map<number, number[]>();
  const streams: { streamId: number; topic: string; unreadMessageIds: number[] }[] = [];
  const huddles = new Map<string, number[]>();
  let count = 0;
  for (const [ordinal, ids] of groups) {
    const { where, topic } = index.conversation(ordinal);
    if (where > 0) {
      streams.push({ streamId: where, topic, unreadMessageIds: ids });
      // A topic is muted or not as a whole (muted sets are unions of whole topics and channels).
      if (!muted.has(ids[0]!)) count += ids.length;
      continue;
    }
    count += ids.length;
    const members = state.conversations.get(-where)?.userIds ?? [];
    if (members.length <= 2) {
      const other = members.find((m) => m !== user.id) ?? user.id;
      pms.set(other, [...(pms.get(other) ?? []), ...ids]);
    } else {
      const k = members.join(",");
      huddles.set(k, [...(huddles.get(k) ?? []), ...ids]);
    }
  }
  return {
    count,
    pms: [...pms].map(([otherUserId, unreadMessageIds]) => ({ otherUserId, unreadMessageIds })),
    streams,
    huddles: [...huddles].map(([userIdsString, unreadMessageIds]) => ({ userIdsString, unreadMessageIds })),
    mentions: mentioned.toArray(),
    oldUnreadsMissing,
  };
}
