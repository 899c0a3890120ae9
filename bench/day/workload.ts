/**
 * @module bench/day/workload
 * What one active client does in a day, without any I/O: the per-minute rates of each
 * kind of request, a steady pacer, each client's view (its channels, the topics and
 * direct-message partners it has met, its unread messages) from which it picks what
 * to read and where to send, and the ledger that checks every message event arrives
 * exactly once at every queue that should get it.
 */
import type { Rng } from "../../tools/generate/prng.js";

/** Requests the generator makes and times (long polls are counted apart). */
export const KINDS = ["send", "read", "flags", "reaction", "typing", "presence"] as const;
export type Kind = (typeof KINDS)[number];

/**
 * Per active client and real minute. Presence is the web app's one ping a minute; a
 * message every ten minutes per active user, two typing notices (start, stop) around
 * each; a narrow read every half minute, each followed by marking its unread messages
 * read (so flags follow from reads); a reaction every five minutes.
 */
export const PER_CLIENT_MINUTE = { read: 2, presence: 1, reaction: 0.2, send: 0.1 } as const;
export type PacedKind = keyof typeof PER_CLIENT_MINUTE;

/** Offered requests per second of each paced kind for `clients` clients with time compressed `compress` times. */
export function pacedRates(clients: number, compress: number): Record<PacedKind, number> {
  const perSecond = (perMinute: number) => (clients * perMinute * compress) / 60;
  return {
    read: perSecond(PER_CLIENT_MINUTE.read),
    presence: perSecond(PER_CLIENT_MINUTE.presence),
    reaction: perSecond(PER_CLIENT_MINUTE.reaction),
    send: perSecond(PER_CLIENT_MINUTE.send),
  };
}

/** A steady rate: how many events fall due by `now` (ms), carrying the fraction over. */
export class Pacer {
  #last: number;
  #owed = 0;
  constructor(
    private readonly perSecond: number,
    start: number,
  ) {
    this.#last = start;
  }
  due(now: number): number {
    this.#owed += ((now - this.#last) * this.perSecond) / 1000;
    this.#last = now;
    const n = Math.floor(this.#owed);
    this.#owed -= n;
    return n;
  }
}

/** Where a message lives, as a client sees it. */
export type Conversation =
  | { readonly kind: "channel"; readonly channelId: number; readonly topic: string }
  | { readonly kind: "dm"; readonly userIds: readonly number[] };

export interface WireMessage {
  readonly id: number;
  readonly type?: unknown;
  readonly stream_id?: unknown;
  readonly subject?: unknown;
  readonly display_recipient?: unknown;
  readonly flags?: unknown;
}

export interface RegisterState {
  readonly subscriptions?: readonly { readonly stream_id: number }[];
  readonly unread_msgs?: {
    readonly streams: readonly {
      readonly stream_id: number;
      readonly topic: string;
      readonly unread_message_ids: readonly number[];
    }[];
    readonly pms: readonly { readonly other_user_id: number; readonly unread_message_ids: readonly number[] }[];
  };
}

export interface ReadPlan {
  /** Label for the report: which sort of narrow. */
  readonly shape: "channel" | "topic" | "dm" | "search" | "feed";
  readonly narrow: readonly { readonly operator: string; readonly operand: unknown }[];
  readonly anchor: number | "newest";
  readonly numBefore: number;
  readonly numAfter: number;
}

const SEEN_KEPT = 200;

/** One client's view of the organization, grown from register, reads and events. */
export class ClientView {
  readonly channels: number[] = [];
  readonly topics = new Map<number, string[]>();
  readonly partners = new Set<number>();
  /** Unread message id → its conversation. */
  readonly unread = new Map<number, Conversation>();
  /** Recent message ids this client has seen (reaction targets). */
  readonly seen: number[] = [];
  /** `${messageId}:${emoji}` reactions this client has on. */
  readonly reactions = new Set<string>();

  constructor(readonly userId: number) {}

