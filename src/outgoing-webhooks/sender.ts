/**
 * @module outgoing-webhooks/sender
 * The in-process loop that drains the webhook outbox (engine/outgoing-webhooks), as
 * the mail sender drains the mail outbox: it wakes at least every second, makes the
 * due calls one at a time, and retries with exponential backoff (base, doubling,
 * capped). What each call leads to is Zulip's (zerver/lib/outgoing_webhook.py
 * do_rest_call):
 * - 2xx: the answer's message is posted by the bot in the conversation; a malformed
 *   answer posts "Failure! ..." there and tells the bot's owner;
 * - another status: "Failure! Third party responded with N" there, and the owner is
 *   told (407, which a refused address becomes, as the private-network notice);
 * - timeout or connection error: retried; after MAX_WEBHOOK_RETRIES retries "Failure!
 *   Bot is unavailable" there, and the owner is told why;
 * - any other failure (a bad URL): "Failure! An exception ..." there, owner told.
 * Zulip's worker retries at once; here retries wait, so a service that is down for a
 * while is not hammered. Calls are at least once: a call in flight when the process
 * stops is made again after the restart, but what it posts is posted once (the post
 * and the item's removal are one write).
 */
import { realmUrl as realmUrlOf } from "../wire/realm-url.js";
import type { Store, WebhookDelivery } from "../engine/index.js";
import { systemClock, type Clock } from "../realtime/clock.js";
import { doublingBackoff, DueWorkLoop } from "../realtime/due-work-loop.js";
import type { AddressPolicy } from "../external-content/index.js";
import { CallFailed, postToService, type CallAnswer } from "./http-call.js";
import { failureReply, messageLink, ownerNotice, type OwnerNoticeCause } from "./notices.js";
import {
  genericRequest,
  pythonBytesRepr,
  pythonStringRepr,
  readSuccess,
  slackRequest,
  SLACK_INTERFACE,
} from "./payload.js";

/** Zulip's MAX_REQUEST_RETRIES: a call that timed out or could not connect is tried this many more times. */
export const MAX_WEBHOOK_RETRIES = 3;
/** The longest sleep: a new call waits at most this long. */
export const WEBHOOK_POLL_MS = 1000;
/** Zulip's User-Agent for these requests is ZulipOutgoingWebhook/<version>. */
const USER_AGENT = "ZulipOutgoingWebhook/12.0 (parley)";

export interface WebhookSenderOptions {
  readonly clock?: Clock;
  /** The server's public base URL (realm URLs are made from it). */
  readonly baseUrl: () => string;
  /** Zulip's OUTGOING_WEBHOOK_TIMEOUT_SECONDS, in ms. */
  readonly timeoutMs: number;
  readonly isAllowedAddress: AddressPolicy;
  /** First retry delay, doubled per failed attempt up to maxBackoffMs. */
  readonly baseBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /** Where failures of the loop itself are reported (calls that fail are the bot's business). */
  readonly onError?: (error: unknown) => void;
}

/** What one call came to: what to post (finish), or a later try. */
type Outcome =
  | { readonly kind: "finish"; readonly reply: string | null; readonly ownerNotice: string | null }
  | { readonly kind: "retry"; readonly error: string };

export class WebhookSender {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #options: WebhookSenderOptions;
  readonly #loop: DueWorkLoop;

