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
 * as with Zulip. Zulip has no limit on how many queues one user or realm holds: one
 * member registering 20,000 queues here made each DM to them 20,000 pushes, and 1,000
 * DMs took RSS from 212 to 1,387 MB. So a user holds at most maxQueuesPerUser queues and a realm maxQueuesPerRealm,
 * and a user's queues together hold at most maxUserEvents events of maxUserEventChars
 * characters; past any of these the least recently polled queue (of that user, or of
 * that realm) is collected, as an idle one would be. save()/restore() carry queues
 * across a graceful restart.
 *
 * Delivery is sliced: an event for 10,000 queues (a message or an edit in a channel of
 * 10,000 members, each with a waiting poll answered on the way) held the event loop
 * 70-150 ms in one piece. Who gets each event is decided at the commit, on the state
 * it left (the queues, by the audience, event types and narrow): each queue's copies
 * wait in its own list, in commit order, and are rendered and pushed a slice per turn
 * of the loop (see DELIVERY_SLICE_*), queue by queue, so no queue ever gets events out
 * of order. Queue by queue, not event by event: a queue that fell behind gets all it
 * missed in one poll answer. Event by event, a backlog went out as one answer per event
 * to every queue (1,000 queues behind by 70-118 s in bench:day at 1 worker, 1.09 events
 * an answer), each answer a request costing more than the copy. A poll takes its
 * queue's waiting copies at once. A queue registered while a delivery is under way gets
 * none of it: its snapshot already holds that commit. What a copy says per user (an
 * edit's flags) is read when it is rendered, so it may already show a later commit's
 * change, whose own event follows.
 */
import { randomUUID } from "node:crypto";
import { EngineError, type EventBatch, type Store, type User } from "../engine/index.js";
import { systemClock, type Clock } from "./clock.js";
import { EventQueue, type QueueOptions, type SavedQueue } from "./queue.js";
import { openJson, WireEvent } from "./wire.js";

export interface HubOptions {
  readonly clock?: Clock;
  /** The realm's host, for placeholder emails of users hidden from limited guests (Zulip's fake email domain). */
  readonly emailDomainOf?: (realmId: number) => string;
  /** A waiting poll gets a heartbeat after a random time in [min, max] seconds (Zulip: 45–55). */
  readonly heartbeatMinSecs?: number;
  readonly heartbeatMaxSecs?: number;
  /** Unacknowledged events past which a queue is collected. */
  readonly maxQueueEvents?: number;
  /** Queues one user may hold; a new one past it collects their least recently polled. */
  readonly maxQueuesPerUser?: number;
  /** Queues one realm may hold; a new one past it collects the realm's least recently polled. */
  readonly maxQueuesPerRealm?: number;
  /** Unacknowledged events across one user's queues past which their least recently polled is collected. */
  readonly maxUserEvents?: number;
  /** The same bound in characters of events (a user's queues share event texts, so this overcounts). */
  readonly maxUserEventChars?: number;
  /** How often idle queues are looked for. */
  readonly gcIntervalSecs?: number;
  readonly random?: () => number;
  /** The `restart` event restored queues get (version fields). */
  readonly restartEvent?: Readonly<Record<string, unknown>>;
  /** Slicing of deliveries (see DELIVERY_SLICE_*). */
  readonly deliverySlice?: DeliverySlice;
  /** Begins every queue ID: a worker of `parley serve --workers` names itself (src/http/queue-routing). */
  readonly queueIdPrefix?: string;
  /**
   * A reader worker's hub: its store is a follower that gets the writer's event batches
   * after their commits (Store.releaseWriterBatch). A queue then takes only the batches
   * of writes after the state its snapshot was built on (Store.caughtUpSeq at register).
   */
  readonly followsWriter?: boolean;
  /**
   * A worker's of `parley serve --workers`: asked for a queue ID of `userId` this hub does
   * not hold at a poll or DELETE; resolves with true once the queue moved here (expect and
   * fill, or adopt), false when no worker holds it (realtime/writer-stream's moves). Null:
   * nothing to ask (BAD_EVENT_QUEUE_ID here).
   */
  readonly moveHere?: (queueId: string, userId: number) => Promise<boolean> | null;
}

/** A queue moving here: polls wait for `done` (held or not), which fill resolves. */
interface Incoming {
  readonly queue: EventQueue;
  readonly done: Promise<boolean>;
  readonly resolve: (held: boolean) => void;
}

/** How much delivery one turn of the event loop does before yielding to the next. */
export interface DeliverySlice {
  /** Copies pushed in a turn before the clock is looked at: smaller deliveries never yield. */
  readonly minCopies: number;
  /** Past minCopies, a turn yields after this many milliseconds... */
  readonly maxMs: number;
  /** ...or this many copies, whichever comes first. */
  readonly maxCopies: number;
}

/**
 * A few milliseconds of pushes per turn: a copy costs 2-10 µs (rendering shared, the
 * poll's answer in the microtask after), more when its flags must be read from disk.
 * Deliveries of up to minCopies copies (every test realm's) complete in the commit's turn.
 */
export const DEFAULT_DELIVERY_SLICE: DeliverySlice = { minCopies: 500, maxMs: 5, maxCopies: 1_000 };
/** The clock is read once per this many copies. */
const SLICE_CLOCK_EVERY = 64;

/** An event a queue gets, decided at the commit and rendered for the queue when pushed. */
interface Copy {
  readonly wire: WireEvent;
  /** False when the queue gets the event only through all_public_streams. */
  readonly recipient: boolean;
}

export const DEFAULT_MAX_QUEUE_EVENTS = 10_000;
/**
 * A user's clients: a queue per browser tab, desktop and mobile app, and scripts on
 * their API key. A hundred is far beyond real use and keeps a DM's fan-out to one
 * user at most a hundred pushes.
 */
export const DEFAULT_MAX_QUEUES_PER_USER = 100;
/** A few queues for each of thousands of active users (parley's own setting: MAX_EVENT_QUEUES_PER_REALM). */
export const DEFAULT_MAX_QUEUES_PER_REALM = 20_000;
/** Two queues' worth of backlog: one client gone quiet up to its own cap, and the live ones. */
export const DEFAULT_MAX_USER_EVENTS = 2 * DEFAULT_MAX_QUEUE_EVENTS;
/** 32 Mi characters (~32-64 MB): 10,000 typical events take ~6 M. */
export const DEFAULT_MAX_USER_EVENT_CHARS = 32 * 1024 * 1024;
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
  /** Queues collected to keep a user or realm within its caps (not idle ones). */
  readonly queuesEvicted: number;
}

