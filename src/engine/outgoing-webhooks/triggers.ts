/**
 * @module outgoing-webhooks/triggers
 * Which messages call an outgoing webhook bot (Zulip's get_service_bot_events in
 * zerver/actions/message_send.py), decided in the write that stores the message: a
 * channel message that mentions the bot by name (not silently; a mentioned group
 * counts for bots subscribed to the channel), or a direct message the bot is part of,
 * sent by a person (bots never trigger bots, so bots cannot loop). Each call becomes
 * an item of the webhook outbox in that same transaction (outbox.ts).
 */
import type { StoreState, WriteContext } from "../state.js";
import type { Channel, Message, User, WebhookOutboxItem, WebhookTrigger } from "../types.js";

const OUTGOING_WEBHOOK_BOT = 3;

/** An active outgoing webhook bot with a service to call. */
export function isServiceBot(user: User | undefined): user is User {
  return (
    user !== undefined && user.isActive && user.botType === OUTGOING_WEBHOOK_BOT && user.botConfig?.service != null
  );
}

/**
 * The bots `message` calls, with their trigger (Zulip's get_service_bot_events). A
 * bot mentioned by name need not be subscribed (Zulip adds possibly mentioned users
 * to the recipients it looks at); one reached through a mentioned group must be.
 */
function serviceBotTriggers(
  state: StoreState,
  sender: User,
  message: Message,
  channel: Channel | null,
  participants: readonly number[],
): Map<number, WebhookTrigger> {
  const out = new Map<number, WebhookTrigger>();
  if (sender.isBot) return out;
  if (channel === null) {
    for (const userId of participants)
      if (userId !== sender.id && isServiceBot(state.users.get(userId))) out.set(userId, "direct_message");
    return out;
  }
  for (const userId of message.mentionedUserIds) if (isServiceBot(state.users.get(userId))) out.set(userId, "mention");
  if (message.mentionedGroupIds.length > 0) {
    for (const userId of state.subscribers.get(channel.id) ?? []) {
      const user = state.users.get(userId);
      if (out.has(userId) || !isServiceBot(user)) continue;
      if (message.mentionedGroupIds.some((groupId) => state.groupMembers(groupId).has(userId)))
        out.set(userId, "mention");
    }
  }
  return out;
}

/** Writes one outbox item per bot `message` calls, inside the message's write. */
export function enqueueServiceBotCallsInTxn(
  state: StoreState,
  ctx: WriteContext,
  sender: User,
  message: Message,
  channel: Channel | null,
  participants: readonly number[],
): void {
  for (const [botId, trigger] of serviceBotTriggers(state, sender, message, channel, participants)) {
    const item: WebhookOutboxItem = {
      id: state.allocate("nextWebhookItemId"),
      botId,
      messageId: message.id,
      trigger,
      createdAt: state.now(),
      attempts: 0,
      nextAttemptAt: 0,
      lastError: null,
    };
    state.tables.webhookOutbox.putSync(item.id, item);
    ctx.changed({ kind: "webhookItem", id: item.id, op: "added" });
  }
}
