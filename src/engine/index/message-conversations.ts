/**
 * @module index/message-conversations
 * Message ID -> its conversation (a channel's topic, or a direct conversation), as a
 * small ordinal, filled on demand from message_meta and kept in memory. A message's
 * meta changes only when the message is moved or deleted, and that write forgets its
 * entry (actions/message-rewrite); the unread summary then groups thousands of unread IDs by conversation
 * without decoding a row per message each time.
 *
 * Memory: 4 bytes per message ID, in 2^16-ID chunks allocated only where IDs were
 * asked for (typically the recent history), plus one entry per conversation seen.
 */
import { foldTopic } from "./keys.js";
import type { MessageMeta } from "../types.js";

const CHUNK_BITS = 16;
const CHUNK_MASK = (1 << CHUNK_BITS) - 1;
/** Ordinal 0: not looked up yet (or no such message: not remembered, it may be sent later). */
const UNKNOWN = 0;

export interface ConversationOfMessage {
  /** message_meta's first field: channel ID (> 0) or minus the direct conversation's ID. */
  readonly where: number;
  /** The topic as the first message looked up in it has it ("" for direct messages). */
  readonly topic: string;
}

export class MessageConversations {
  readonly #readMeta: (id: number) => MessageMeta | undefined;
  #chunks: (Uint32Array | undefined)[] = [];
  #groups: ConversationOfMessage[] = [{ where: 0, topic: "" }];
  #byKey = new Map<string, number>();

  constructor(readMeta: (id: number) => MessageMeta | undefined) {
    this.#readMeta = readMeta;
  }

  /**
   * The message's conversation ordinal (ordinals are equal iff conversations are), or 0 if there is no such message.
   */
  ordinalOf(id: number): number {
    const index = id >>> CHUNK_BITS;
    let chunk = this.#chunks[index];
    if (!chunk) this.#chunks[index] = chunk = new Uint32Array(1 << CHUNK_BITS);
    let ordinal = chunk[id & CHUNK_MASK]!;
    if (ordinal === UNKNOWN) {
      ordinal = this.#lookUp(id);
      chunk[id & CHUNK_MASK] = ordinal;
    }
    return ordinal;
  }

  /** One more than the largest ordinal handed out so far. */
  get size(): number {
    return this.#groups.length;
  }

  /** The conversation of an ordinal from ordinalOf. */
  conversation(ordinal: number): ConversationOfMessage {
    return this.#groups[ordinal]!;
  }

  /** Forgets one message's conversation (it was moved or deleted): the next ordinalOf reads its meta again. */
  forget(id: number): void {
    const chunk = this.#chunks[id >>> CHUNK_BITS];
    if (chunk) chunk[id & CHUNK_MASK] = UNKNOWN;
  }

  /** The conversations handed an ordinal so far, by ordinal (from 1). */
  keys(): ConversationOfMessage[] {
    return this.#groups.slice(1);
  }

  /** Forgets everything (after a failed write, whose IDs may be reused). */
  clear(): void {
    this.#chunks = [];
    this.#groups = this.#groups.slice(0, 1);
    this.#byKey.clear();
  }

  #lookUp(id: number): number {
    const meta = this.#readMeta(id);
    if (!meta) return UNKNOWN;
    const [where, topic] = meta;
    const k = where > 0 ? `${where}\u0000${foldTopic(topic)}` : String(where);
    let ordinal = this.#byKey.get(k);
    if (ordinal === undefined) {
      ordinal = this.#groups.length;
      this.#groups.push({ where, topic });
      this.#byKey.set(k, ordinal);
    }
    return ordinal;
  }
}
