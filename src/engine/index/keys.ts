/**
 * @module index/keys
 * Names of every bitmap index. One function per index so that writers (send, flags,
 * verify) and readers (narrow) cannot disagree on a spelling.
 * Changing a name here requires a data migration (persisted chunks are keyed by it).
 */
import { createHash } from "node:crypto";

/** Recently folded topics: a topic's messages are indexed (sent, moved, verified) by the thousand. */
const FOLDED = new Map<string, string>();
const MAX_FOLDED = 10_000;

/**
 * Folds a topic the way PostgreSQL's upper() does in Zulip's topic indexes: per
 * code point, never changing length (so "ß" stays "ß", unlike String#toUpperCase).
 */
export function foldTopic(topic: string): string {
  let out = FOLDED.get(topic);
  if (out === undefined) {
    out = foldCodePoints(topic);
    if (FOLDED.size >= MAX_FOLDED) FOLDED.clear();
    if (topic.length <= 240) FOLDED.set(topic, out);
  }
  return out;
}

function foldCodePoints(topic: string): string {
  let out = "";
  for (const ch of topic) {
    const upper = ch.toUpperCase();
    out += upper.length === ch.length ? upper : ch;
  }
  return out;
}

/** Case-insensitive key for channel names (same fold as topics). */
export const foldName = foldTopic;

/**
 * Longest index key kept as written, in UTF-8 bytes. Every key of stored data is far
 * shorter (a 60-character topic is at most 240 bytes, an indexed term 128), while
 * LMDB refuses keys over ~1978 bytes with an error. Longer keys, which only lookups
 * of impossible values produce, become a digest: still one distinct, bounded key.
 */
export const MAX_INDEX_KEY_BYTES = 512;

function bounded(name: string): string {
  if (name.length * 3 <= MAX_INDEX_KEY_BYTES || Buffer.byteLength(name, "utf8") <= MAX_INDEX_KEY_BYTES) return name;
  // "#" starts no other key name, so a digest cannot collide with a key written in full.
  return `#${createHash("sha256").update(name).digest("base64url")}`;
}

export const key = {
  /** All messages of a realm. */
  realm: (realmId: number) => `r:${realmId}`,
  /** All messages of a channel. */
  channel: (channelId: number) => `c:${channelId}`,
  /** Messages of one topic in one channel (topic folded). */
  channelTopic: (channelId: number, topic: string) => bounded(`ct:${channelId}:${foldTopic(topic)}`),
  /** Channel messages of a topic name in any channel of a realm (topic folded). */
  topic: (realmId: number, topic: string) => bounded(`t:${realmId}:${foldTopic(topic)}`),
  sender: (userId: number) => `s:${userId}`,
  /** Messages of one direct-message conversation. */
  conversation: (conversationId: number) => `d:${conversationId}`,
  /** All direct messages of a realm; group: those with three or more participants. */
  allDirect: (realmId: number) => `dm:${realmId}`,
  groupDirect: (realmId: number) => `dmg:${realmId}`,
  has: (realmId: number, what: HasOperand) => `h:${realmId}:${what}`,
  /** Channel messages whose topic is resolved ("✔ " prefix). */
  resolved: (realmId: number) => `res:${realmId}`,
  /** Messages carrying a channel-wide wildcard mention (@all, @channel, ...). */
  streamWildcard: (realmId: number) => `wc:${realmId}`,
  /** Full-text term. */
  term: (realmId: number, term: string) => bounded(`w:${realmId}:${term}`),
  /** Per-user stored flag or the user's received direct messages. */
  userFlag: (userId: number, flag: StoredFlag) => userFlagKey(userId, flag),
  /**
   * The users who hold a `userFlag` bitmap of this flag (user IDs, not message IDs): every
   * user whose bitmap ever got an ID (index/user-flag-holders.ts).
   */
  userFlagHolders: (flag: StoredFlag) => HOLDER_KEYS.get(flag) ?? `uh:${flag}`,
  /**
   * User IDs (not messages, as every `uh:` key): who ever had a policy on the topic
   * (folded) in the channel (index/topic-policy-holders.ts).
   */
  topicPolicyHolders: (channelId: number, topic: string) => bounded(`uh:tp:${channelId}:${foldTopic(topic)}`),
  /** Messages whose record names topic registry row `rowId` (actions/topic-registry.ts). */
  topicRow: (rowId: number) => `tr:${rowId}`,
} as const;

