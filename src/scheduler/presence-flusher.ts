/**
 * @module scheduler/presence-flusher
 * The server process's timer that makes presence durable: every
 * PRESENCE_FLUSH_INTERVAL_MS it asks the store to write the presence changed since
 * the last flush (one transaction). Pings themselves touch memory only, so a crash
 * loses at most one interval of presence timestamps; a graceful stop loses nothing
 * (Store.close flushes).
 */
import { PRESENCE_FLUSH_INTERVAL_MS, type Store } from "../engine/index.js";
import { systemClock, type Clock } from "../realtime/clock.js";

export interface PresenceFlusherOptions {
  readonly clock?: Clock;
  readonly intervalMs?: number;
  /** Where a failed flush is reported; the records stay pending for the next one. */
  readonly onError?: (error: unknown) => void;
}

export class PresenceFlusher {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #onError: (error: unknown) => void;
  #timer: unknown = null;

  constructor(store: Store, options: PresenceFlusherOptions = {}) {
    this.#store = store;
    this.#clock = options.clock ?? systemClock;
    this.#intervalMs = options.intervalMs ?? PRESENCE_FLUSH_INTERVAL_MS;
    this.#onError = options.onError ?? ((error) => console.error("parley presence flush:", error));
  }

  start(): void {
    if (this.#timer !== null) return;
    const tick = () => {
      try {
        this.#store.flushPresence();
      } catch (error) {
        this.#onError(error);
      }
      this.#timer = this.#clock.setTimeout(tick, this.#intervalMs);
    };
    this.#timer = this.#clock.setTimeout(tick, this.#intervalMs);
  }

  /** Stops the timer (before the store closes, which flushes what is left). */
  stop(): void {
    if (this.#timer !== null) this.#clock.clearTimeout(this.#timer);
    this.#timer = null;
  }
}
