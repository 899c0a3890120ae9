/**
 * @module actions/webhooks
 * Posting for an incoming webhook (Zulip's check_send_webhook_message and the notices
 * of send_rate_limited_pm_notification_to_bot_owner). What to post is decided outside
 * the engine (src/http/webhooks: parsing a service's payload is not engine logic); the
 * post itself is an ordinary send as the bot, with every check of POST /messages.
 *
 * - A channel that does not exist (or that the bot may not see) is not an error for
 *   the service: nothing is posted, and the bot's owner hears of it from the
 *   Notification Bot, as in Zulip.
 * - Without a channel the message is a direct message to the bot's owner. Zulip
 *   asserts that the sender has one (a person's API key there is a server error);
 *   here that is a 400.
 * - Notices to an owner are sent at most once a minute per bot (Zulip's
 *   BOT_OWNER_STREAM_ALERT_WAITPERIOD); the time of the last one is kept in memory
 *   (Zulip stores it: after a restart one more notice may come early).
 */
import { BadRequestError, ChannelNotFoundError } from "../errors.js";
import type { StoreState } from "../state.js";
import { ensureNotificationBotInTxn, findNotificationBot } from "./notification-bot.js";
import { sendInternalDirectMessage, sendMessage, type SentMessage } from "./send-message.js";
import { requireUser } from "./users.js";

/** Zulip's UserProfile.BOT_OWNER_STREAM_ALERT_WAITPERIOD (one minute), in seconds. */
export const BOT_OWNER_NOTICE_INTERVAL_SECONDS = 60;

export type WebhookDestination =
  { readonly type: "channel"; readonly channel: number | string; readonly topic: string } | { readonly type: "owner" };

/** When each bot last had its owner told something, per store (seconds). */
const lastNotice = new WeakMap<StoreState, Map<number, number>>();

/**
 * Tells the bot's owner about a problem with the bot's webhook, from the Notification
 * Bot, unless the bot had one within the last minute. Nothing for a sender without an
 * owner (people, system bots) or in a deactivated realm.
 */
export function notifyBotOwner(state: StoreState, botId: number, content: string): void {
  const bot = requireUser(state, botId);
  const realm = state.realms.get(bot.realmId);
  const owner = bot.botOwnerId === null ? undefined : state.users.get(bot.botOwnerId);
  if (!bot.isBot || !owner || !realm || realm.deactivated) return;
  let times = lastNotice.get(state);
  if (!times) lastNotice.set(state, (times = new Map()));
  const now = state.now();
  const last = times.get(bot.id);
  if (last !== undefined && now - last <= BOT_OWNER_NOTICE_INTERVAL_SECONDS) return;
  if (!findNotificationBot(state, realm.id)) state.write((ctx) => void ensureNotificationBotInTxn(state, ctx, realm));
  const notifier = findNotificationBot(state, realm.id)!;
  sendInternalDirectMessage(state, notifier.id, owner.id, content);
  times.set(bot.id, now);
}

/** Zulip's send_pm_if_empty_stream text for a channel that does not exist. */
function missingChannelNotice(botEmail: string, channel: number | string): string {
  const bot = `\`${botEmail}\``;
  if (typeof channel === "number")
    return `Your bot ${bot} tried to send a message to channel ID ${channel}, but there is no channel with that ID.`;
  return (
    `Your bot ${bot} tried to send a message to channel #**${channel}**, but that channel does not exist. ` +
    "Click [here](#channels/new) to create it."
  );
}

/**
 * Posts one webhook message as `senderId`. Null when nothing was posted because the
 * channel does not exist (the owner was told); every other refusal of a send is thrown.
 */
export function sendWebhookMessage(
  state: StoreState,
  senderId: number,
  destination: WebhookDestination,
  content: string,
  client: string,
): SentMessage | null {
  const sender = requireUser(state, senderId);
  if (destination.type === "owner") {
    if (sender.botOwnerId === null)
      throw new BadRequestError("Missing 'stream' argument: only a bot's messages can go to its owner");
    return sendMessage(state, { senderId, to: { type: "direct", users: [sender.botOwnerId] }, content, client });
  }
  try {
    return sendMessage(state, {
      senderId,
      to: { type: "channel", channel: destination.channel, topic: destination.topic },
      content,
      client,
    });
  } catch (error) {
    if (!(error instanceof ChannelNotFoundError)) throw error;
    notifyBotOwner(state, senderId, missingChannelNotice(sender.email, destination.channel));
    return null;
  }
}
