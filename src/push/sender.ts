/**
 * @module push/sender
 * The background loop that drains the push outbox (written by the engine in the same
 * transaction as each message, read flag or device registration) to the bouncer.
 *
 * Items go out oldest first, one request each; an item leaves the outbox only in the
 * write that records the bouncer's answer (engine finishPushItem), so a crash or
 * restart at any point sends it again rather than losing it. When the bouncer cannot
 * take requests (unreachable, 5xx, this server's registration refused), the round
 * stops and the whole loop backs off exponentially — every item would fail alike —
 * then resumes where it stopped, in order. Items older than PUSH_ITEM_MAX_AGE_SECS
 * are given up (a registration then records REQUEST_EXPIRED, as Zulip's does).
 * New outbox items wake the loop at once (it listens to the store's commits).
 */
import { PUSH_ITEM_MAX_AGE_SECS, type Store } from "../engine/index.js";
import { systemClock, type Clock } from "../realtime/clock.js";
import type { BouncerClient } from "./bouncer-client.js";
import { deliverPushItem, RetryLaterError } from "./deliver.js";

/** The longest sleep between rounds when nothing wakes the loop. */
export const IDLE_SLEEP_MS = 1000;

export interface PushSenderOptions {
  readonly clock?: Clock;
  /** The first retry delay after a failed round; doubled each time up to maxBackoffMs. */
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /** Where failures are reported (the loop goes on). */
  readonly onError?: (message: string, error: unknown) => void;
}

export class PushSender {
  readonly #store: Store;
  readonly #client: BouncerClient;
  readonly #baseUrl: () => string;
  readonly #clock: Clock;
  readonly #initialBackoffMs: number;
  readonly #maxBackoffMs: number;
  readonly #onError: (message: string, error: unknown) => void;
  #timer: unknown = null;
  #running = false;
  #busy: Promise<void> | null = null;
  #failures = 0;
  /** While backing off, rounds wait until this time (clock ms). */
  #retryAt = 0;
  #unsubscribe: (() => void) | null = null;
  /** Bumped by stop(): a round started before ends after its current request. */
  #generation = 0;

  /** `baseUrl` gives the server's public base URL (realm URLs are made from it). */
  constructor(store: Store, client: BouncerClient, baseUrl: () => string, options: PushSenderOptions = {}) {
    this.#store = store;
    this.#client = client;
    this.#baseUrl = baseUrl;
    this.#clock = options.clock ?? systemClock;
    this.#initialBackoffMs = options.initialBackoffMs ?? 1000;
    this.#maxBackoffMs = options.maxBackoffMs ?? 5 * 60_000;
    this.#onError = options.onError ?? ((message, error) => console.error(`parley push: ${message}`, error));
  }

  /** Sends what is pending now (left by the last run too), then keeps sending until stop(). */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#unsubscribe = this.#store.onEvents(() => this.#wake());
    this.#schedule(0);
  }

  /** Stops the loop; resolves when a request in flight has finished (before the store closes). */
  async stop(): Promise<void> {
    this.#running = false;
    this.#generation++;
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    if (this.#timer !== null) this.#clock.clearTimeout(this.#timer);
    this.#timer = null;
    await this.#busy;
  }

  /**
   * One round: every pending item in order, until the outbox is empty or the bouncer
   * fails. Resolves with the number of items finished. Exposed for tests and tools.
   */
  async runOnce(): Promise<number> {
    if (this.#busy) {
      await this.#busy;
      return 0;
    }
    let done = 0;
    const generation = this.#generation;
    const round = (async () => {
      let after = 0;
      for (;;) {
        const items = this.#store.pushOutboxItems(after, 100);
        if (items.length === 0) return;
        for (const item of items) {
          after = item.id;
          const nowSecs = Math.floor(this.#clock.now() / 1000);
          if (nowSecs - item.createdAt > PUSH_ITEM_MAX_AGE_SECS) {
            this.#store.finishPushItem(
              item.id,
              item.kind === "register" ? { kind: "refused", code: "REQUEST_EXPIRED" } : { kind: "dropped" },
            );
            done++;
            continue;
          }
          const delivery = this.#store.resolvePushItem(item.id);
          if (delivery === null) {
            this.#store.finishPushItem(item.id, { kind: "dropped" });
            done++;
            continue;
          }
          const outcome = await deliverPushItem(this.#client, delivery, this.#baseUrl());
          // Stopped meanwhile: the store may be closing. The item stays and goes again
          // after the restart (at least once, never lost).
          if (this.#generation !== generation) return;
          this.#store.finishPushItem(item.id, outcome);
          done++;
          if (this.#generation !== generation) return;
        }
      }
    })();
    this.#busy = round.then(
      () => {
        this.#failures = 0;
        this.#retryAt = 0;
      },
      (error: unknown) => {
        this.#failures++;
        this.#retryAt = this.#clock.now() + this.#backoffMs();
        if (!(error instanceof RetryLaterError)) this.#onError("delivery round failed", error);
      },
    );
    try {
      await this.#busy;
    } finally {
      this.#busy = null;
    }
    return done;
  }

  /** The delay after the current run of failures. */
  #backoffMs(): number {
    return Math.min(this.#maxBackoffMs, this.#initialBackoffMs * 2 ** Math.max(0, this.#failures - 1));
  }

  #wake(): void {
    if (!this.#running || this.#busy) return;
    this.#schedule(Math.max(0, this.#retryAt - this.#clock.now()));
  }

  #schedule(ms: number): void {
    if (this.#timer !== null) this.#clock.clearTimeout(this.#timer);
    this.#timer = this.#clock.setTimeout(() => void this.#tick(), ms);
  }

  async #tick(): Promise<void> {
    this.#timer = null;
    if (!this.#running) return;
    if (this.#retryAt <= this.#clock.now()) await this.runOnce();
    if (!this.#running) return;
    const now = this.#clock.now();
    this.#schedule(this.#retryAt > now ? this.#retryAt - now : IDLE_SLEEP_MS);
  }
}
