/**
 * @module scheduler/scheduler
 * The in-process loop that delivers scheduled messages. The engine keeps no timer: it
 * exposes deliverDueScheduledMessages(now) (one transaction per message, so the
 * durability argument lives there) and nextScheduledDelivery(); this loop sleeps
 * until the next delivery time, at most one second at a time so that messages
 * scheduled meanwhile are picked up within a second, on an injectable clock.
 *
 * At start it delivers at once whatever came due while the server was down.
 */
import type { DeliveryOutcome, Store } from "../engine/index.js";
import { systemClock, type Clock } from "../realtime/clock.js";

/** The longest sleep: a message scheduled during it is delivered at most this late. */
export const MAX_SLEEP_MS = 1000;
/**
 * Delivery time per turn of the event loop. Each delivery is its own durable write;
 * a backlog after downtime (10,000 due messages) delivered in one loop held the event
 * loop for seconds. The rest waits for the next turn (setImmediate), so requests and
 * polls are answered in between.
 */
export const SLICE_MS = 10;

export interface SchedulerOptions {
  readonly clock?: Clock;
  /** Called after each delivery (or failure). */
  readonly onDelivery?: (outcome: DeliveryOutcome) => void;
  /** Where an unexpected error of a round is reported; the loop goes on. */
  readonly onError?: (error: unknown) => void;
  /** Delivery time per event-loop turn (default SLICE_MS; 0 delivers one message per turn). */
  readonly sliceMs?: number;
}

export class Scheduler {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #onDelivery: (outcome: DeliveryOutcome) => void;
  readonly #onError: (error: unknown) => void;
  readonly #sliceMs: number;
  #timer: unknown = null;
  #immediate: NodeJS.Immediate | null = null;
  #running = false;

  constructor(store: Store, options: SchedulerOptions = {}) {
    this.#store = store;
    this.#clock = options.clock ?? systemClock;
    this.#onDelivery = options.onDelivery ?? (() => undefined);
    this.#onError = options.onError ?? ((error) => console.error("parley scheduler:", error));
    this.#sliceMs = options.sliceMs ?? SLICE_MS;
  }

  /** Delivers what is due now, then keeps delivering on time until stop(). */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#tick();
  }

  /** Stops the loop (before the store closes). */
  stop(): void {
    this.#running = false;
    if (this.#timer !== null) this.#clock.clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#immediate !== null) clearImmediate(this.#immediate);
    this.#immediate = null;
  }

  /** One round: deliver every due message. Exposed for tests and tools. */
  runOnce(): DeliveryOutcome[] {
    const outcomes = this.#store.deliverDueScheduledMessages(Math.floor(this.#clock.now() / 1000));
    for (const outcome of outcomes) this.#onDelivery(outcome);
    return outcomes;
  }

  /** Delivers due messages for at most SLICE_MS; true when some are still due. */
  #deliverSlice(): boolean {
    const started = performance.now();
    const now = Math.floor(this.#clock.now() / 1000);
    for (;;) {
      const [outcome] = this.#store.deliverDueScheduledMessages(now, 1);
      if (outcome === undefined) return false;
      this.#onDelivery(outcome);
      if (performance.now() - started >= this.#sliceMs) return true;
    }
  }

  #tick(): void {
    this.#timer = null;
    this.#immediate = null;
    if (!this.#running) return;
    let more = false;
    try {
      more = this.#deliverSlice();
    } catch (error) {
      this.#onError(error);
    }
    if (!this.#running) return;
    if (more) {
      this.#immediate = setImmediate(() => this.#tick());
      return;
    }
    const next = this.#store.nextScheduledDelivery();
    const wait = next === null ? MAX_SLEEP_MS : Math.min(MAX_SLEEP_MS, Math.max(0, next * 1000 - this.#clock.now()));
    this.#timer = this.#clock.setTimeout(() => this.#tick(), wait);
  }
}
