/**
 * @module queries/unread
 * The /register unread_msgs summary, from bitmaps: unread = personal history AND NOT
 * read, minus channels whose subscription is inactive; newest 50,000 kept, like
 * Zulip's MAX_UNREAD_MESSAGES. Muted channels/topics are listed but not counted.
 */
import { RoaringBitmap32, sliceByRank, type Bitmap } from "../index/bitmap-store.js";
import { foldTopic, key } from "../index/keys.js";
import { mentionedSet, mutedSet, type PlanContext } from "../narrow/plan.js";
import { messageMetaOf, type Message, type MessageMeta } from "../types.js";
import type { StoreState } from "../state.js";

/** A message's meta, falling back to its record for data written before message_meta existed. */
export function metaOf(state: StoreState, id: number): MessageMeta | undefined {
  const meta = state.tables.messageMeta.get(id) as MessageMeta | undefined;
  if (meta) return meta;
  const message = state.tables.messages.get(id) as Message | undefined;
  return message ? messageMetaOf(message) : undefined;
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

export function unreadSummary(ctx: PlanContext): UnreadSummary {
  const { state, user } = ctx;
  const all = unreadSet(ctx);
  const oldUnreadsMissing = all.size > MAX_UNREAD_MESSAGES;
  const ids = sliceByRank(all, Math.max(0, all.size - MAX_UNREAD_MESSAGES), MAX_UNREAD_MESSAGES);
  const muted = mutedSet(ctx, null);
  const personalMentions = RoaringBitmap32.or(state.bitmaps.get(key.userFlag(user.id, "mentioned")), state.bitmaps.get(key.userFlag(user.id, "group_mentioned")));
  const anyMention = mentionedSet(ctx);

  const pms = new Map<number, number[]>();
  const streams = new Map<string, { streamId: number; topic: string; ids: number[] }>();
  const huddles = new Map<string, number[]>();
  const mentions: number[] = [];
  let count = 0;
  for (const id of ids) {
    const meta = metaOf(state, id);
    if (!meta) continue;
    const [where, topic] = meta;
    const isMuted = muted.has(id);
    if (personalMentions.has(id) || (anyMention.has(id) && !isMuted)) mentions.push(id);
    if (where > 0) {
      const topicKey = `${where}\u0000${foldTopic(topic)}`;
      let entry = streams.get(topicKey);
      if (!entry) streams.set(topicKey, (entry = { streamId: where, topic, ids: [] }));
      entry.ids.push(id);
      if (!isMuted) count++;
      continue;
    }
    count++;
    const conversation = state.conversations.get(-where);
    const members = conversation?.userIds ?? [];
    if (members.length <= 2) {
      const other = members.find((m) => m !== user.id) ?? user.id;
      const list = pms.get(other);
      if (list) list.push(id);
      else pms.set(other, [id]);
    } else {
      const k = members.join(",");
      const list = huddles.get(k);
      if (list) list.push(id);
      else huddles.set(k, [id]);
    }
  }
  return {
    count,
    pms: [...pms].map(([otherUserId, unreadMessageIds]) => ({ otherUserId, unreadMessageIds })),
    streams: [...streams.values()].map((s) => ({ streamId: s.streamId, topic: s.topic, unreadMessageIds: s.ids })),
    huddles: [...huddles].map(([userIdsString, unreadMessageIds]) => ({ userIdsString, unreadMessageIds })),
    mentions,
    oldUnreadsMissing,
  };
}
