/**
 * @module index/conversations
 * Direct-message conversations, read from LMDB when asked for and kept in a bounded
 * cache. They used to be loaded whole at open (89,211 at 1M messages, 662,647 at 10M):
 * that cost grew with the history and so did the heap. A conversation never changes
 * its members, so a cached one never goes stale; after a failed write (whose IDs may
 * be handed out again) the cache is cleared.
 *
 * Finding a conversation by its members uses the derived table conversation_members,
 * written with each new conversation. Stores written before it existed get it built
 * once, at their first open by this code (`buildMembersIndex`).
 */
import { createHash } from "node:crypto";
import { BoundedCache } from "./bounded-cache.js";
import { FIRST_ID, type Tables } from "../storage/tables.js";
import type { Conversation } from "../types.js";

/** ~120 bytes a cached conversation (record, members array, cache slot); ~140k of them. */
export const CONVERSATIONS_CACHE_BYTES = 16 * 1024 * 1024;
const CONVERSATION_BYTES = 120;
/** Member lists longer than this are keyed by a digest (LMDB keys are at most ~2 KB). */
const MAX_PLAIN_MEMBERS_KEY = 240;
/** Meta key set once conversation_members holds every conversation. */
export const MEMBERS_INDEXED_KEY = "conversationMembersIndexed";

/** conversation_members key of a realm's conversation with exactly these (sorted) members. */
export function membersKey(realmId: number, sortedUserIds: readonly number[]): [number, string] {
  const plain = sortedUserIds.join(",");
  return [
    realmId,
    plain.length <= MAX_PLAIN_MEMBERS_KEY ? plain : `#${createHash("sha256").update(plain).digest("base64url")}`,
  ];
}

export class Conversations {
  readonly #tables: Tables;
  readonly #cache: BoundedCache<number, Conversation>;

  constructor(tables: Tables, maxBytes = CONVERSATIONS_CACHE_BYTES) {
    this.#tables = tables;
    this.#cache = new BoundedCache(maxBytes);
  }

  get(id: number): Conversation | undefined {
    const cached = this.#cache.get(id);
    if (cached) return cached;
    if (!Number.isInteger(id) || id < FIRST_ID || id > 0xffffffff) return undefined;
    const record = this.#tables.conversations.get(id) as Conversation | undefined;
    if (record) this.#cache.set(id, record, CONVERSATION_BYTES + 8 * record.userIds.length);
    return record;
  }

  /** The ID of the realm's conversation with exactly these members (sorted ascending), if any. */
  idOf(realmId: number, sortedUserIds: readonly number[]): number | undefined {
    const id = this.#tables.conversationMembers.get(membersKey(realmId, sortedUserIds));
    return typeof id === "number" ? id : undefined;
  }

  /** Stores a new conversation inside the running write. */
  put(conversation: Conversation): void {
    this.#tables.conversations.putSync(conversation.id, conversation);
    this.#tables.conversationMembers.putSync(membersKey(conversation.realmId, conversation.userIds), conversation.id);
  }

  /** How many conversations are stored (iterates keys: for tests and tools). */
  count(): number {
    let n = 0;
    for (const _ of this.#tables.conversations.getKeys({ start: FIRST_ID })) n++;
    return n;
  }

  /** Cached conversations (tests compare them with disk). */
  cached(): [number, Conversation][] {
    return this.#cache.entries();
  }

  clear(): void {
    this.#cache.clear();
  }
}

/**
 * Fills conversation_members from conversations, once per store (one write; the flag
 * is set in the same transaction). A new store only sets the flag.
 */
export function buildMembersIndex(tables: Tables): void {
  if (tables.meta.get(MEMBERS_INDEXED_KEY) === true) return;
  tables.env.transactionSync(() => {
    for (const { value } of tables.conversations.getRange({ start: FIRST_ID })) {
      const conversation = value as Conversation;
      tables.conversationMembers.putSync(membersKey(conversation.realmId, conversation.userIds), conversation.id);
    }
    tables.meta.putSync(MEMBERS_INDEXED_KEY, true);
  });
}
