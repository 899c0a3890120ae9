/**
 * @module realtime/due-work-loop
 * The poll loop of the outbox drainers (mail, outgoing webhooks): rounds over what is
 * due that never overlap, a sleep to the next due item capped at the poll interval (so
 * new work waits at most that long), and a stop that does not wait for a round in
 * flight: the round sees `stopped()` after its next await and records nothing more,
 * because the store may be closing; the item stays in its outbox for the restart.
 */
import type { Clock } from "./clock.js";

export interface DueWorkLoopOptions {
  readonly clock: Clock;
  /** The longest sleep between rounds. */
  readonly pollMs: number;
  /** One round over the due work; resolves with how many items it finished. */
  readonly round: (stopped: () => boolean) => Promise<number>;
  /** When the next item falls due (clock ms), or null when nothing waits. */
  readonly nextDue: () => number | null;
  /** A round that threw (an item's own failure is the round's business, not this). */
  readonly onError: (error: unknown) => void;
}

export class DueWorkLoop {
  readonly #options: DueWorkLoopOptions;
  #timer: unknown = null;
  #running = false;
  #stopped = false;
  #round: Promise<number> | null = null;

  constructor(options: DueWorkLoopOptions) {
    this.#options = options;
  }

  /** Runs a round now (work left by the last run included), then keeps polling until stop(). */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#tick();
  }

  stop(): void {
    this.#running = false;
    this.#stopped = true;
    if (this.#timer !== null) this.#options.clock.clearTimeout(this.#timer);
    this.#timer = null;
  }

  /** One round now, or the round already running. */
  runOnce(): Promise<number> {
    this.#round ??= this.#options
      .round(() => this.#stopped)
      .finally(() => {
        this.#round = null;
      });
    return this.#round;
  }

  #tick(): void {
    this.#timer = null;
    if (!this.#running) return;
    const { clock, pollMs } = this.#options;
    void this.runOnce()
      .catch((error: unknown) => this.#options.onError(error))
      .finally(() => {
        if (!this.#running) return;
        const next = this.#options.nextDue();
        const wait = next === null ? pollMs : Math.min(pollMs, Math.max(0, next - clock.now()));
        this.#timer = clock.setTimeout(() => this.#tick(), wait);
      });
  }
}

/** The delay before the next attempt: base, doubled per attempt already failed, capped at max. */
export function doublingBackoff(previousAttempts: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.min(previousAttempts, 30));
}