/** One user's queues, least recently polled first, and the events they hold together. */
interface UserQueues {
  readonly queues: Set<EventQueue>;
  events: number;
  chars: number;
}

/**
 * The queue to collect first: the least recently polled one without a connected poll
 * (sets are kept in that order), or the least recently polled of all when every one polls.
 */
function leastRecentlyPolled(queues: Iterable<EventQueue>): EventQueue | undefined {
  let first: EventQueue | undefined;
  for (const queue of queues) {
    if (!queue.polling) return queue;
    first ??= queue;
  }
  return first;
}

/** A Set kept in least-recently-used order: re-inserting moves to the end. */
function moveToEnd<T>(set: Set<T>, item: T): void {
  if (set.delete(item)) set.add(item);
}

export class EventHub {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #heartbeatMin: number;
  readonly #heartbeatMax: number;
  readonly #maxEvents: number;
  readonly #maxPerUser: number;
  readonly #maxPerRealm: number;
  readonly #maxUserEvents: number;
  readonly #maxUserChars: number;
  readonly #random: () => number;
  readonly #restartEvent: Readonly<Record<string, unknown>>;
  readonly #emailDomainOf: (realmId: number) => string;
  readonly #queues = new Map<string, EventQueue>();
  readonly #byUser = new Map<number, UserQueues>();
  /** Each realm's queues, least recently polled first. */
  readonly #byRealm = new Map<number, Set<EventQueue>>();
  readonly #allPublic = new Map<number, Set<EventQueue>>();
  readonly #unsubscribe: () => void;
  readonly #gcInterval: number;
  readonly #slice: DeliverySlice;
  readonly #idPrefix: string;
  readonly #followsWriter: boolean;
  #moveHere: ((queueId: string, userId: number) => Promise<boolean> | null) | null;
  /** Queues moving here (expect): they take events, but polls wait until their past arrives (fill). */
  readonly #incoming = new Map<string, Incoming>();
  /** Queues handed to another worker while a poll waited on them here: that poll still answers. */
  readonly #handedOver = new WeakSet<EventQueue>();
  /**
   * Copies decided and not yet pushed, per queue in commit order; the queues in the
   * order slices serve them (one served goes to the end when it gets more).
   */
  readonly #undelivered = new Map<EventQueue, Copy[]>();
  /** Answers of polls woken in this turn of the loop, and what must follow them, in order (#atTurnEnd). */
  #turnEnd: (() => void)[] = [];
  #turnEndScheduled: ReturnType<typeof setImmediate> | null = null;
  #drainScheduled: ReturnType<typeof setImmediate> | null = null;
  #gcTimer: unknown = null;
  #delivered = 0;
  #evicted = 0;
  #closed = false;