/**
 * Longest full-text term we index, in UTF-8 bytes. LMDB keys are limited (~1978
 * bytes) and PostgreSQL's tsvector also skips over-long words; a search for such a
 * word matches nothing.
 */
export const MAX_TERM_BYTES = 128;

export function isIndexableTerm(term: string): boolean {
  return Buffer.byteLength(term, "utf8") <= MAX_TERM_BYTES;
}

export type HasOperand = "link" | "image" | "attachment" | "reaction";
export const HAS_OPERANDS: readonly HasOperand[] = ["link", "image", "attachment", "reaction"];

/**
 * Flags kept as a per-user bitmap. `dm` holds the direct messages the user received;
 * `historical` the messages the user did not receive but has a (materialised) row for.
 * Two more only moves between channels write (actions/move-rows.ts), for channel
 * messages: `granted`, rows the user has although their subscription intervals in the
 * message's channel do not cover it (a row kept from the old channel, or given by the
 * new one), not historical ones; `withdrawn`, rows the user does not have although
 * those intervals cover it or they sent it (Zulip deleted their UserMessage row).
 * Stream-wildcard mentions are not stored per user: they derive from key.streamWildcard.
 */
export const STORED_FLAGS = [
  "read",
  "starred",
  "collapsed",
  "mentioned",
  "topic_wildcard_mentioned",
  "group_mentioned",
  "has_alert_word",
  "historical",
  "granted",
  "withdrawn",
  "dm",
  /** Messages a mobile notification is showing (Zulip's flag of that name): read ones get a removal. */
  "active_mobile_push_notification",
] as const;
export type StoredFlag = (typeof STORED_FLAGS)[number];

const HOLDER_KEYS = new Map<StoredFlag, string>(STORED_FLAGS.map((flag) => [flag, `uh:${flag}`]));
const USER_FLAG_KEY = /^u:(\d+):(\w+)$/;

/**
 * The holders bitmap a user flag key registers in, and the user: [key.userFlagHolders(flag),
 * userId]; null for any other key.
 */
export function userFlagHolderOf(name: string): readonly [string, number] | null {
  if (name.charCodeAt(0) !== 117 || name.charCodeAt(1) !== 58) return null; // "u:"
  const known = HOLDER_OF_KEY.get(name);
  if (known !== undefined) return known;
  const match = USER_FLAG_KEY.exec(name);
  const holders = match ? HOLDER_KEYS.get(match[2] as StoredFlag) : undefined;
  return holders === undefined ? null : [holders, Number(match![1])];
}

/**
 * Each user's flag keys, built once: a freshly concatenated key is hashed again by every
 * cache lookup, and an event to 10,000 users asks each of them for half a dozen flags.
 * Bounded by clearing (rebuilding is cheap).
 */
const USER_FLAG_KEYS = new Map<number, Map<StoredFlag, string>>();
/** The same keys the other way: each key's holders bitmap and user (userFlagHolderOf, per bitmap read). */
const HOLDER_OF_KEY = new Map<string, readonly [string, number]>();
const MAX_USER_FLAG_KEY_USERS = 100_000;

function userFlagKey(userId: number, flag: StoredFlag): string {
  let keys = USER_FLAG_KEYS.get(userId);
  if (keys === undefined) {
    if (USER_FLAG_KEYS.size >= MAX_USER_FLAG_KEY_USERS) {
      USER_FLAG_KEYS.clear();
      HOLDER_OF_KEY.clear();
    }
    USER_FLAG_KEYS.set(userId, (keys = new Map()));
  }
  let k = keys.get(flag);
  if (k === undefined) {
    keys.set(flag, (k = `u:${userId}:${flag}`));
    HOLDER_OF_KEY.set(k, [HOLDER_KEYS.get(flag) ?? `uh:${flag}`, userId]);
  }
  return k;
}

/** `${realmId}:${lowercased email}`: users by API or delivery email. */
export function emailKey(realmId: number, email: string): string {
  return `${realmId}:${email.trim().toLowerCase()}`;
}

/** `${realmId}:${lowercased full name}`: users by name. */
export function nameKey(realmId: number, fullName: string): string {
  return `${realmId}:${fullName.trim().toLowerCase()}`;
}

/** `${realmId}:${folded name}`: channels by name. */
export function channelKey(realmId: number, name: string): string {
  return `${realmId}:${foldName(name.trim())}`;
}
