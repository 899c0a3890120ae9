/**
 * @module scheduler/message-retention
 * The server process's hourly retention pass (Zulip's daily archive_messages cron job):
 * messages older than their channel's or realm's message_retention_days are deleted,
 * at most an hour late (Zulip: up to a day). Once at start too, for the time the server
 * was down. Built like the full-member pass; the engine does the work in writes of a
 * batch each, yielding to the event loop between them, so a large first pass (a policy
 * newly set on years of history) does not hold requests up.
 */
import type { Store } from "../engine/index.js";
import { systemClock, type Clock } from "../realtime/clock.js";

export const RETENTION_PASS_INTERVAL_MS = 3600 * 1000;

export interface MessageRetentionOptions {
  readonly clock?: Clock;
  readonly intervalMs?: number;
  readonly onError?: (error: unknown) => void;
  /** After each pass that deleted messages, with how many. */
  readonly onDeleted?: (count: number) => void;
}

export class MessageRetention {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #onError: (error: unknown) => void;
  readonly #onDeleted: (count: number) => void;
  #timer: unknown = null;
  #running: Promise<number> | null = null;
  #started = false;
  /** Set by stop(): a running pass ends after its current write, and no other begins. */
  #stopped = false;

  constructor(store: Store, options: MessageRetentionOptions = {}) {
    this.#store = store;
    this.#clock = options.clock ?? systemClock;
    this.#intervalMs = options.intervalMs ?? RETENTION_PASS_INTERVAL_MS;
    this.#onError = options.onError ?? ((error) => console.error("parley retention pass:", error));
    this.#onDeleted = options.onDeleted ?? (() => undefined);
  }

  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    const tick = () => {
      void this.runOnce();
      this.#timer = this.#clock.setTimeout(tick, this.#intervalMs);
    };
    tick();
  }

  /**
   * One pass; resolves to how many messages it deleted (0 after an error, which is
   * reported). A pass asked for while one runs joins it rather than starting another.
   */
  runOnce(): Promise<number> {
    this.#running ??= this.#pass().finally(() => (this.#running = null));
    return this.#running;
  }

  async #pass(): Promise<number> {
    try {
      const deleted = await this.#store.deleteExpiredMessages({ stopped: () => this.#stopped });
      if (deleted > 0) this.#onDeleted(deleted);
      return deleted;
    } catch (error) {
      this.#onError(error);
      return 0;
    }
  }

  /** Resolves once no pass is running (at once when none is). */
  async settled(): Promise<void> {
    await this.#running;
  }

  /** Stops the timer and a running pass between two of its writes; resolves once that pass has. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) this.#clock.clearTimeout(this.#timer);
    this.#timer = null;
    await this.#running;
  }
}
