/**
 * @module scheduler/missed-email-batcher
 * The server process's loop that turns users' missed-message batches into mail when
 * their batching period ends (engine: actions/missed-message-emails.ts). It sleeps
 * until the next batch is due, at most MAX_SLEEP_MS at a time so batches started
 * meanwhile are seen, on an injectable clock. The mail sender (src/mail) then delivers
 * what each round enqueued. At start it sends at once what came due while the server
 * was down.
 */
import type { Realm, Store } from "../engine/index.js";
import { systemClock, type Clock } from "../realtime/clock.js";

/** The longest sleep: a batch is sent at most this late. */
export const MAX_SLEEP_MS = 1000;

export interface MissedEmailBatcherOptions {
  readonly clock?: Clock;
  /** Where an unexpected error of a round is reported; the loop goes on. */
  readonly onError?: (error: unknown) => void;
}

export class MissedEmailBatcher {
  readonly #store: Store;
  readonly #realmUrl: (realm: Realm) => string;
  readonly #clock: Clock;
  readonly #onError: (error: unknown) => void;
  #timer: unknown = null;
  #running = false;

  constructor(store: Store, realmUrl: (realm: Realm) => string, options: MissedEmailBatcherOptions = {}) {
    this.#store = store;
    this.#realmUrl = realmUrl;
    this.#clock = options.clock ?? systemClock;
    this.#onError = options.onError ?? ((error) => console.error("parley missed-message email:", error));
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#tick();
  }

  stop(): void {
    this.#running = false;
    if (this.#timer !== null) this.#clock.clearTimeout(this.#timer);
    this.#timer = null;
  }

  /** One round: every batch due now becomes mail; answers how many mails. */
  runOnce(): number {
    return this.#store.sendDueMissedEmails(Math.floor(this.#clock.now() / 1000), this.#realmUrl);
  }

  #tick(): void {
    this.#timer = null;
    if (!this.#running) return;
    try {
      this.runOnce();
    } catch (error) {
      this.#onError(error);
    }
    const next = this.#store.nextMissedEmailDue();
    // A batch still due after the round failed: retried on the next full sleep, not in a tight loop.
    const untilNext = next === null ? MAX_SLEEP_MS : next * 1000 - this.#clock.now();
    const wait = untilNext <= 0 ? MAX_SLEEP_MS : Math.min(MAX_SLEEP_MS, untilNext);
    this.#timer = this.#clock.setTimeout(() => this.#tick(), wait);
  }
}