  constructor(store: Store, options: HubOptions = {}) {
    this.#store = store;
    this.#clock = options.clock ?? systemClock;
    this.#heartbeatMin = (options.heartbeatMinSecs ?? 45) * 1000;
    this.#heartbeatMax = (options.heartbeatMaxSecs ?? 55) * 1000;
    this.#maxEvents = options.maxQueueEvents ?? DEFAULT_MAX_QUEUE_EVENTS;
    this.#maxPerUser = options.maxQueuesPerUser ?? DEFAULT_MAX_QUEUES_PER_USER;
    this.#maxPerRealm = options.maxQueuesPerRealm ?? DEFAULT_MAX_QUEUES_PER_REALM;
    this.#maxUserEvents = options.maxUserEvents ?? DEFAULT_MAX_USER_EVENTS;
    this.#maxUserChars = options.maxUserEventChars ?? DEFAULT_MAX_USER_EVENT_CHARS;
    this.#random = options.random ?? Math.random;
    this.#restartEvent = options.restartEvent ?? {};
    this.#emailDomainOf = options.emailDomainOf ?? (() => "localhost");
    this.#gcInterval = (options.gcIntervalSecs ?? 30) * 1000;
    this.#slice = options.deliverySlice ?? DEFAULT_DELIVERY_SLICE;
    this.#idPrefix = options.queueIdPrefix ?? "";
    this.#followsWriter = options.followsWriter ?? false;
    this.#moveHere = options.moveHere ?? null;
    this.#unsubscribe = store.onEvents((batch) => this.#deliver(batch));
    this.#scheduleGc();
  }

