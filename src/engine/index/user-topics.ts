/**
 * @module index/user-topics
 * Per-user topic visibility policies, read from user_topics when first needed and kept
 * in a bounded cache per user. They used to be loaded whole at open: Zulip's automatic
 * follow on initiation writes one record per topic a user starts, so the table grows
 * with the history (92,707 records at 1M messages, 925,359 at 10M), and decoding them
 * was most of open-to-ready and a large share of the heap. Only a user's own reads and
 * writes ask for them, one user at a time.
 *
 * Records are changed only through `apply` after their write commits (or at once
 * inside a batch), and LMDB stays the source: a user's list that is not cached is read
 * again, including writes of the running transaction (lmdb-js reads see them).
 */
import { BoundedCache } from "./bounded-cache.js";
import { foldTopic } from "./keys.js";
import type { Tables } from "../storage/tables.js";
import type { UserTopic } from "../types.js";

/** Cache budget: ~160 bytes a record (object, topic and key strings, Map slot), so ~400k records. */
export const USER_TOPICS_CACHE_BYTES = 64 * 1024 * 1024;
const RECORD_BYTES = 160;
const USER_BYTES = 200;

const EMPTY: ReadonlyMap<string, UserTopic> = new Map();

/** `${channelId}:${folded topic}`: one policy per channel and folded topic. */
export function userTopicKey(channelId: number, topic: string): string {
  return foldedTopicKey(channelId, foldTopic(topic));
}

function foldedTopicKey(channelId: number, folded: string): string {
  return `${channelId}:${folded}`;
}

export class UserTopicPolicies {
  readonly #tables: Tables;
  readonly #cache: BoundedCache<number, Map<string, UserTopic>>;
  /**
   * A cached list's records by policy, made when first asked: first_unread asks for the
   * muted topics on every request, and a user's list is mostly followed topics (one per
   * topic started), which a filter over the whole list walked each time.
   */
  readonly #byPolicy = new WeakMap<ReadonlyMap<string, UserTopic>, Map<number, readonly UserTopic[]>>();

  constructor(tables: Tables, maxBytes = USER_TOPICS_CACHE_BYTES) {
    this.#tables = tables;
    this.#cache = new BoundedCache(maxBytes);
  }

  /** The user's policies by userTopicKey (live view; do not mutate). */
  of(userId: number): ReadonlyMap<string, UserTopic> {
    const cached = this.#cache.get(userId);
    if (cached) return cached;
    const map = new Map<string, UserTopic>();
    for (const { value } of this.#tables.userTopics.getRange({ start: [userId], end: [userId + 1] })) {
      const record = value as UserTopic;
      if (record.policy !== 0) map.set(userTopicKey(record.channelId, record.topic), record);
    }
    if (map.size === 0) return EMPTY;
    this.#cache.set(userId, map, USER_BYTES + map.size * RECORD_BYTES);
    return map;
  }

  /** The user's records with `policy` (a view of `of(userId)`; do not mutate). */
  withPolicy(userId: number, policy: number): readonly UserTopic[] {
    const all = this.of(userId);
    if (all.size === 0) return [];
    let lists = this.#byPolicy.get(all);
    if (!lists) this.#byPolicy.set(all, (lists = new Map()));
    let list = lists.get(policy);
    if (!list) {
      const records: UserTopic[] = [];
      for (const record of all.values()) if (record.policy === policy) records.push(record);
      lists.set(policy, (list = records));
    }
    return list;
  }

  /**
   * One policy (0 when none). A user whose list is not cached is answered by one key
   * lookup, not by reading the whole list: every send asks this for its sender.
   */
  policyOf(userId: number, channelId: number, topic: string): number {
    return this.policyOfFolded(userId, channelId, foldTopic(topic));
  }

  /** policyOf with the topic already folded (foldTopic): a move asks it of every policy holder of a channel. */
  policyOfFolded(userId: number, channelId: number, folded: string): number {
    const cached = this.#cache.peek(userId);
    if (cached) return cached.get(foldedTopicKey(channelId, folded))?.policy ?? 0;
    const record = this.#tables.userTopics.get([userId, channelId, folded]) as UserTopic | undefined;
    return record?.policy ?? 0;
  }

  /** A committed policy change (policy 0 removes it). Uncached users read it from disk when asked. */
  apply(record: UserTopic): void {
    const map = this.#cache.peek(record.userId);
    if (!map) return;
    this.#byPolicy.delete(map);
    const k = userTopicKey(record.channelId, record.topic);
    const had = map.has(k);
    if (record.policy === 0) map.delete(k);
    else map.set(k, record);
    const delta = (map.has(k) ? 1 : 0) - (had ? 1 : 0);
    if (delta !== 0) this.#cache.resize(record.userId, delta * RECORD_BYTES);
  }

  /** A follower's catch-up: another process changed the user's policies; read them again when asked. */
  forget(userId: number): void {
    this.#cache.delete(userId);
  }

  /** Users whose lists are cached, with them (tests compare them with disk). */
  cached(): [number, ReadonlyMap<string, UserTopic>][] {
    return this.#cache.entries();
  }

  clear(): void {
    this.#cache.clear();
  }
}