  learnRegister(state: RegisterState): void {
    for (const s of state.subscriptions ?? []) this.channels.push(s.stream_id);
    for (const s of state.unread_msgs?.streams ?? []) {
      this.#learnTopic(s.stream_id, s.topic);
      for (const id of s.unread_message_ids)
        this.unread.set(id, { kind: "channel", channelId: s.stream_id, topic: s.topic });
    }
    for (const pm of state.unread_msgs?.pms ?? []) {
      this.partners.add(pm.other_user_id);
      for (const id of pm.unread_message_ids) this.unread.set(id, { kind: "dm", userIds: [pm.other_user_id] });
    }
  }

  /** A message from a read answer or an event: learn its conversation, note it unread if so. */
  learnMessage(message: WireMessage, flags: readonly string[]): void {
    const conversation = conversationOf(message, this.userId);
    if (!conversation) return;
    if (conversation.kind === "channel") this.#learnTopic(conversation.channelId, conversation.topic);
    else for (const id of conversation.userIds) this.partners.add(id);
    if (!flags.includes("read")) this.unread.set(message.id, conversation);
    this.seen.push(message.id);
    if (this.seen.length > SEEN_KEPT) this.seen.splice(0, this.seen.length - SEEN_KEPT);
  }

  markedRead(ids: readonly number[]): void {
    for (const id of ids) this.unread.delete(id);
  }

  #learnTopic(channelId: number, topic: string): void {
    const list = this.topics.get(channelId) ?? [];
    if (!list.includes(topic)) list.push(topic);
    if (list.length > 20) list.shift();
    this.topics.set(channelId, list);
  }

