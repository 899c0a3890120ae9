/**
 * @module outgoing-webhooks/outbox
 * The webhook outbox: calls to outgoing webhook bots (zerver/lib/outgoing_webhook.py),
 * written with the message that triggers them (triggers.ts), so each exists exactly
 * when its message does. A sender outside the engine (src/outgoing-webhooks) makes
 * the HTTP request and hands back what to post:
 * - the bot's reply to the conversation, its notice to its owner and the removal of
 *   the item are one write, so a request repeated after a crash (delivery is at least
 *   once) never posts a reply twice.
 */
import type { StoreState } from "../state.js";
import type { BotService, Channel, Message, Realm, User, WebhookOutboxItem } from "../types.js";
import {
  defaultReadBySender,
  normalizeContent,
  renderMessage,
  storeMessage,
  type MessageToWrite,
} from "../actions/send-message.js";
import { getMessageRecord } from "../storage/message-records.js";
import { isServiceBot } from "./triggers.js";

/** Zulip's get_client("OutgoingWebhookResponse"): the client of every message a webhook bot posts. */
export const WEBHOOK_RESPONSE_CLIENT = "OutgoingWebhookResponse";

/** Every item in the outbox, oldest first. */
export function webhookOutboxItems(state: StoreState, limit = 1000): WebhookOutboxItem[] {
  const out: WebhookOutboxItem[] = [];
  for (const { value } of state.tables.webhookOutbox.getRange({ start: 1, limit }))
    out.push(value as WebhookOutboxItem);
  return out;
}

/** Items whose attempt is due at `nowMs` (UNIX ms), oldest first. */
export function dueWebhookItems(state: StoreState, nowMs: number, limit: number): WebhookOutboxItem[] {
  const out: WebhookOutboxItem[] = [];
  for (const { value } of state.tables.webhookOutbox.getRange({ start: 1 })) {
    const item = value as WebhookOutboxItem;
    if (item.nextAttemptAt <= nowMs) out.push(item);
    if (out.length >= limit) break;
  }
  return out;
}

/** The earliest next attempt of any item (UNIX ms), or null when the outbox is empty. */
export function nextWebhookAttempt(state: StoreState): number | null {
  let next: number | null = null;
  for (const { value } of state.tables.webhookOutbox.getRange({ start: 1 })) {
    const at = (value as WebhookOutboxItem).nextAttemptAt;
    if (next === null || at < next) next = at;
  }
  return next;
}

/** What one item asks of the bot's service, resolved against current state. */
export interface WebhookDelivery {
  readonly item: WebhookOutboxItem;
  readonly bot: User;
  readonly service: BotService;
  readonly realm: Realm;
  readonly message: Message;
  /** The channel of a channel message (null for a direct message). */
  readonly channel: Channel | null;
}

/**
 * The delivery of an item, or null when there is nothing left to call: the bot was
 * deactivated or lost its service, or the message was deleted meanwhile. The caller
 * then finishes the item with nothing to post.
 */
export function resolveWebhookItem(state: StoreState, itemId: number): WebhookDelivery | null {
  const item = state.tables.webhookOutbox.get(itemId) as WebhookOutboxItem | undefined;
  if (!item) return null;
  const bot = state.users.get(item.botId);
  const realm = bot && state.realms.get(bot.realmId);
  const service = bot?.botConfig?.service;
  const message = getMessageRecord(state.tables, item.messageId);
  if (!isServiceBot(bot) || !realm || realm.deactivated || !service || !message) return null;
  const channel =
    message.recipient.type === "channel" ? (state.channels.get(message.recipient.channelId) ?? null) : null;
  if (message.recipient.type === "channel" && channel === null) return null;
  return { item, bot, service, realm, message, channel };
}

/** What a finished call posts: the bot's message to the conversation, its notice to its owner. */
export interface WebhookCallResult {
  /** Posted by the bot where the triggering message was (same channel and topic, or same DM). */
  readonly reply: string | null;
  /** Sent by the bot to its owner as a direct message. */
  readonly ownerNotice: string | null;
}

