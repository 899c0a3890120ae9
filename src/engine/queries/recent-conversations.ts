/**
 * @module queries/recent-conversations
 * Zulip's recent_private_conversations (/register): the user's direct-message
 * conversations among their newest direct messages, each with its newest message ID.
 */
import type { RecentConversationsReader } from "../directory.js";
import { sliceByRank } from "../index/bitmap-store.js";
import { key } from "../index/keys.js";
import type { PlanContext } from "../narrow/plan.js";

/** Zulip looks at this many of the user's newest direct messages (RECENT_CONVERSATIONS_LIMIT). */
export const RECENT_CONVERSATIONS_LIMIT = 1000;

import type { RecentConversation } from "../types.js";

export type { RecentConversation };

/** Newest conversation first; cached per user until their `dm` bitmap changes. */
export function recentConversations(ctx: PlanContext<RecentConversationsReader>): RecentConversation[] {
  const { state, user } = ctx;
  const dmKey = key.userFlag(user.id, "dm");
  const version = state.bitmaps.version(dmKey);
  const cached = state.recentConversationsCache.get(user.id);
  if (cached && cached.version === version) return [...cached.list];
  const list = compute(ctx, dmKey);
  state.recentConversationsCache.set(user.id, { version, list: Object.freeze(list.slice()) });
  return list;
}

function compute(ctx: PlanContext<RecentConversationsReader>, dmKey: string): RecentConversation[] {
  const { state, user } = ctx;
  const dms = state.bitmaps.get(dmKey);
  const ids = sliceByRank(dms, Math.max(0, dms.size - RECENT_CONVERSATIONS_LIMIT), RECENT_CONVERSATIONS_LIMIT);
  const newest = new Map<number, number>();
  for (const id of ids) {
    const meta = state.metaOf(id);
    if (!meta || meta[0] >= 0) continue;
    // IDs ascend, so the last one seen per conversation is its newest.
    newest.set(-meta[0], id);
  }
  const out: RecentConversation[] = [];
  for (const [conversationId, maxMessageId] of newest) {
    const conversation = state.conversations.get(conversationId);
    if (!conversation) continue;
    out.push({ maxMessageId, userIds: conversation.userIds.filter((id) => id !== user.id) });
  }
  return out.sort((a, b) => b.maxMessageId - a.maxMessageId);
}
