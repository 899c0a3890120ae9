/**
 * @module realtime/queue
 * One client's event queue: what it asked for at register, the events not yet
 * acknowledged (as open JSON, see wire.ts), and at most one waiting long-poll.
 * Event IDs start at 0 and only grow; a poll's last_event_id acknowledges (drops)
 * every event up to it.
 */
import type { MessageMatcher } from "../engine/index.js";

/** One term of register's `narrow`, as the client sent it (kept to rebuild the matcher after a restart). */
export interface NarrowTermInput {
  readonly operator: string;
  readonly operand: unknown;
  readonly negated?: boolean;
}

/** What a queue was registered with: decides which events it gets, and their shapes. */
export interface QueueOptions {
  /** Event types to deliver; null: every type. */
  readonly eventTypes: readonly string[] | null;
  readonly allPublicStreams: boolean;
  readonly narrow: readonly NarrowTermInput[];
  /**
   * A bot's default_events_register_stream, standing for an empty narrow: the queue gets
   * that channel's messages only, whether or not the bot can see it now (Zulip filters by
   * the channel, it never refuses the registration).
   */
  readonly defaultChannelId?: number | undefined;
  readonly applyMarkdown: boolean;
  readonly clientGravatar: boolean;
  readonly emptyTopicName: boolean;
  readonly streamTypingNotifications: boolean;
  /** client_capabilities.include_deactivated_groups: deactivation is an update, not a remove. */
  readonly includeDeactivatedGroups: boolean;
  /**
   * Shape of presence events (Zulip's process_presence_event): "modern" for
   * client_capabilities.simplified_presence_events, "slim" for slim_presence
   * (legacy without email), else "legacy".
   */
  readonly presenceFormat: "legacy" | "slim" | "modern";
  /**
   * client_capabilities.individual_emoji_changes: realm_emoji add/update_one events
   * rather than the whole map (absent in queues saved before it existed: false).
   */
  readonly individualEmojiChanges?: boolean;
  /**
   * client_capabilities.user_list_incomplete: no realm_user add for a user the (limited
   * guest) queue owner may not see, instead of an "Unknown user" placeholder.
   */
  readonly userListIncomplete?: boolean;
  /**
   * client_capabilities.bulk_message_deletion: one delete_message event lists every
   * deleted message (absent in queues saved before it existed: one event per message).
   */
  readonly bulkMessageDeletion?: boolean;
  /**
   * client_capabilities.archived_channels: archiving and unarchiving are stream
   * updates of is_archived, not a delete and a create (absent in older saved queues: false).
   */
  readonly archivedChannels?: boolean;
  /**
   * client_capabilities.linkifier_url_template: realm_linkifiers events are sent
   * (absent in older saved queues: false, as Zulip sends none without it).
   */
  readonly linkifierUrlTemplate?: boolean;
  /** Seconds without a connected poll after which the queue is collected. */
  readonly idleTimeoutSecs: number;
}

/** A queue as saved across a graceful restart. */
export interface SavedQueue {
  readonly id: string;
  readonly userId: number;
  readonly realmId: number;
  readonly options: QueueOptions;
  readonly nextEventId: number;
  readonly lastActivity: number;
  readonly events: readonly { readonly id: number; readonly body: string }[];
}

interface Waiter {
  readonly resolve: () => void;
}

export class EventQueue {
  readonly #types: ReadonlySet<string> | null;
  readonly #events: { id: number; body: string }[] = [];
  /** Characters of the events held: what the hub bounds per user. */
  #chars = 0;
  #nextEventId: number;
  #waiter: Waiter | null = null;
  /** Milliseconds: creation, or when the last poll began or ended. */
  lastActivity: number;
  /**
   * The change-log sequence number its snapshot holds, on a worker that gets its
   * writer's events after the fact (realtime/hub's followsWriter): batches of writes at
   * or below it are in the snapshot already. 0 elsewhere.
   */
  afterSeq = 0;

