/**
 * @module engine/turn-pacer
 * Background writes that each want a turn of the event loop of their own (a topic
 * deletion's batches and the reads ahead of them, read-bit purges, the stored email
 * chunks of a wildcard mention): one queue for all of them, so that two never run in
 * the same turn and hold the loop as one.
 */

/**
 * Yields until the event loop has passed its poll phase (I/O, other requests). One
 * setImmediate does not when called in that phase (a request's handler): it runs in the
 * same loop iteration's check phase, so delete_topic's first two batches held the loop
 * as one turn (65 + 47 ms, bench:worst); a timer would run in the next iteration's timers
 * phase, still before its poll. The second immediate runs in the check phase after a poll.
 */
function throughPoll(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));
}

export class TurnPacer {
  /** Work waiting for a turn of its own, oldest first. */
  readonly #waiters: (() => void)[] = [];
  #pacing = false;

  /**
   * Resolves once the event loop has passed its poll phase since the last caller was let
   * go. Each awaiting throughPoll on its own, a purge loop and a topic deletion resumed
   * in the same check phase, and their two writes held the loop as one turn. Callers
   * take turns in the order they asked.
   */
  turn(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#waiters.push(resolve);
      if (!this.#pacing) void this.#pace();
    });
  }

  async #pace(): Promise<void> {
    this.#pacing = true;
    try {
      while (this.#waiters.length > 0) {
        await throughPoll();
        // Its continuation runs in this turn's microtasks; the next waiter waits for the next poll.
        this.#waiters.shift()!();
      }
    } finally {
      this.#pacing = false;
    }
  }
}
