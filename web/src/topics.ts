/**
 * Which of a channel's topics the sidebar lists, newest first: the channel's list
 * (from GET /users/me/{stream_id}/topics and the messages seen since) merged with the
 * topics that have unread messages.
 */
import type { ClientState } from "./state.js";

const TOPICS_SHOWN = 12;
/** Unread topics past this are reached through the Inbox (the DOM stays bounded). */
const MAX_TOPICS_SHOWN = 60;
/** "All topics" shows at most this many; older ones are reached by search (topic:). */
const MAX_ALL_TOPICS = 500;

/** The channel's topics, newest first: the whole list when expanded, else the newest and the unread ones. */
export function topicsToShow(
  state: ClientState,
  streamId: number,
  all: boolean,
): { shown: { name: string; maxId: number }[]; total: number } {
  const byKey = new Map<string, { name: string; maxId: number }>();
  for (const t of state.topicsOf(streamId)) byKey.set(t.name.toLowerCase(), t);
  const unread = new Set<string>();
  for (const t of state.unreads.topicsOf(streamId)) {
    const key = t.topic.toLowerCase();
    unread.add(key);
    const known = byKey.get(key);
    if (!known || known.maxId < t.maxId) byKey.set(key, { name: known?.name ?? t.topic, maxId: t.maxId });
  }
  const sorted = [...byKey.values()].sort((a, b) => b.maxId - a.maxId);
  if (all) return { shown: sorted.slice(0, MAX_ALL_TOPICS), total: sorted.length };
  let unreadBeyond = 0;
  const shown = sorted.filter(
    (t, i) =>
      i < TOPICS_SHOWN || (unread.has(t.name.toLowerCase()) && ++unreadBeyond <= MAX_TOPICS_SHOWN - TOPICS_SHOWN),
  );
  return { shown, total: sorted.length };
}
