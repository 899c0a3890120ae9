/**
 * @module realtime/hub
 * Zulip's event queues (its Tornado server), in process: POST /register creates a
 * queue, GET /events long-polls it, DELETE /events removes it. The hub listens to the
 * engine's committed events and fans each out to the queues that must get it.
 *
 * Fan-out cost follows the queues, not the realm: queues are indexed by user, and
 * each delivery walks whichever is smaller — the event's audience or the users with
 * queues — then renders each distinct payload once (wire.ts).
 *
 * Queues are collected after idle_queue_timeout without a connected poll, or at once
 * when their backlog passes maxQueueEvents (a client that stopped polling cannot grow
 * memory without bound); the client then gets BAD_EVENT_QUEUE_ID and registers again,
 * as with Zulip. save()/restore() carry queues across a graceful restart.
 */
import { randomUUID } from "node:crypto";
import { EngineError, type EventBatch, type Store, type User } from "../engine/index.js";
import { systemClock, type Clock } from "./clock.js";
import { EventQueue, type QueueOptions, type SavedQueue } from "./queue.js";
import { openJson, WireEvent } from "./wire.js";

export interface HubOptions {
  readonly clock?: Clock;
  /** A waiting poll gets a heartbeat after a random time in [min, max] seconds (Zulip: 45–55). */
  readonly heartbeatMinSecs?: number;
  readonly heartbeatMaxSecs?: number;
  /** Unacknowledged events past which a queue is collected. */
  readonly maxQueueEvents?: number;
  /** How often idle queues are looked for. */
  readonly gcIntervalSecs?: number;
  readonly random?: () => number;
  /** The `restart` event restored queues get (version fields). */
  readonly restartEvent?: Readonly<Record<string, unknown>>;
}

export const DEFAULT_MAX_QUEUE_EVENTS = 10_000;
/**
 * Characters of events in one GET /events answer. Zulip sends a queue's whole backlog;
 * a client back from a long absence may have 10,000 events (~6 MB) waiting, whose one
 * answer held the event loop ~70 ms. Clients poll again at once with the last ID they
 * got (Zulip's clients all do), so a backlog arrives in ~1 MB answers instead.
 */
export const MAX_POLL_ANSWER_CHARS = 1_000_000;

/** Zulip's error for an unknown, expired, deleted or foreign queue. */
export class BadEventQueueError extends EngineError {
  constructor(queueId: string) {
    // The ID is echoed, as Zulip does, but bounded: it is client input.
    const shown = queueId.slice(0, 64);
    super("BAD_EVENT_QUEUE_ID", `Bad event queue ID: ${shown}`, { queue_id: shown });
  }
}

export interface PollInput {
  readonly queueId: string;
  readonly lastEventId: number | undefined;
  readonly dontBlock: boolean;
}

export interface HubStats {
  readonly queues: number;
  readonly polling: number;
  readonly queuedEvents: number;
  readonly eventsDelivered: number;
}

export class EventHub {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #heartbeatMin: number;
  readonly #heartbeatMax: number;
  readonly #maxEvents: number;
  readonly #random: () => number;
  readonly #restartEvent: Readonly<Record<string, unknown>>;
  readonly #queues = new Map<string, EventQueue>();
  readonly #byUser = new Map<number, Set<EventQueue>>();
  readonly #allPublic = new Map<number, Set<EventQueue>>();
  readonly #unsubscribe: () => void;
  readonly #gcInterval: number;
  #gcTimer: unknown = null;
  #delivered = 0;
  #closed = false;

  constructor(store: Store, options: HubOptions = {}) {
    this.#store = store;
    this.#clock = options.clock ?? systemClock;
    this.#heartbeatMin = (options.heartbeatMinSecs ?? 45) * 1000;
    this.#heartbeatMax = (options.heartbeatMaxSecs ?? 55) * 1000;
    this.#maxEvents = options.maxQueueEvents ?? DEFAULT_MAX_QUEUE_EVENTS;
    this.#random = options.random ?? Math.random;
    this.#restartEvent = options.restartEvent ?? {};
    this.#gcInterval = (options.gcIntervalSecs ?? 30) * 1000;
    this.#unsubscribe = store.onEvents((batch) => this.#deliver(batch));
    this.#scheduleGc();
  }