/** The conversation's reply, when it can still be posted (Zulip skips the bot's channel access check). */
function replyMessage(state: StoreState, bot: User, message: Message, content: string): MessageToWrite | null {
  let channel: Channel | null = null;
  let participants: number[] = [];
  if (message.recipient.type === "channel") {
    channel = state.channels.get(message.recipient.channelId) ?? null;
    if (channel === null || channel.isArchived) return null;
  } else {
    const conversation = state.conversations.get(message.recipient.conversationId);
    participants = (conversation?.userIds ?? []).filter((id) => id === bot.id || state.users.get(id)?.isActive);
    if (!participants.includes(bot.id)) return null;
  }
  return toWrite(bot, channel, channel ? message.topic : "", participants, content);
}

function ownerNoticeMessage(state: StoreState, bot: User, content: string): MessageToWrite | null {
  const owner = bot.botOwnerId === null ? undefined : state.users.get(bot.botOwnerId);
  if (!owner?.isActive) return null;
  return toWrite(
    bot,
    null,
    "",
    [...new Set([bot.id, owner.id])].sort((a, b) => a - b),
    content,
  );
}

function toWrite(
  bot: User,
  channel: Channel | null,
  topic: string,
  participants: number[],
  content: string,
): MessageToWrite | null {
  let normalized: string;
  try {
    normalized = normalizeContent(content);
  } catch {
    // Empty after trimming, or a NUL byte: Zulip's send would refuse it too.
    return null;
  }
  return {
    sender: bot,
    channel,
    topic,
    participants,
    content: normalized,
    client: WEBHOOK_RESPONSE_CLIENT,
    readBy: defaultReadBySender(WEBHOOK_RESPONSE_CLIENT) ? [bot.id] : [],
    dateSent: 0,
  };
}

/**
 * The call is over: the item leaves the outbox, and what `result` asks is posted by
 * the bot, all in one write. Returns the IDs of the messages posted.
 */
export function finishWebhookItem(state: StoreState, itemId: number, result: WebhookCallResult): number[] {
  const item = state.tables.webhookOutbox.get(itemId) as WebhookOutboxItem | undefined;
  if (!item) return [];
  const bot = state.users.get(item.botId);
  const message = getMessageRecord(state.tables, item.messageId);
  const writes: MessageToWrite[] = [];
  if (bot?.isActive) {
    if (result.reply !== null && message) {
      const reply = replyMessage(state, bot, message, result.reply);
      if (reply) writes.push(reply);
    }
    if (result.ownerNotice !== null) {
      const notice = ownerNoticeMessage(state, bot, result.ownerNotice);
      if (notice) writes.push(notice);
    }
  }
  const now = state.now();
  const timed = writes.map((w) => ({ ...w, dateSent: now }));
  const rendered = timed.map((w) => renderMessage(state, w));
  return state.write((ctx) => {
    state.tables.webhookOutbox.removeSync(itemId);
    ctx.changed({ kind: "webhookItem", id: itemId, op: "removed" });
    return timed.map((w, i) => storeMessage(state, ctx, w, rendered[i]!).id);
  });
}

/** A failed attempt that is tried again at `retryAt` (UNIX ms). */
export function retryWebhookItem(state: StoreState, itemId: number, error: string, retryAt: number): void {
  const item = state.tables.webhookOutbox.get(itemId) as WebhookOutboxItem | undefined;
  if (!item) return;
  const next: WebhookOutboxItem = {
    ...item,
    attempts: item.attempts + 1,
    nextAttemptAt: retryAt,
    lastError: error.slice(0, 1000),
  };
  state.write((ctx) => {
    state.tables.webhookOutbox.putSync(itemId, next);
    ctx.changed({ kind: "webhookItem", id: itemId });
  });
}
