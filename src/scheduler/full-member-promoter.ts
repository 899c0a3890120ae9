/**
 * @module scheduler/full-member-promoter
 * The server process's hourly full-member pass (Zulip's daily promote_new_full_members
 * cron job): members whose waiting period ended join role:fullmembers, with user_group
 * events, at most an hour late (Zulip: up to a day). Once at start too, for the time
 * the server was down.
 */
import type { Store } from "../engine/index.js";
import { systemClock, type Clock } from "../realtime/clock.js";

export const FULL_MEMBER_PASS_INTERVAL_MS = 3600 * 1000;

export interface FullMemberPromoterOptions {
  readonly clock?: Clock;
  readonly intervalMs?: number;
  readonly onError?: (error: unknown) => void;
}

export class FullMemberPromoter {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #onError: (error: unknown) => void;
  #timer: unknown = null;

  constructor(store: Store, options: FullMemberPromoterOptions = {}) {
    this.#store = store;
    this.#clock = options.clock ?? systemClock;
    this.#intervalMs = options.intervalMs ?? FULL_MEMBER_PASS_INTERVAL_MS;
    this.#onError = options.onError ?? ((error) => console.error("parley full-member pass:", error));
  }

  start(): void {
    if (this.#timer !== null) return;
    const tick = () => {
      this.runOnce();
      this.#timer = this.#clock.setTimeout(tick, this.#intervalMs);
    };
    this.runOnce();
    this.#timer = this.#clock.setTimeout(tick, this.#intervalMs);
  }

  /** One pass; returns how many users became full members (0 after an error, which is reported). */
  runOnce(): number {
    try {
      return this.#store.promoteNewFullMembers();
    } catch (error) {
      this.#onError(error);
      return 0;
    }
  }

  stop(): void {
    if (this.#timer !== null) this.#clock.clearTimeout(this.#timer);
    this.#timer = null;
  }
}
