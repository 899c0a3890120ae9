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
  #timer: unknown = null;
  #running = false;
  /** Set by stop(): outcomes of deliveries still in flight are no longer recorded. */
  #stopped = false;
  #round: Promise<number> | null = null;

  constructor(store: Store, transport: MailTransport, options: MailSenderOptions) {
    this.#store = store;
    this.#transport = transport;
    this.#clock = options.clock ?? systemClock;
    this.#options = options;
  }

  get description(): string {
    return this.#transport.description;
  }

  /** Delivers what is due now (mail left by the last run included), then keeps polling until stop(). */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#tick();
  }

  /**
   * Stops polling. A delivery in flight is not awaited and its outcome is not
   * recorded (the store may be closing): that mail stays in the outbox and goes
   * out again after the restart.
   */
  stop(): void {
    this.#running = false;
    this.#stopped = true;
    if (this.#timer !== null) this.#clock.clearTimeout(this.#timer);
    this.#timer = null;
    this.#transport.close();
  }

  /** One round: every due mail, one at a time; resolves with how many were delivered. Rounds never overlap. */
  runOnce(): Promise<number> {
    this.#round ??= this.#deliverDue().finally(() => {
      this.#round = null;
    });
    return this.#round;
  }

  async #deliverDue(): Promise<number> {
    let delivered = 0;
    for (const mail of this.#store.dueMail(this.#clock.now())) {
      if (this.#stopped) return delivered;
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
        if (this.#stopped) return delivered;
        const permanent = isPermanentFailure(error);
        const retryAt = permanent ? null : this.#clock.now() + this.#backoff(mail.attempts);
        const after = this.#store.markMailAttemptFailed(mail.id, describe(error), retryAt);
        this.#options.onFailure?.(mail, error, after?.state === "failed");
        continue;
      }
      if (this.#stopped) return delivered;
      this.#store.markMailDelivered(mail.id);
      delivered++;
      this.#options.onDelivered?.(mail);
    }
    return delivered;
  }

  #backoff(previousAttempts: number): number {
    const base = this.#options.baseBackoffMs ?? 10_000;
    const max = this.#options.maxBackoffMs ?? 10 * 60_000;
    return Math.min(max, base * 2 ** Math.min(previousAttempts, 30));
  }

  #tick(): void {
    this.#timer = null;
    if (!this.#running) return;
    void this.runOnce()
      .catch((error: unknown) => console.error("parley mail:", error))
      .finally(() => {
        if (!this.#running) return;
        const next = this.#store.nextMailAttempt();
        const wait = next === null ? MAIL_POLL_MS : Math.min(MAIL_POLL_MS, Math.max(0, next - this.#clock.now()));
        this.#timer = this.#clock.setTimeout(() => this.#tick(), wait);
      });
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
