/**
 * Unread counts, seeded from register's `unread_msgs` and kept right by message and
 * flag events: every unread message ID with its conversation, so a flag event that
 * names only IDs still moves the right counts.
 */
import { dmKey, topicKey } from "./narrow.js";
import type { UnreadMsgs } from "./types.js";

export interface Conversation {
  readonly key: string;
  /** Set for channel topics. */
  readonly streamId: number | null;
  readonly topic: string;
  /** Set for DMs. */
  readonly userIds: readonly number[];
}

export class Unreads {
  readonly #convOf = new Map<number, Conversation>();
  readonly #byConv = new Map<string, Set<number>>();
  readonly #byChannel = new Map<number, number>();
  readonly #mentions = new Set<number>();

  constructor(initial: UnreadMsgs, me: number) {
    for (const s of initial.streams)
      for (const id of s.unread_message_ids)
        this.add(id, { key: topicKey(s.stream_id, s.topic), streamId: s.stream_id, topic: s.topic, userIds: [] });
    for (const p of initial.pms)
      for (const id of p.unread_message_ids)
        this.add(id, { key: dmKey([p.other_user_id]), streamId: null, topic: "", userIds: [p.other_user_id] });
    for (const h of initial.huddles) {
      const ids = h.user_ids_string
        .split(",")
        .map(Number)
        .filter((n) => n !== me);
      for (const id of h.unread_message_ids) this.add(id, { key: dmKey(ids), streamId: null, topic: "", userIds: ids });
    }
    for (const id of initial.mentions) if (this.#convOf.has(id)) this.#mentions.add(id);
  }

  add(id: number, conv: Conversation, mentioned = false): void {
    if (this.#convOf.has(id)) return;
    this.#convOf.set(id, conv);
    let set = this.#byConv.get(conv.key);
    if (!set) this.#byConv.set(conv.key, (set = new Set()));
    set.add(id);
    if (conv.streamId !== null) this.#byChannel.set(conv.streamId, (this.#byChannel.get(conv.streamId) ?? 0) + 1);
    if (mentioned) this.#mentions.add(id);
  }

  /** Marks read; true when the ID was unread. */
  remove(id: number): boolean {
    const conv = this.#convOf.get(id);
    if (!conv) return false;
    this.#convOf.delete(id);
    const set = this.#byConv.get(conv.key);
    set?.delete(id);
    if (set && set.size === 0) this.#byConv.delete(conv.key);
    if (conv.streamId !== null) {
      const n = (this.#byChannel.get(conv.streamId) ?? 1) - 1;
      if (n > 0) this.#byChannel.set(conv.streamId, n);
      else this.#byChannel.delete(conv.streamId);
    }
    this.#mentions.delete(id);
    return true;
  }

  /** A message moved to another conversation: its unread and mention state go with it. */
  move(id: number, conv: Conversation): void {
    const mentioned = this.#mentions.has(id);
    if (this.remove(id)) this.add(id, conv, mentioned);
  }

  /** An edit added or removed a mention of this user. */
  setMentioned(id: number, mentioned: boolean): void {
    if (!this.#convOf.has(id)) return;
    if (mentioned) this.#mentions.add(id);
    else this.#mentions.delete(id);
  }

  /** The conversation an unread message is in. */
  conversationOf(id: number): Conversation | undefined {
    return this.#convOf.get(id);
  }

  clear(): void {
    for (const id of [...this.#convOf.keys()]) this.remove(id);
  }

  has(id: number): boolean {
    return this.#convOf.has(id);
  }

  get total(): number {
    return this.#convOf.size;
  }

  get mentions(): number {
    return this.#mentions.size;
  }

  conversation(key: string): number {
    return this.#byConv.get(key)?.size ?? 0;
  }

  channel(streamId: number): number {
    return this.#byChannel.get(streamId) ?? 0;
  }

  /** Unread topics of a channel, with counts and newest unread ID. */
  topicsOf(streamId: number): { topic: string; count: number; maxId: number }[] {
    return this.conversations()
      .filter((c) => c.conv.streamId === streamId)
      .map((c) => ({ topic: c.conv.topic, count: c.count, maxId: c.maxId }));
  }

  /** Every conversation with unreads, newest first (the Inbox view). */
  conversations(): { conv: Conversation; count: number; maxId: number }[] {
    const out: { conv: Conversation; count: number; maxId: number }[] = [];
    for (const ids of this.#byConv.values()) {
      let maxId = 0;
      for (const id of ids) if (id > maxId) maxId = id;
      const conv = this.#convOf.get(maxId);
      if (conv) out.push({ conv, count: ids.size, maxId });
    }
    return out.sort((a, b) => b.maxId - a.maxId);
  }
}