  constructor(store: Store, options: WebhookSenderOptions) {
    this.#store = store;
    this.#clock = options.clock ?? systemClock;
    this.#options = options;
    this.#loop = new DueWorkLoop({
      clock: this.#clock,
      pollMs: WEBHOOK_POLL_MS,
      round: (stopped) => this.#callDue(stopped),
      nextDue: () => this.#store.nextWebhookAttempt(),
      onError: options.onError ?? ((error) => console.error("parley webhooks:", error)),
    });
  }

  /** Makes the calls due now (those left by the last run too), then keeps polling until stop(). */
  start(): void {
    this.#loop.start();
  }

  /**
   * Stops polling. A call in flight is not awaited and its outcome is not recorded
   * (the store may be closing): it stays in the outbox and is made again after the
   * restart.
   */
  stop(): void {
    this.#loop.stop();
  }

  /** One round: every due call, one at a time; resolves with how many were finished. Rounds never overlap. */
  runOnce(): Promise<number> {
    return this.#loop.runOnce();
  }

  async #callDue(stopped: () => boolean): Promise<number> {
    let finished = 0;
    for (const item of this.#store.dueWebhookItems(this.#clock.now())) {
      if (stopped()) return finished;
      const delivery = this.#store.resolveWebhookItem(item.id);
      const outcome: Outcome =
        delivery === null ? { kind: "finish", reply: null, ownerNotice: null } : await this.#call(delivery);
      // Stopped meanwhile: the store may be closing; the item stays for the next start.
      if (stopped()) return finished;
      if (outcome.kind === "retry") {
        const backoff = doublingBackoff(
          item.attempts,
          this.#options.baseBackoffMs ?? 1000,
          this.#options.maxBackoffMs ?? 60_000,
        );
        this.#store.retryWebhookItem(item.id, outcome.error, this.#clock.now() + backoff);
        continue;
      }
      this.#store.finishWebhookItem(item.id, { reply: outcome.reply, ownerNotice: outcome.ownerNotice });
      finished++;
    }
    return finished;
  }

  async #call(delivery: WebhookDelivery): Promise<Outcome> {
    const realmUrl = new URL(realmUrlOf(this.#options.baseUrl(), delivery.realm));
    const body =
      delivery.service.interface === SLACK_INTERFACE
        ? slackRequest(this.#store, delivery, realmUrl.host)
        : genericRequest(this.#store, delivery);
    if (body === null)
      return {
        kind: "finish",
        reply: failureReply("Slack outgoing webhooks don't support direct messages."),
        ownerNotice: null,
      };
    const notify = (cause: OwnerNoticeCause, payload: string | null) =>
      ownerNotice(this.#messageUrl(realmUrl.origin, delivery), delivery.bot.fullName, cause, payload);
    let answer: CallAnswer;
    try {
      answer = await postToService(delivery.service.baseUrl, body, {
        timeoutMs: this.#options.timeoutMs,
        isAllowedAddress: this.#options.isAllowedAddress,
        userAgent: USER_AGENT,
      });
    } catch (error) {
      if (!(error instanceof CallFailed)) throw error;
      if (error.kind === "exception") {
        const command = delivery.message.content;
        return {
          kind: "finish",
          reply: failureReply(
            `An exception of type *${error.type}* occurred for message \`${command}\`! ` +
              "See the Zulip server logs for more information.",
          ),
          ownerNotice: notify({ kind: "exception", type: error.type, detail: error.message }, null),
        };
      }
      if (delivery.item.attempts < MAX_WEBHOOK_RETRIES) return { kind: "retry", error: error.message };
      const why =
        error.kind === "timeout"
          ? `Request timed out after ${Math.round(this.#options.timeoutMs / 1000)} seconds.`
          : "A connection error occurred. Is my bot server down?";
      return {
        kind: "finish",
        reply: failureReply("Bot is unavailable"),
        ownerNotice: notify({ kind: "message", text: why }, null),
      };
    }
    if (answer.status >= 200 && answer.status < 300) {
      const text = answer.body.toString("utf8");
      const reading = readSuccess(delivery.service.interface, text);
      if (reading.kind === "content") return { kind: "finish", reply: reading.content, ownerNotice: null };
      const detail =
        "The outgoing webhook server attempted to send a message in Zulip, but that request resulted " +
        `in the following error:\n> ${reading.error}`;
      return {
        kind: "finish",
        reply: failureReply(reading.error),
        ownerNotice: notify({ kind: "message", text: detail }, text === "" ? null : pythonStringRepr(text)),
      };
    }
    return {
      kind: "finish",
      reply: failureReply(`Third party responded with ${answer.status}`),
      ownerNotice: notify(
        { kind: "status", status: answer.status },
        answer.body.length === 0 ? null : pythonBytesRepr(answer.body),
      ),
    };
  }

  #messageUrl(realmUrl: string, delivery: WebhookDelivery): string {
    const participants =
      delivery.message.recipient.type === "direct"
        ? (this.#store.findConversation(delivery.message.recipient.conversationId)?.userIds ?? [])
        : [];
    return messageLink(realmUrl, delivery, participants);
  }
}
