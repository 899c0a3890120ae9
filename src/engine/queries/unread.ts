/**
 * @module queries/unread
 * The /register unread_msgs summary, from bitmaps: unread = personal history AND NOT
 * read, minus channels whose subscription is inactive; newest 50,000 kept, like
 * Zulip's MAX_UNREAD_MESSAGES. Muted channels/topics are listed but not counted.
 */
import { RoaringBitmap32, numbersOf, valueRange, type Bitmap } from "../index/bitmap-store.js";
import { key } from "../index/keys.js";
import { mentionedSet, mutedSet, type PlanContext } from "../narrow/plan.js";
import type { UnreadReader } from "../directory.js";

export const MAX_UNREAD_MESSAGES = 50000;

export interface UnreadSummary {
  readonly count: number;
  readonly pms: readonly { readonly otherUserId: number; readonly unreadMessageIds: readonly number[] }[];
  readonly streams: readonly {
    readonly streamId: number;
    readonly topic: string;
    readonly unreadMessageIds: readonly number[];
  }[];
  readonly huddles: readonly { readonly userIdsString: string; readonly unreadMessageIds: readonly number[] }[];
  readonly mentions: readonly number[];
  readonly oldUnreadsMissing: boolean;
}

/** All of the user's unread message IDs (ascending), before the 50,000 cap. */
export function unreadSet(ctx: PlanContext<UnreadReader>): Bitmap {
  const { state, user } = ctx;
  const unread = RoaringBitmap32.andNot(
    ctx.received.personal(user.id),
    state.bitmaps.get(key.userFlag(user.id, "read")),
  );
  for (const sub of state.channelDirectory.subscriptionsOf(user.id)) {
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
export function unreadSummary(ctx: PlanContext<UnreadReader>): UnreadSummary {
  const { state, user } = ctx;
  const all = unreadSet(ctx);
  const oldUnreadsMissing = all.size > MAX_UNREAD_MESSAGES;
  const kept = oldUnreadsMissing ? valueRange(all, all.select(all.size - MAX_UNREAD_MESSAGES)!) : all;
  const muted = mutedSet(ctx, null);
  const personalMentions = RoaringBitmap32.or(
    state.bitmaps.get(key.userFlag(user.id, "mentioned")),
    state.bitmaps.get(key.userFlag(user.id, "group_mentioned")),
  );
  // Personal mentions count even in muted conversations; the others only outside them.
  const mentioned = RoaringBitmap32.andNot(mentionedSet(ctx), muted).orInPlace(personalMentions).andInPlace(kept);

  const index = state.messageConversations;
  const ids = kept.toUint32Array();
  // Group by conversation ordinal with per-ordinal slots instead of a Map: a first pass
  // counts each group (so each group's array is allocated at its final size), a second
  // fills them; groups keep the order of their oldest unread ID.
  const ordinals = new Uint32Array(ids.length);
  for (let i = 0; i < ids.length; i++) ordinals[i] = index.ordinalOf(ids[i]!);
  const order: number[] = [];
  const slots = groupSlots(index.size);
  for (let i = 0; i < ids.length; i++) {
    const ordinal = ordinals[i]!;
    if (ordinal === 0) continue;
    if (slots[ordinal] === 0) order.push(ordinal);
    slots[ordinal]!++;
  }
  const lists: number[][] = new Array<number[]>(order.length);
  const at = new Int32Array(order.length);
  for (let g = 0; g < order.length; g++) {
    const ordinal = order[g]!;
    lists[g] = new Array<number>(slots[ordinal]!);
    // From here on the slot holds the group's position (negative, so it differs from a count).
    slots[ordinal] = -(g + 1);
  }
  for (let i = 0; i < ids.length; i++) {
    const ordinal = ordinals[i]!;
    if (ordinal === 0) continue;
    const g = -slots[ordinal]! - 1;
    lists[g]![at[g]!++] = ids[i]!;
  }
  for (const ordinal of order) slots[ordinal] = 0;
  // A topic is muted or not as a whole (muted sets are unions of whole topics and
  // channels), so one probe per muted unread message's group is enough.
  const mutedGroups = new Set<number>();
  if (muted.size > 0)
    for (const id of RoaringBitmap32.and(kept, muted).toUint32Array()) mutedGroups.add(index.ordinalOf(id));

  const pms = new Map<number, number[]>();
  const streams: { streamId: number; topic: string; unreadMessageIds: number[] }[] = [];
  const huddles = new Map<string, number[]>();
  let count = 0;
  for (let g = 0; g < order.length; g++) {
    const ordinal = order[g]!;
    const groupIds = lists[g]!;
    const { where, topic } = index.conversation(ordinal);
    if (where > 0) {
      // Zulip lists a topic under its oldest unread message's spelling; the index keeps
      // the first spelling it met, which a case-only rename may have left on no message.
      const spelling = state.metaOf(groupIds[0]!)?.[1] ?? topic;
      streams.push({ streamId: where, topic: spelling, unreadMessageIds: groupIds });
      if (!mutedGroups.has(ordinal)) count += groupIds.length;
      continue;
    }
    count += groupIds.length;
    const members = state.conversations.get(-where)?.userIds ?? [];
    if (members.length <= 2) {
      const other = members.find((m) => m !== user.id) ?? user.id;
      const list = pms.get(other);
      if (list) list.push(...groupIds);
      else pms.set(other, groupIds);
    } else {
      const k = members.join(",");
      const list = huddles.get(k);
      if (list) list.push(...groupIds);
      else huddles.set(k, groupIds);
    }
  }
  return {
    count,
    pms: [...pms].map(([otherUserId, unreadMessageIds]) => ({ otherUserId, unreadMessageIds })),
    streams,
    huddles: [...huddles].map(([userIdsString, unreadMessageIds]) => ({ userIdsString, unreadMessageIds })),
    mentions: numbersOf(mentioned.toUint32Array()),
    oldUnreadsMissing,
  };
}

/** Scratch per-ordinal counters, all zero between summaries (each summary resets what it touched). */
let scratchSlots = new Int32Array(1024);

function groupSlots(ordinals: number): Int32Array {
  if (scratchSlots.length < ordinals) scratchSlots = new Int32Array(Math.max(ordinals, 2 * scratchSlots.length));
  return scratchSlots;
}
