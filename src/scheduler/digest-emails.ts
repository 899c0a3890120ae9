/**
 * @module scheduler/digest-emails
 * The server process's loop of the weekly digest (engine: actions/digest-emails.ts),
 * on the due-work loop the mail sender uses: every DIGEST_POLL_MS it runs the digest
 * runs due today, one write of at most 30 recipients at a time, giving the event loop
 * a turn between writes; the mail sender then delivers what they enqueued. Started on
 * a realm's digest day, or restarted in the middle of its run, it sends what is left:
 * the progress is in the store, written with the mails.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Realm, Store } from "../engine/index.js";
import { systemClock, type Clock } from "../realtime/clock.js";
import { DueWorkLoop } from "../realtime/due-work-loop.js";

/** How often the loop looks for a digest day: a digest goes at most this long after the day begins (UTC). */
export const DIGEST_POLL_MS = 10 * 60_000;

export interface DigestMailerOptions {
  readonly clock?: Clock;
  /** Where an unexpected error of a round is reported; the loop goes on. */
  readonly onError?: (error: unknown) => void;
  /** After a round that enqueued mail: how many. */
  readonly onSent?: (count: number) => void;
}

export class DigestMailer {
  readonly #store: Store;
  readonly #realmUrl: (realm: Realm) => string;
  readonly #clock: Clock;
  readonly #loop: DueWorkLoop;

  constructor(store: Store, realmUrl: (realm: Realm) => string, options: DigestMailerOptions = {}) {
    this.#store = store;
    this.#realmUrl = realmUrl;
    this.#clock = options.clock ?? systemClock;
    const onSent = options.onSent;
    this.#loop = new DueWorkLoop({
      clock: this.#clock,
      pollMs: DIGEST_POLL_MS,
      round: async (stopped) => {
        const sent = await this.#sendDue(stopped);
        if (sent > 0) onSent?.(sent);
        return sent;
      },
      nextDue: () => null,
      onError: options.onError ?? ((error) => console.error("parley digest email:", error)),
    });
  }

  start(): void {
    this.#loop.start();
  }

  /** Stops between two writes: the rest of a run is sent after the restart. */
  stop(): void {
    this.#loop.stop();
  }

  /** One round: every digest run due now, to its end; resolves with how many mails were enqueued. */
  runOnce(): Promise<number> {
    return this.#loop.runOnce();
  }

  async #sendDue(stopped: () => boolean): Promise<number> {
    const cache = this.#store.newDigestCache();
    let sent = 0;
    for (;;) {
      if (stopped()) return sent;
      const count = this.#store.sendDigestChunk(Math.floor(this.#clock.now() / 1000), this.#realmUrl, cache);
      if (count === null) return sent;
      sent += count;
      await nextTurn();
    }
  }
}
