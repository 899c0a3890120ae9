/**
 * @module mail/sender
 * The in-process loop that drains the engine's mail outbox (engine/mail/outbox.ts)
 * into a transport, like the scheduler drains scheduled messages: it wakes at least
 * every second, delivers what is due one mail at a time, and on failure schedules
 * the next attempt with exponential backoff (base, doubling, capped), so a mail
 * server that is down for a while loses nothing; a restart resumes from the outbox.
 * A mail the server refuses for good (5xx for its recipients) is marked failed at
 * once; any mail is marked failed after MAX_MAIL_ATTEMPTS attempts.
 *
 * Delivery is at least once: a mail handed to the server just before a crash (or
 * a stop) is sent again after the restart.
 */
import type { OutboxMail, Store } from "../engine/index.js";
import { systemClock, type Clock } from "../realtime/clock.js";
import { doublingBackoff, DueWorkLoop } from "../realtime/due-work-loop.js";
import { isPermanentFailure, type MailTransport } from "./transports.js";

/** The longest sleep: new mail waits at most this long. */
export const MAIL_POLL_MS = 1000;

export interface MailSenderOptions {
  readonly clock?: Clock;
  /** Formats the From header for a mail's display name. */
  readonly from: (name: string | null) => string;
  /** First retry delay, doubled per failed attempt up to maxBackoffMs. */
  readonly baseBackoffMs?: number;
  readonly maxBackoffMs?: number;
  readonly onDelivered?: (mail: OutboxMail) => void;
  /** A failed attempt (retried unless `gaveUp`). */
  readonly onFailure?: (mail: OutboxMail, error: unknown, gaveUp: boolean) => void;
}

export class MailSender {
  readonly #store: Store;
  readonly #transport: MailTransport;
  readonly #clock: Clock;
  readonly #options: MailSenderOptions;
  readonly #loop: DueWorkLoop;

  constructor(store: Store, transport: MailTransport, options: MailSenderOptions) {
    this.#store = store;
    this.#transport = transport;
    this.#clock = options.clock ?? systemClock;
    this.#options = options;
    this.#loop = new DueWorkLoop({
      clock: this.#clock,
      pollMs: MAIL_POLL_MS,
      round: (stopped) => this.#deliverDue(stopped),
      nextDue: () => this.#store.nextMailAttempt(),
      onError: (error) => console.error("parley mail:", error),
    });
  }

  get description(): string {
    return this.#transport.description;
  }

  /** Delivers what is due now (mail left by the last run included), then keeps polling until stop(). */
  start(): void {
    this.#loop.start();
  }

  /**
   * Stops polling. A delivery in flight is not awaited and its outcome is not
   * recorded (the store may be closing): that mail stays in the outbox and goes
   * out again after the restart.
   */
  stop(): void {
    this.#loop.stop();
    this.#transport.close();
  }

  /** One round: every due mail, one at a time; resolves with how many were delivered. Rounds never overlap. */
  runOnce(): Promise<number> {
    return this.#loop.runOnce();
  }

  async #deliverDue(stopped: () => boolean): Promise<number> {
    let delivered = 0;
    for (const mail of this.#store.dueMail(this.#clock.now())) {
      if (stopped()) return delivered;
      try {
        await this.#transport.deliver({
          id: mail.id,
          from: this.#options.from(mail.fromName),
          to: mail.to,
          subject: mail.subject,
          text: mail.text,
          html: mail.html ?? null,
        });
      } catch (error) {
        if (stopped()) return delivered;
        const permanent = isPermanentFailure(error);
        const backoff = doublingBackoff(
          mail.attempts,
          this.#options.baseBackoffMs ?? 10_000,
          this.#options.maxBackoffMs ?? 10 * 60_000,
        );
        const after = this.#store.markMailAttemptFailed(
          mail.id,
          describe(error),
          permanent ? null : this.#clock.now() + backoff,
        );
        this.#options.onFailure?.(mail, error, after?.state === "failed");
        continue;
      }
      if (stopped()) return delivered;
      this.#store.markMailDelivered(mail.id);
      delivered++;
      this.#options.onDelivered?.(mail);
    }
    return delivered;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
