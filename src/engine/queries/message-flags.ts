/**
 * @module queries/message-flags
 * The API flag list of messages for one user, read from the per-user bitmaps.
 * Messages without a row (shared history) are ["read", "historical"], like Zulip.
 */
import { hasRow } from "../access.js";
import { key } from "../index/keys.js";
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