  /**
   * Creates a queue for `user`. Call in the same synchronous step as the snapshot it
   * goes with: events are delivered synchronously after each commit, so none can
   * fall between the snapshot and the queue.
   */
  register(user: User, options: QueueOptions): EventQueue {
    if (options.allPublicStreams) this.#store.checkAllPublicStreams(user.id);
    const matches = this.#store.compileNarrow(user.id, options.narrow);
    const queue = new EventQueue(randomUUID(), user.id, user.realmId, options, matches, this.#clock.now());
    this.#add(queue);
    return queue;
  }

  /** The caller's queue, or BAD_EVENT_QUEUE_ID (unknown, collected, deleted, or someone else's). */
  queueFor(user: User, queueId: string): EventQueue {
    const queue = this.#queues.get(queueId);
    if (!queue || queue.userId !== user.id) throw new BadEventQueueError(queueId);
    return queue;
  }

  /**
   * GET /events: acknowledges up to lastEventId, then answers with the queue's events
   * at once if events are waiting (or dontBlock), else when one arrives, a heartbeat falls
   * due, or the client goes away (signal).
   */
  poll(user: User, input: PollInput, signal: AbortSignal): Promise<string> {
    const queue = this.queueFor(user, input.queueId);
    if (input.lastEventId !== undefined) queue.acknowledge(input.lastEventId);
    queue.lastActivity = this.#clock.now();
    if (queue.size > 0 || input.dontBlock) return Promise.resolve(queue.eventsJson(MAX_POLL_ANSWER_CHARS));
    return new Promise<string>((resolve, reject) => {
      const span = this.#heartbeatMax - this.#heartbeatMin;
      const timer = this.#clock.setTimeout(() => {
        if (this.#queues.get(queue.id) === queue) queue.push(openJson({ type: "heartbeat" }));
      }, this.#heartbeatMin + Math.floor(this.#random() * (span + 1)));
      const done = (): void => {
        this.#clock.clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        queue.lastActivity = this.#clock.now();
      };
      const onAbort = (): void => {
        queue.release(handle);
        done();
        resolve("[]");
      };
      const handle = queue.wait(() => {
        done();
        // Answer after the current dispatch: every event of one commit goes out together.
        queueMicrotask(() => {
          if (this.#queues.get(queue.id) !== queue) reject(new BadEventQueueError(queue.id));
          else resolve(queue.eventsJson(MAX_POLL_ANSWER_CHARS));
        });
      });
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** DELETE /events. */
  delete(user: User, queueId: string): void {
    this.#remove(this.queueFor(user, queueId));
  }

  /** Collects queues idle past their timeout; returns how many. */
  collectIdle(): number {
    const now = this.#clock.now();
    let n = 0;
    for (const queue of this.#queues.values()) {
      if (!queue.polling && now - queue.lastActivity > queue.options.idleTimeoutSecs * 1000) {
        this.#remove(queue);
        n++;
      }
    }
    return n;
  }

  get stats(): HubStats {
    let polling = 0;
    let queued = 0;
    for (const q of this.#queues.values()) {
      if (q.polling) polling++;
      queued += q.size;
    }
    return { queues: this.#queues.size, polling, queuedEvents: queued, eventsDelivered: this.#delivered };
  }

  /** Every queue with its pending events, for a graceful restart. */
  save(): SavedQueue[] {
    return [...this.#queues.values()].map((q) => q.save());
  }

  /**
   * Restores saved queues (after a graceful restart) whose users still exist and are
   * active; each gets a `restart` event. Returns how many were restored.
   */
  restore(saved: readonly SavedQueue[]): number {
    let n = 0;
    for (const s of saved) {
      const user = this.#store.findUser(s.userId);
      if (!user || !user.isActive || user.realmId !== s.realmId || this.#queues.has(s.id)) continue;
      let matches;
      try {
        matches = this.#store.compileNarrow(s.userId, s.options.narrow);
      } catch {
        continue;
      }
      const queue = new EventQueue(s.id, s.userId, s.realmId, s.options, matches, this.#clock.now(), s.nextEventId);
      queue.restoreEvents(s.events);
      this.#add(queue);
      queue.push(openJson({ type: "restart", ...this.#restartEvent }));
      n++;
    }
    return n;
  }

  /** Stops listening; waiting polls are answered (empty) so connections can close. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe();
    if (this.#gcTimer !== null) this.#clock.clearTimeout(this.#gcTimer);
    for (const queue of this.#queues.values()) queue.releaseAll();
  }

  #scheduleGc(): void {
    if (this.#closed) return;
    this.#gcTimer = this.#clock.setTimeout(() => {
      this.collectIdle();
      this.#scheduleGc();
    }, this.#gcInterval);
  }

  #add(queue: EventQueue): void {
    this.#queues.set(queue.id, queue);
    let mine = this.#byUser.get(queue.userId);
    if (!mine) this.#byUser.set(queue.userId, (mine = new Set()));
    mine.add(queue);
    if (queue.options.allPublicStreams) {
      let realm = this.#allPublic.get(queue.realmId);
      if (!realm) this.#allPublic.set(queue.realmId, (realm = new Set()));
      realm.add(queue);
    }
  }

  #remove(queue: EventQueue): void {
    if (this.#queues.get(queue.id) !== queue) return;
    this.#queues.delete(queue.id);
    const mine = this.#byUser.get(queue.userId);
    mine?.delete(queue);
    if (mine?.size === 0) this.#byUser.delete(queue.userId);
    this.#allPublic.get(queue.realmId)?.delete(queue);
    // A waiting poll learns at once that its queue is gone.
    queue.push(openJson({ type: "heartbeat" }));
  }

  #deliver(batch: EventBatch): void {
    for (const { event, audience } of batch.deliveries) {
      const wire = new WireEvent(event, this.#store);
      const visit = (queue: EventQueue, recipient: boolean): void => {
        if (!queue.wants(event.type)) return;
        if (event.type === "message" && queue.matchesNarrow && !queue.matchesNarrow(event.message.id)) return;
        const body = wire.forQueue(queue, recipient);
        if (body === null) return;
        queue.push(body);
        this.#delivered++;
        if (queue.size > this.#maxEvents) this.#remove(queue);
      };
      if (audience.size <= this.#byUser.size) {
        for (const userId of audience) for (const queue of this.#byUser.get(userId) ?? []) visit(queue, true);
      } else {
        for (const [userId, queues] of this.#byUser) if (audience.has(userId)) for (const queue of queues) visit(queue, true);
      }
      if (event.type === "message" && event.publicChannelRealmId !== null) {
        for (const queue of this.#allPublic.get(event.publicChannelRealmId) ?? []) if (!audience.has(queue.userId)) visit(queue, false);
      }
    }
  }
}
