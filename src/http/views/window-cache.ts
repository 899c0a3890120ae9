/**
 * @module http/views/window-cache
 * Whole GET /messages answers, kept as the bytes sent, per (user, request parameters),
 * so a repeated window (a client reopening a view, several tabs, a poll) is answered
 * without computing the window, its flags or joining its message JSON.
 *
 * A window depends on the realm's messages, the reader's flags, subscriptions and
 * mutes, and on everything a message object shows (names, channels, reactions). Every
 * engine event is classified below (the switch is exhaustive, so a new event type must
 * be classified before this compiles): it drops nothing, the answers of the users it
 * names, the answers of its realm, or every answer. Classification errs on the side of
 * dropping.
 *
 * An answer is stored only if nothing was dropped between the start of its computation
 * and its end (`epoch`): a window computed before a change and finished after it (large
 * windows yield to the event loop while rendering) is sent, never kept. A key is stored
 * on its second miss since the last drop that touched it, so one-off windows cost no
 * owned copy of their bytes.
 */
import type { Delivery, EventBatch, Store } from "../../engine/index.js";
import { ReadyReply } from "../respond.js";
import type { SuccessData } from "../endpoint.js";

const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
/** Map and set bookkeeping per entry, on top of its key and body. */
const ENTRY_OVERHEAD = 160;

interface Entry {
  readonly userId: number;
  readonly realmId: number;
  /** The whole success answer; null: seen once, not stored yet. */
  readonly reply: ReadyReply | null;
  readonly bytes: number;
}

/** Which cached answers an event may change. */
export type EventScope = { readonly kind: "none" } | { readonly kind: "users"; readonly userIds: Iterable<number> } | { readonly kind: "realm"; readonly realmId: number } | { readonly kind: "all" };

const NONE: EventScope = { kind: "none" };
const ALL: EventScope = { kind: "all" };

export class WindowReplyCache {
  readonly #entries = new Map<string, Entry>();
  readonly #byUser = new Map<number, Set<string>>();
  readonly #byRealm = new Map<number, Set<string>>();
  readonly #maxBytes: number;
  #bytes = 0;
  #epoch = 0;
  #hits = 0;

  constructor(store: Store, maxBytes = DEFAULT_MAX_BYTES) {
    this.#maxBytes = maxBytes;
    store.onEvents((batch) => this.#invalidate(batch));
  }

  /** Bumped by every drop; compare before and after computing an answer. */
  get epoch(): number {
    return this.#epoch;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** Answers served from the cache so far. */
  get hits(): number {
    return this.#hits;
  }

  get size(): number {
    let n = 0;
    for (const e of this.#entries.values()) if (e.reply) n++;
    return n;
  }

  /** The stored answer for this user and key. */
  get(userId: number, key: string): ReadyReply | null {
    if (this.#maxBytes <= 0) return null;
    const full = `${userId}\u0000${key}`;
    const entry = this.#entries.get(full);
    if (!entry?.reply) return null;
    // Least recently used goes first on eviction.
    this.#entries.delete(full);
    this.#entries.set(full, entry);
    this.#hits++;
    return entry.reply;
  }

  /**
   * The answer to send for freshly computed data. Stored (and returned as one buffer)
   * on the key's second miss when nothing was dropped since `epochAtStart`; otherwise
   * the data goes out as it is.
   */
  put(userId: number, realmId: number, key: string, epochAtStart: number, data: SuccessData): SuccessData | ReadyReply {
    if (this.#maxBytes <= 0 || epochAtStart !== this.#epoch) return data;
    const full = `${userId}\u0000${key}`;
    const seen = this.#entries.get(full);
    if (!seen) {
      this.#add(full, { userId, realmId, reply: null, bytes: ENTRY_OVERHEAD + full.length * 2 });
      return data;
    }
    this.#remove(full, seen);
    const reply = ReadyReply.of(data);
    const entry: Entry = { userId, realmId, reply, bytes: ENTRY_OVERHEAD + full.length * 2 + reply.body.length };
    if (entry.bytes <= this.#maxBytes / 4) this.#add(full, entry);
    return reply;
  }

  #add(full: string, entry: Entry): void {
    this.#entries.set(full, entry);
    this.#bytes += entry.bytes;
    let forUser = this.#byUser.get(entry.userId);
    if (!forUser) this.#byUser.set(entry.userId, (forUser = new Set()));
    forUser.add(full);
    let forRealm = this.#byRealm.get(entry.realmId);
    if (!forRealm) this.#byRealm.set(entry.realmId, (forRealm = new Set()));
    forRealm.add(full);
    if (this.#bytes > this.#maxBytes) this.#evict();
  }

  #remove(full: string, entry: Entry): void {
    this.#entries.delete(full);
    this.#bytes -= entry.bytes;
    this.#byUser.get(entry.userId)?.delete(full);
    this.#byRealm.get(entry.realmId)?.delete(full);
  }

  /** Drops the least recently used entries down to 80% of the budget. */
  #evict(): void {
    for (const [full, entry] of this.#entries) {
      if (this.#bytes <= this.#maxBytes * 0.8) break;
      this.#remove(full, entry);
    }
  }

  #dropKeys(keys: Set<string> | undefined): void {
    if (!keys) return;
    for (const full of [...keys]) {
      const entry = this.#entries.get(full);
      if (entry) this.#remove(full, entry);
    }
  }

  #clear(): void {
    this.#entries.clear();
    this.#byUser.clear();
    this.#byRealm.clear();
    this.#bytes = 0;
  }

  #invalidate(batch: EventBatch): void {
    for (const delivery of batch.deliveries) {
      const scope = eventScope(delivery);
      if (scope.kind === "none") continue;
      this.#epoch++;
      if (scope.kind === "all") {
        this.#clear();
        return;
      }
      if (scope.kind === "realm") this.#dropKeys(this.#byRealm.get(scope.realmId));
      else for (const userId of scope.userIds) this.#dropKeys(this.#byUser.get(userId));
    }
  }
}

/**
 * Which answers an event may change. "users": only the named users' own windows change
 * (their flags, mutes, subscriptions); "realm": every window of the realm (a new message
 * can enter a window of anyone who may read it, public channels included).
 */
export function eventScope({ event, audience }: Delivery): EventScope {
  switch (event.type) {
    case "message":
      return { kind: "realm", realmId: event.message.realmId };
    case "update_message_flags":
      // Emitted to the one user whose flags changed.
      return { kind: "users", userIds: [...audience] };
    case "subscription":
      // peer_add/peer_remove name other users; the subscriber's own add/remove/update
      // changes what they receive and what is muted for them.
      return "userId" in event ? { kind: "users", userIds: [event.userId] } : ALL;
    case "user_topic":
      return { kind: "users", userIds: [event.userTopic.userId] };
    case "muted_topics":
      return { kind: "users", userIds: [event.userId] };
    case "user_settings":
      return { kind: "users", userIds: event.userIds };
    // Names, emails, avatars, roles, channel names and access, groups (permissions),
    // reactions, the realm itself: anything a message object shows or access depends on.
    case "reaction":
    case "stream":
    case "realm_bot":
    case "realm_user":
    case "realm":
    case "user_group":
      return ALL;
    // Nothing a message window shows or selects by.
    case "presence":
    case "typing":
    case "drafts":
    case "saved_snippets":
    case "device":
    case "scheduled_messages":
    case "attachment":
    case "invites_changed":
    case "realm_playgrounds":
    case "realm_user_settings_defaults":
    case "default_streams":
    case "realm_emoji":
      return NONE;
    default: {
      const unclassified: never = event;
      void unclassified;
      return ALL;
    }
  }
}