  constructor(
    readonly id: string,
    readonly userId: number,
    readonly realmId: number,
    readonly options: QueueOptions,
    readonly matchesNarrow: MessageMatcher | null,
    now: number,
    nextEventId = 0,
  ) {
    this.#types = options.eventTypes === null ? null : new Set(options.eventTypes);
    this.#nextEventId = nextEventId;
    this.lastActivity = now;
  }

  wants(type: string): boolean {
    return this.#types === null || this.#types.has(type);
  }

  get size(): number {
    return this.#events.length;
  }

  /** Characters of the events held (their open JSON). */
  get chars(): number {
    return this.#chars;
  }

  get lastEventId(): number {
    return this.#nextEventId - 1;
  }

  get polling(): boolean {
    return this.#waiter !== null;
  }

  /** Appends an event (open JSON); wakes a waiting poll. Returns its ID. */
  push(body: string): number {
    const id = this.#nextEventId++;
    this.#events.push({ id, body });
    this.#chars += body.length;
    this.#wake();
    return id;
  }

  /** Drops every event up to and including `lastEventId`. */
  acknowledge(lastEventId: number): void {
    let n = 0;
    while (n < this.#events.length && this.#events[n]!.id <= lastEventId) this.#chars -= this.#events[n++]!.body.length;
    if (n > 0) this.#events.splice(0, n);
  }

  /**
   * The oldest unacknowledged events as one JSON array text: all of them, or as many as
   * fit in `maxChars` (always at least one). The rest stay queued, and the client's
   * next poll, which acknowledges these, is answered at once.
   */
  eventsJson(maxChars = Number.POSITIVE_INFINITY): string {
    if (this.#events.length === 0) return "[]";
    let out = "[";
    for (let i = 0; i < this.#events.length; i++) {
      const e = this.#events[i]!;
      if (i > 0 && out.length + e.body.length > maxChars) break;
      out += `${i === 0 ? "" : ","}${e.body},"id":${e.id}}`;
    }
    return `${out}]`;
  }

  /**
   * Waits for an event; a newer poll replaces this one (which is answered at once).
   * Returns the wait's handle, for release().
   */
  wait(resolve: () => void): object {
    this.#wake();
    const waiter = { resolve };
    this.#waiter = waiter;
    return waiter;
  }

  /** Ends a wait without an event (its client left) — only if it is still the current one. */
  release(handle: object): void {
    if (this.#waiter === handle) this.#waiter = null;
  }

  /** Answers whatever wait is current with what the queue holds (the server is closing). */
  releaseAll(): void {
    this.#wake();
  }

  #wake(): void {
    const waiter = this.#waiter;
    this.#waiter = null;
    waiter?.resolve();
  }

  /** The queue as saved across a restart (held events are never changed, so they are shared, not copied). */
  save(): SavedQueue {
    const { id, userId, realmId, options, lastActivity } = this;
    return { id, userId, realmId, options, nextEventId: this.#nextEventId, lastActivity, events: this.#events.slice() };
  }

  /**
   * A queue moving here from another worker (realtime/writer-stream): this one began
   * empty at the point of the writer's stream where the other stopped, and got what came
   * after; `saved` is what the other held up to there. Its events go first, and this
   * queue's, which no poll has seen, are numbered on from them.
   */
  takePast(saved: SavedQueue): void {
    const mine = this.#events.splice(0);
    this.#chars = 0;
    this.#nextEventId = saved.nextEventId;
    this.restoreEvents(saved.events);
    for (const { body } of mine) {
      this.#events.push({ id: this.#nextEventId++, body });
      this.#chars += body.length;
    }
  }

  /** Restores saved events (after a graceful restart). */
  restoreEvents(events: readonly { readonly id: number; readonly body: string }[]): void {
    for (const { id, body } of events) {
      this.#events.push({ id, body });
      this.#chars += body.length;
    }
  }
}