  /**
   * Creates a queue for `user`. Call in the same synchronous step as the snapshot it
   * goes with: who gets an event is decided synchronously at its commit, so none can
   * fall between the snapshot and the queue (deliveries still being pushed then were
   * decided before the queue existed, and their commits are in the snapshot).
   */
  register(user: User, options: QueueOptions): EventQueue {
    if (options.allPublicStreams) this.#store.checkAllPublicStreams(user.id);
    const matches = this.#compileNarrow(user.id, options);
    const id = this.#idPrefix + randomUUID();
    const queue = new EventQueue(id, user.id, user.realmId, options, matches, this.#clock.now());
    // The snapshot built in this synchronous step holds every write up to here (see Store.releaseWriterBatch).
    if (this.#followsWriter) queue.afterSeq = this.#store.caughtUpSeq;
    this.#makeRoom(user.id, user.realmId);
    this.#add(queue);
    return queue;
  }

  #compileNarrow(userId: number, options: QueueOptions) {
    return options.narrow.length === 0 && options.defaultChannelId !== undefined
      ? this.#store.compileChannelNarrow(userId, options.defaultChannelId)
      : this.#store.compileNarrow(userId, options.narrow);
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
    const arriving = this.#arriving(user, input.queueId);
    if (arriving === null) return this.#poll(user, input, signal);
    return arriving.then((held) => {
      if (!held) throw new BadEventQueueError(input.queueId);
      return this.#poll(user, input, signal);
    });
  }

  /** A queue not (wholly) here: the move bringing it, or null (it is here, or nowhere to ask for). */
  #arriving(user: User, queueId: string): Promise<boolean> | null {
    const incoming = this.#incoming.get(queueId);
    if (incoming !== undefined) return incoming.done;
    if (this.#moveHere === null || this.#queues.has(queueId)) return null;
    return this.#moveHere(queueId, user.id);
  }

  #poll(user: User, input: PollInput, signal: AbortSignal): Promise<string> {
    const queue = this.queueFor(user, input.queueId);
    if (input.lastEventId !== undefined) this.#acknowledge(queue, input.lastEventId);
    // Its copies still waiting for a slice go out in this answer, not in one of their own.
    this.#pushUndelivered(queue);
    if (this.#queues.get(queue.id) !== queue) throw new BadEventQueueError(queue.id);
    this.#touch(queue);
    if (queue.size > 0 || input.dontBlock) return Promise.resolve(queue.eventsJson(MAX_POLL_ANSWER_CHARS));
    return new Promise<string>((resolve, reject) => {
      const span = this.#heartbeatMax - this.#heartbeatMin;
      const timer = this.#clock.setTimeout(
        () => {
          if (this.#queues.get(queue.id) === queue) this.#push(queue, openJson({ type: "heartbeat" }));
        },
        this.#heartbeatMin + Math.floor(this.#random() * (span + 1)),
      );
      const done = (): void => {
        this.#clock.clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
      };
      const onAbort = (): void => {
        queue.release(handle);
        done();
        if (this.#queues.get(queue.id) === queue) this.#touch(queue);
        resolve("[]");
      };
      const handle = queue.wait(() => {
        done();
        // Touched only when answered: a delivery may be walking this user's queues, in LRU order.
        this.#atTurnEnd(() => {
          if (this.#handedOver.has(queue)) return resolve(queue.eventsJson(MAX_POLL_ANSWER_CHARS));
          if (this.#queues.get(queue.id) !== queue) return reject(new BadEventQueueError(queue.id));
          this.#touch(queue);
          resolve(queue.eventsJson(MAX_POLL_ANSWER_CHARS));
        });
      });
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** HubOptions.moveHere, set later (the writer worker's, once its event stream knows its hub). */
  setMoveHere(moveHere: (queueId: string, userId: number) => Promise<boolean> | null): void {
    this.#moveHere = moveHere;
  }

  /** DELETE /events (a queue held by another worker moves here first). */
  delete(user: User, queueId: string): Promise<void> | void {
    const arriving = this.#arriving(user, queueId);
    if (arriving === null) return this.#remove(this.queueFor(user, queueId));
    return arriving.then(() => this.#remove(this.queueFor(user, queueId)));
  }

  /** Whether this hub holds the queue, or is taking it (a worker answers its polls itself). */
  holds(queueId: string): boolean {
    return this.#queues.has(queueId);
  }

  /**
   * What another worker needs to begin taking the queue (expect): its ID, user and
   * options, without events; null unless it is here, whole, and `userId`'s.
   */
  describe(queueId: string, userId: number): SavedQueue | null {
    const queue = this.#queues.get(queueId);
    if (queue === undefined || queue.userId !== userId || this.#incoming.has(queueId)) return null;
    const { id, realmId, options, lastActivity } = queue;
    return { id, userId, realmId, options, nextEventId: 0, lastActivity, events: [] };
  }

  /**
   * Begins a queue moving here (`spec`, from describe), empty: call synchronously where
   * the writer's event stream is at the point the other worker's copy stops (handOver
   * there), so that it takes exactly the batches after. Polls wait until fill brings
   * the events the other held. False when its user can no longer hold one here.
   */
  expect(spec: SavedQueue): boolean {
    const queue = this.#newQueue({ ...spec, nextEventId: 0, events: [] });
    if (queue === null) return false;
    let resolve: (held: boolean) => void = () => undefined;
    const done = new Promise<boolean>((r) => (resolve = r));
    this.#incoming.set(queue.id, { queue, done, resolve });
    this.#makeRoom(queue.userId, queue.realmId);
    this.#add(queue);
    return this.#queues.get(queue.id) === queue;
  }

  /**
   * The rest of a queue begun by expect: `saved`, the other worker's copy up to the point
   * this one began (null: it had none, and this one goes). Returns whether it is held.
   */
  fill(queueId: string, saved: SavedQueue | null): boolean {
    const incoming = this.#incoming.get(queueId);
    if (incoming === undefined) return false;
    this.#incoming.delete(queueId);
    const { queue } = incoming;
    if (this.#queues.get(queueId) !== queue || saved === null || saved.userId !== queue.userId) {
      this.#remove(queue);
      incoming.resolve(false);
      return false;
    }
    // Copies decided for it and not yet pushed get their numbers at the push, after these.
    this.#account(queue, () => queue.takePast(saved));
    const held = this.#queues.get(queueId) === queue;
    incoming.resolve(held);
    return held;
  }

  /**
   * Takes a queue out of this hub for another worker (`parley serve --workers`: the one
   * its polls reach), with every event decided for it so far; null if there is none (or
   * it is not `userId`'s, or still moving here).
   * Call synchronously where the writer's event stream is at the position the other
   * worker's copy continues from: it gets every later batch, this hub none. A poll waiting
   * here is answered with a heartbeat (kept in the queue until acknowledged, as any event).
   */
  handOver(queueId: string, userId?: number): SavedQueue | null {
    const queue = this.#queues.get(queueId);
    if (queue === undefined || this.#incoming.has(queueId)) return null;
    if (userId !== undefined && queue.userId !== userId) return null;
    // Copies decided at earlier commits and not yet pushed belong to what is handed over.
    this.#pushUndelivered(queue);
    if (this.#queues.get(queueId) !== queue) return null;
    if (queue.polling) {
      this.#handedOver.add(queue);
      this.#push(queue, openJson({ type: "heartbeat" }));
      if (this.#queues.get(queueId) !== queue) return null;
    }
    const saved = queue.save();
    this.#detach(queue);
    return saved;
  }

  /**
   * A queue another worker handed over (handOver), taking every batch released after it
   * (ephemeral ones included): false when its user can no longer hold one here.
   */
  adopt(saved: SavedQueue): boolean {
    const queue = this.#newQueue(saved);
    if (queue === null) return false;
    this.#makeRoom(saved.userId, saved.realmId);
    this.#add(queue);
    this.#account(queue, () => queue.restoreEvents(saved.events));
    return this.#queues.get(queue.id) === queue;
  }

  /** A queue for what another worker sent, not yet added; null when its user can no longer hold one here. */
  #newQueue(saved: SavedQueue): EventQueue | null {
    const user = this.#store.findUser(saved.userId);
    if (!user || !user.isActive || user.realmId !== saved.realmId || this.#queues.has(saved.id)) return null;
    let matches;
    try {
      matches = this.#compileNarrow(saved.userId, saved.options);
    } catch {
      return null;
    }
    const { id, userId, realmId, options, nextEventId } = saved;
    return new EventQueue(id, userId, realmId, options, matches, this.#clock.now(), nextEventId);
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
    const [eventsDelivered, queuesEvicted] = [this.#delivered, this.#evicted];
    return { queues: this.#queues.size, polling, queuedEvents: queued, eventsDelivered, queuesEvicted };
  }

  /**
   * Every queue with its pending events, for a graceful restart: most recently polled
   * first, so that a save cut short by its deadline keeps the clients most likely alive.
   */
  save(): SavedQueue[] {
    this.flush();
    const now = this.#clock.now();
    const recency = (q: EventQueue): number => (q.polling ? now : q.lastActivity);
    // A queue still moving here lacks its past: its client registers again.
    const whole = [...this.#queues.values()].filter((q) => !this.#incoming.has(q.id));
    return whole.sort((a, b) => recency(b) - recency(a)).map((q) => q.save());
  }

  /**
   * Restores saved queues (after a graceful restart) whose users still exist and are
   * active; each gets a `restart` event. The caps apply as to new queues (least recently
   * polled are restored first, so they are the ones a cap collects). Returns how many
   * queues were restored and are still held.
   */
  restore(saved: readonly SavedQueue[]): number {
    const restored: EventQueue[] = [];
    for (const s of [...saved].sort((a, b) => a.lastActivity - b.lastActivity)) {
      const user = this.#store.findUser(s.userId);
      if (!user || !user.isActive || user.realmId !== s.realmId || this.#queues.has(s.id)) continue;
      let matches;
      try {
        matches = this.#compileNarrow(s.userId, s.options);
      } catch {
        continue;
      }
      const queue = new EventQueue(s.id, s.userId, s.realmId, s.options, matches, this.#clock.now(), s.nextEventId);
      if (this.#followsWriter) queue.afterSeq = this.#store.caughtUpSeq;
      this.#makeRoom(s.userId, s.realmId);
      this.#add(queue);
      this.#account(queue, () => queue.restoreEvents(s.events));
      this.#push(queue, openJson({ type: "restart", ...this.#restartEvent }));
      restored.push(queue);
    }
    return restored.filter((q) => this.#queues.get(q.id) === q).length;
  }

  /**
   * Collects every queue (their clients get BAD_EVENT_QUEUE_ID and register again): a
   * reader worker that lost its writer's events can no longer tell what they missed.
   * Returns how many there were.
   */
  dropAll(): number {
    const queues = [...this.#queues.values()];
    this.#undelivered.clear();
    for (const queue of queues) this.#remove(queue);
    this.#abandonIncoming();
    return queues.length;
  }

  /** The users with a queue here (a reader worker names them to its writer: realtime/writer-stream). */
  usersWithQueues(): Iterable<number> {
    return this.#byUser.keys();
  }

  /** Pushes every delivery still under way, now (before saving queues, and for tests). */
  flush(): void {
    this.#drain(Number.POSITIVE_INFINITY);
  }

  /** Copies of committed events not yet pushed to their queues. */
  get pendingCopies(): number {
    let n = 0;
    for (const copies of this.#undelivered.values()) n += copies.length;
    return n;
  }

  /** Stops listening; waiting polls are answered (empty) so connections can close. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe();
    if (this.#drainScheduled !== null) clearImmediate(this.#drainScheduled);
    this.#drainScheduled = null;
    this.#undelivered.clear();
    if (this.#gcTimer !== null) this.#clock.clearTimeout(this.#gcTimer);
    for (const queue of this.#queues.values()) queue.releaseAll();
    // Answered now: the connections are about to close.
    if (this.#turnEndScheduled !== null) clearImmediate(this.#turnEndScheduled);
    this.#endTurn();
    this.#abandonIncoming();
  }

  /** Polls waiting for queues moving here get BAD_EVENT_QUEUE_ID. */
  #abandonIncoming(): void {
    for (const { resolve } of this.#incoming.values()) resolve(false);
    this.#incoming.clear();
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
    if (!mine) this.#byUser.set(queue.userId, (mine = { queues: new Set(), events: 0, chars: 0 }));
    mine.queues.add(queue);
    mine.events += queue.size;
    mine.chars += queue.chars;
    let realm = this.#byRealm.get(queue.realmId);
    if (!realm) this.#byRealm.set(queue.realmId, (realm = new Set()));
    realm.add(queue);
    if (queue.options.allPublicStreams) {
      let everyPublic = this.#allPublic.get(queue.realmId);
      if (!everyPublic) this.#allPublic.set(queue.realmId, (everyPublic = new Set()));
      everyPublic.add(queue);
    }
  }

  #remove(queue: EventQueue): void {
    if (this.#queues.get(queue.id) !== queue) return;
    this.#detach(queue);
    // A waiting poll learns at once that its queue is gone.
    queue.push(openJson({ type: "heartbeat" }));
  }

  #detach(queue: EventQueue): void {
    this.#queues.delete(queue.id);
    this.#undelivered.delete(queue);
    const mine = this.#byUser.get(queue.userId);
    if (mine?.queues.delete(queue)) {
      mine.events -= queue.size;
      mine.chars -= queue.chars;
      if (mine.queues.size === 0) this.#byUser.delete(queue.userId);
    }
    const realm = this.#byRealm.get(queue.realmId);
    realm?.delete(queue);
    if (realm?.size === 0) this.#byRealm.delete(queue.realmId);
    this.#allPublic.get(queue.realmId)?.delete(queue);
  }

  /** Collects a queue to keep its user or realm within a cap. */
  #evict(queue: EventQueue): void {
    this.#remove(queue);
    this.#evicted++;
  }

  /** Before a queue of `userId` in `realmId` is added: collects what would pass the caps. */
  #makeRoom(userId: number, realmId: number): void {
    const mine = this.#byUser.get(userId);
    while (mine && mine.queues.size >= this.#maxPerUser) this.#evict(leastRecentlyPolled(mine.queues)!);
    const realm = this.#byRealm.get(realmId);
    while (realm && realm.size >= this.#maxPerRealm) this.#evict(leastRecentlyPolled(realm)!);
  }

  /** A poll began or ended: the queue becomes its user's and realm's most recently polled. */
  #touch(queue: EventQueue): void {
    queue.lastActivity = this.#clock.now();
    const mine = this.#byUser.get(queue.userId);
    if (mine) moveToEnd(mine.queues, queue);
    const realm = this.#byRealm.get(queue.realmId);
    if (realm) moveToEnd(realm, queue);
  }

  /** Runs a change of a held queue's events, keeping its user's totals (and bounds). */
  #account(queue: EventQueue, change: () => void): void {
    const events = queue.size;
    const chars = queue.chars;
    change();
    const mine = this.#byUser.get(queue.userId);
    if (!mine || !mine.queues.has(queue)) return;
    mine.events += queue.size - events;
    mine.chars += queue.chars - chars;
    if (queue.size > this.#maxEvents) {
      this.#remove(queue);
      return;
    }
    while (mine.queues.size > 0 && (mine.events > this.#maxUserEvents || mine.chars > this.#maxUserChars)) {
      this.#evict(leastRecentlyPolled(mine.queues)!);
    }
  }

  #push(queue: EventQueue, body: string): void {
    this.#account(queue, () => queue.push(body));
  }

  #acknowledge(queue: EventQueue, lastEventId: number): void {
    this.#account(queue, () => queue.acknowledge(lastEventId));
  }

  /**
   * Decides, on the state the commit left, which queues get each event of the batch,
   * then pushes as much as a slice allows (all of it for small deliveries); the rest
   * follows on later turns.
   */
  #deliver(batch: EventBatch): void {
    const deactivated: number[] = [];
    for (const { event, audience } of batch.deliveries) {
      if (
        event.type === "realm_user" &&
        event.op === "update" &&
        "isActive" in event.changes &&
        !event.changes.isActive
      )
        deactivated.push(event.userId);
      // A deactivated realm's keys are refused: its clients can poll no more (Zulip's clients reload on this event).
      if (event.type === "realm" && event.op === "deactivated")
        for (const userId of this.#byUser.keys()) if (audience.has(userId)) deactivated.push(userId);
      const wire = new WireEvent(event, this.#store, this.#emailDomainOf);
      // Shared by every queue that gets the event the same way: a copy allocates nothing.
      const asRecipient: Copy = { wire, recipient: true };
      const asPublic: Copy = { wire, recipient: false };
      const take = (queue: EventQueue, copy: Copy): void => {
        if (!queue.wants(event.type)) return;
        // Registered on a state that holds this write already (followsWriter; ephemeral events have seq 0).
        if (batch.seq !== 0 && batch.seq <= queue.afterSeq) return;
        if (event.type === "message" && queue.matchesNarrow && !queue.matchesNarrow(event.message.id)) return;
        const copies = this.#undelivered.get(queue);
        if (copies === undefined) this.#undelivered.set(queue, [copy]);
        else copies.push(copy);
      };
      if (audience.size <= this.#byUser.size) {
        for (const userId of audience)
          for (const queue of this.#byUser.get(userId)?.queues ?? []) take(queue, asRecipient);
      } else {
        for (const [userId, mine] of this.#byUser) {
          if (audience.has(userId)) for (const queue of mine.queues) take(queue, asRecipient);
        }
      }
      if (event.type === "message" && event.publicChannelRealmId !== null) {
        for (const queue of this.#allPublic.get(event.publicChannelRealmId) ?? [])
          if (!audience.has(queue.userId)) take(queue, asPublic);
      }
    }
    // A deactivated user's (or realm's) clients can no longer poll (their key is refused): their
    // queues get what was decided for them, then go, and a poll waiting on one is answered
    // BAD_EVENT_QUEUE_ID. After the polls these pushes woke have answered (queued before), so
    // that a realm's clients get its `deactivated` event.
    if (deactivated.length > 0) {
      for (const userId of deactivated)
        for (const queue of [...(this.#byUser.get(userId)?.queues ?? [])]) this.#pushUndelivered(queue);
      this.#atTurnEnd(() => {
        for (const userId of deactivated)
          for (const queue of [...(this.#byUser.get(userId)?.queues ?? [])]) this.#remove(queue);
      });
    }
    if (this.#drainScheduled === null) this.#drain(this.#slice.maxCopies);
  }

  /**
   * Runs `step` once this turn of the loop is done, after those queued before it. A woken
   * poll is answered then, not right after the commit that woke it: the events of every
   * request handled in the turn go out in one answer (a reaction and a flag change, each
   * its own commit, were two answers to each queue). Zulip answers a waiting poll at its
   * event; this answers at the end of that turn, a few milliseconds at most, and the more
   * requests a turn holds (the busier the server), the more each answer carries.
   */
  #atTurnEnd(step: () => void): void {
    this.#turnEnd.push(step);
    this.#turnEndScheduled ??= setImmediate(() => this.#endTurn());
  }

  #endTurn(): void {
    this.#turnEndScheduled = null;
    const steps = this.#turnEnd;
    this.#turnEnd = [];
    for (const step of steps) step();
  }

  /** Pushes a queue's copies waiting for a slice, now. */
  #pushUndelivered(queue: EventQueue): void {
    const copies = this.#undelivered.get(queue);
    if (copies === undefined) return;
    this.#undelivered.delete(queue);
    for (const copy of copies) {
      // Collected by a cap through one of these pushes: it gets nothing more.
      if (this.#queues.get(queue.id) !== queue) return;
      this.#pushCopy(queue, copy);
    }
  }

  #pushCopy(queue: EventQueue, copy: Copy): void {
    for (const body of copy.wire.forQueue(queue, copy.recipient)) {
      this.#delivered++;
      this.#push(queue, body);
    }
  }

  /**
   * Pushes waiting copies, queue by queue (each queue's in commit order), up to
   * `maxCopies` (and the slice's time); schedules the rest.
   */
  #drain(maxCopies: number): void {
    const { minCopies, maxMs } = this.#slice;
    const started = performance.now();
    let pushed = 0;
    // A queue collected meanwhile (idle, over a cap, deleted) left this map with its copies.
    for (const [queue, copies] of this.#undelivered) {
      let next = 0;
      while (next < copies.length) {
        if (
          pushed >= minCopies &&
          (pushed >= maxCopies || (pushed % SLICE_CLOCK_EVERY === 0 && performance.now() - started > maxMs))
        ) {
          copies.splice(0, next);
          this.#drainScheduled ??= setImmediate(() => {
            this.#drainScheduled = null;
            this.#drain(this.#slice.maxCopies);
          });
          return;
        }
        if (this.#queues.get(queue.id) !== queue) break;
        pushed++;
        this.#pushCopy(queue, copies[next++]!);
      }
      this.#undelivered.delete(queue);
    }
  }
}