  /** The oldest unread message matching `test`, the anchor a client opens a narrow at. */
  #oldestUnread(test: (c: Conversation) => boolean): number | "newest" {
    let oldest = Infinity;
    for (const [id, c] of this.unread) if (id < oldest && test(c)) oldest = id;
    return oldest === Infinity ? "newest" : oldest;
  }

  planRead(rng: Rng, words: readonly string[]): ReadPlan {
    const around = (anchor: number | "newest") =>
      anchor === "newest" ? { anchor, numBefore: 50, numAfter: 0 } : { anchor, numBefore: 25, numAfter: 25 };
    const roll = rng.next();
    const channelId = this.channels.length > 0 ? this.channels[rng.int(this.channels.length)]! : undefined;
    if (roll < 0.3 && channelId !== undefined) {
      const anchor = this.#oldestUnread((c) => c.kind === "channel" && c.channelId === channelId);
      return { shape: "channel", narrow: [{ operator: "channel", operand: channelId }], ...around(anchor) };
    }
    const topics = channelId === undefined ? [] : (this.topics.get(channelId) ?? []);
    if (roll < 0.55 && channelId !== undefined && topics.length > 0) {
      const topic = topics[rng.int(topics.length)]!;
      const anchor = this.#oldestUnread((c) => c.kind === "channel" && c.channelId === channelId && c.topic === topic);
      const narrow = [
        { operator: "channel", operand: channelId },
        { operator: "topic", operand: topic },
      ];
      return { shape: "topic", narrow, ...around(anchor) };
    }
    if (roll < 0.7 && this.partners.size > 0) {
      const partner = [...this.partners][rng.int(this.partners.size)]!;
      const anchor = this.#oldestUnread((c) => c.kind === "dm" && c.userIds.includes(partner));
      return { shape: "dm", narrow: [{ operator: "dm", operand: [partner] }], ...around(anchor) };
    }
    if (roll < 0.85) {
      const word = words[rng.int(words.length)]!;
      return {
        shape: "search",
        narrow: [{ operator: "search", operand: word }],
        anchor: "newest",
        numBefore: 20,
        numAfter: 0,
      };
    }
    return { shape: "feed", narrow: [], ...around(this.#oldestUnread(() => true)) };
  }

  /** Where to send: mostly a channel topic it knows, else a direct message to a partner or `fallbackUser`. */
  planSend(rng: Rng, fallbackUser: number): Conversation | null {
    if (rng.chance(0.7) && this.channels.length > 0) {
      const channelId = this.channels[rng.int(this.channels.length)]!;
      const topics = this.topics.get(channelId) ?? [];
      const topic = topics.length > 0 && rng.chance(0.8) ? topics[rng.int(topics.length)]! : `day ${rng.int(50)}`;
      return { kind: "channel", channelId, topic };
    }
    const partners = [...this.partners].filter((id) => id !== this.userId);
    const partner = partners.length > 0 && rng.chance(0.7) ? partners[rng.int(partners.length)]! : fallbackUser;
    return partner === this.userId ? null : { kind: "dm", userIds: [partner] };
  }
}

export function conversationOf(message: WireMessage, selfId: number): Conversation | null {
  if (message.type === "stream" && typeof message.stream_id === "number" && typeof message.subject === "string")
    return { kind: "channel", channelId: message.stream_id, topic: message.subject };
  if (message.type === "private" && Array.isArray(message.display_recipient)) {
    const ids = (message.display_recipient as unknown[])
      .map((r) => (typeof r === "object" && r !== null ? (r as { id?: unknown }).id : undefined))
      .filter((id): id is number => typeof id === "number" && id !== selfId);
    return { kind: "dm", userIds: ids.length > 0 ? ids : [selfId] };
  }
  return null;
}

/** The tag a sent message carries so every queue can tell which send it came from. */
export const tagOf = (seq: number) => `pxday${seq}z`;
const TAG = /pxday(\d+)z/;
export function seqOf(content: unknown): number | null {
  const m = typeof content === "string" ? TAG.exec(content) : null;
  return m ? Number(m[1]) : null;
}

interface Expected {
  readonly sentAt: number;
  readonly clients: ReadonlySet<number>;
  readonly arrivals: Map<number, number>;
}

/**
 * Every send's expected audience among the clients (its queues), and each arrival.
 * An arrival at a queue outside the audience is unexpected; a second arrival of one
 * send at one queue a duplicate; what is missing when the run ends is lost.
 */
export class DeliveryLedger {
  readonly #sends = new Map<number, Expected>();
  /** Arrivals of a send whose ack the generator had not yet recorded (the event can beat the ack). */
  readonly #early = new Map<number, [number, number][]>();
  duplicates = 0;
  unexpected = 0;

  expect(seq: number, sentAt: number, clients: ReadonlySet<number>): void {
    const entry: Expected = { sentAt, clients, arrivals: new Map() };
    this.#sends.set(seq, entry);
    for (const [client, at] of this.#early.get(seq) ?? []) this.#arrive(entry, client, at);
    this.#early.delete(seq);
  }

  receive(seq: number, client: number, at: number): void {
    const entry = this.#sends.get(seq);
    if (!entry) {
      const list = this.#early.get(seq) ?? [];
      list.push([client, at]);
      this.#early.set(seq, list);
      return;
    }
    this.#arrive(entry, client, at);
  }

  #arrive(entry: Expected, client: number, at: number): void {
    if (!entry.clients.has(client)) this.unexpected++;
    else if (entry.arrivals.has(client)) this.duplicates++;
    else entry.arrivals.set(client, at);
  }

  /** Sends in [from, to) whose every expected arrival is in. */
  complete(from: number, to: number): boolean {
    for (let seq = from; seq < to; seq++) {
      const e = this.#sends.get(seq);
      if (e && e.arrivals.size < e.clients.size) return false;
    }
    return true;
  }

  /**
   * For sends in [from, to): expected and received (queue, message) pairs, the latency of
   * each pair (send issued → poll answer carrying it), and per send the latency to the
   * last of its queues ("all queues").
   */
  summary(from: number, to: number): { expected: number; received: number; pairs: number[]; allQueues: number[] } {
    let expected = 0;
    let received = 0;
    const pairs: number[] = [];
    const allQueues: number[] = [];
    for (let seq = from; seq < to; seq++) {
      const e = this.#sends.get(seq);
      if (!e) continue;
      expected += e.clients.size;
      received += e.arrivals.size;
      let last = -Infinity;
      for (const at of e.arrivals.values()) {
        pairs.push(at - e.sentAt);
        if (at > last) last = at;
      }
      if (e.arrivals.size === e.clients.size && e.clients.size > 0) allQueues.push(last - e.sentAt);
    }
    return { expected, received, pairs, allQueues };
  }

  /** Arrivals whose send never got an answer recorded (a failed send that still delivered). */
  get orphans(): number {
    let n = 0;
    for (const list of this.#early.values()) n += list.length;
    return n;
  }
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}
