/**
 * @module outgoing-webhooks/notices
 * The texts a failed call posts, as Zulip words them (zerver/lib/outgoing_webhook.py
 * fail_with_message and notify_bot_owner): "Failure! ..." in the conversation that
 * triggered the call, and a direct message to the bot's owner linking to the message.
 */
import type { WebhookDelivery } from "../engine/index.js";
import { messageNarrowUrl } from "../engine/index.js";

/** Zulip's fail_with_message: what the bot posts where it was called. */
export function failureReply(reason: string): string {
  return `Failure! ${reason}`;
}

/** Zulip's message_link_url for the triggering message. */
export function messageLink(realmUrl: string, delivery: WebhookDelivery, participantIds: readonly number[]): string {
  const { message, channel } = delivery;
  if (channel !== null)
    return `${realmUrl}${messageNarrowUrl(channel.id, channel.name, message.topic, String(message.id))}`;
  const ids = [...participantIds].sort((a, b) => a - b);
  const slug = `${ids.join(",")}-${ids.length >= 3 ? "group" : "pm"}`;
  return `${realmUrl}/#narrow/dm/${slug}/near/${message.id}`;
}

/** What went wrong, for the owner: one of Zulip's notify_bot_owner cases. */
export type OwnerNoticeCause =
  | { readonly kind: "exception"; readonly type: string; readonly detail: string }
  | { readonly kind: "message"; readonly text: string }
  | { readonly kind: "status"; readonly status: number };

/** Zulip's notify_bot_owner text; `payload` is the answer's body as Python's repr shows it, if any. */
export function ownerNotice(
  messageUrl: string,
  botName: string,
  cause: OwnerNoticeCause,
  payload: string | null,
): string {
  let text = `[A message](${messageUrl}) to your bot @_**${botName}** triggered an outgoing webhook.`;
  if (cause.kind === "exception")
    text +=
      "\nWhen trying to send a request to the webhook service, an exception " +
      `of type ${cause.type} occurred:\n\`\`\`\n${cause.detail}\n\`\`\``;
  else if (cause.kind === "message") text += `\n${cause.text}`;
  else if (cause.status === 407) text += "\nThe URL configured for the webhook is for a private or disallowed network.";
  else text += `\nThe webhook got a response with status code *${cause.status}*.`;
  if (payload !== null) text += `\nThe response contains the following payload:\n\`\`\`\n${payload}\n\`\`\``;
  return text;
}
