/**
 * @module flags
 * The message flag names of the API (a leaf: events, queries and actions all name them).
 */

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
