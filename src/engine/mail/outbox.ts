/**
 * @module mail/outbox
 * The durable mail queue. Actions that cause mail (an invitation, an email change)
 * enqueue it inside their own write, so the mail exists exactly when the change
 * does; a sender outside the engine (src/mail) drains it with retries. Delivery is
 * at least once: a crash between handing a mail to the SMTP server and recording it
 * sends it again after the restart.
 */
import type { StoreState, WriteContext } from "../state.js";
import type { OutboxMail } from "../types.js";

export interface MailInput {
  readonly to: readonly string[];
  readonly subject: string;
  readonly text: string;
  /** An HTML alternative of `text`. */
  readonly html?: string;
  readonly fromName?: string | null;
}

/** Attempts after which a mail is marked failed and left for the operator. */
export const MAX_MAIL_ATTEMPTS = 20;

/** Puts a mail in the outbox inside an open write: deliverable at once. */
export function enqueueMailInTxn(state: StoreState, ctx: WriteContext, input: MailInput): OutboxMail {
  const mail: OutboxMail = {
    id: state.allocate("nextMailId"),
    to: [...input.to],
    subject: input.subject,
    text: input.text,
    html: input.html ?? null,
    fromName: input.fromName ?? null,
    createdAt: state.now(),
    attempts: 0,
    nextAttemptAt: 0,
    lastError: null,
    state: "pending",
  };
  state.tables.outbox.putSync(mail.id, mail);
  ctx.afterCommit(() => state.outbox.set(mail.id, mail));
  ctx.changed({ kind: "mail", id: mail.id, op: "added" });
  return mail;
}

/** Pending mail whose next attempt is due at `nowMs`, oldest first. */
export function dueMail(state: StoreState, nowMs: number, limit: number): OutboxMail[] {
  const out: OutboxMail[] = [];
  for (const mail of state.outbox.values()) if (mail.state === "pending" && mail.nextAttemptAt <= nowMs) out.push(mail);
  return out.sort((a, b) => a.id - b.id).slice(0, limit);
}

/** The earliest next attempt of any pending mail (UNIX ms), or null when none is pending. */
export function nextMailAttempt(state: StoreState): number | null {
  let next: number | null = null;
  for (const mail of state.outbox.values())
    if (mail.state === "pending" && (next === null || mail.nextAttemptAt < next)) next = mail.nextAttemptAt;
  return next;
}

/** Delivered: the mail leaves the outbox. */
export function markMailDelivered(state: StoreState, mailId: number): void {
  if (!state.outbox.has(mailId)) return;
  state.write((ctx) => {
    state.tables.outbox.removeSync(mailId);
    ctx.afterCommit(() => state.outbox.delete(mailId));
    ctx.changed({ kind: "mail", id: mailId, op: "removed" });
  });
}

/** A failed attempt: retried at `retryAt` (UNIX ms), or given up when null or after MAX_MAIL_ATTEMPTS. */
export function markMailAttemptFailed(
  state: StoreState,
  mailId: number,
  error: string,
  retryAt: number | null,
): OutboxMail | undefined {
  const mail = state.outbox.get(mailId);
  if (!mail) return undefined;
  const attempts = mail.attempts + 1;
  const giveUp = retryAt === null || attempts >= MAX_MAIL_ATTEMPTS;
  const next: OutboxMail = {
    ...mail,
    attempts,
    lastError: error.slice(0, 1000),
    nextAttemptAt: retryAt ?? mail.nextAttemptAt,
    state: giveUp ? "failed" : "pending",
  };
  state.write((ctx) => {
    state.tables.outbox.putSync(mailId, next);
    ctx.afterCommit(() => state.outbox.set(mailId, next));
    ctx.changed({ kind: "mail", id: mailId });
  });
  return next;
}
