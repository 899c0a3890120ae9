/**
 * @module actions/typing
 * Typing notifications (POST /typing): checked like a send, then released as an
 * ephemeral event at once (nothing is written, so no change-log entry). Direct
 * typing reaches every participant, the sender included; channel typing reaches the
 * channel's active subscribers, and the realtime layer passes it only to clients
 * that declared stream_typing_notifications. Users who turned off
 * receives_typing_notifications get neither. A sender who turned off
 * send_private_typing_notifications / send_stream_typing_notifications is refused
 * (a 400, as Zulip; not silently dropped).
 *
 * Typing while editing a message (POST /messages/{id}/typing, Zulip's
 * send_message_edit_notification_backend) is checked like the edit itself would be,
 * and reaches the same users: a channel message's channel subscribers, a direct
 * message's participants (the editor included).
 */
import { canChangeMessage, canSendToChannel } from "../access.js";
import { BadRequestError, ChannelNotFoundError } from "../errors.js";
import { channelSubscribersAudience, excludingWhere, usersAudience } from "../events/audience.js";
import type { StoreState } from "../state.js";
import type { User } from "../types.js";
import { getMessageRecord } from "../storage/message-records.js";
import { realmMessagePolicy } from "./realm-message-policy.js";
import { checkContentEditAllowed } from "./update-message.js";
import { normalizeTopic, resolveRecipients } from "./send-message.js";
import { requireActiveUser } from "./users.js";

export type TypingInput =
  | { readonly type: "direct"; readonly op: "start" | "stop"; readonly to: readonly number[] }
  | { readonly type: "channel"; readonly op: "start" | "stop"; readonly channelId: number; readonly topic: string };

/** The sender turned off the typing notifications of this kind (send_*_typing_notifications). */
const channelTypingOff = () => new BadRequestError("User has disabled typing notifications for channel messages");
const directTypingOff = () => new BadRequestError("User has disabled typing notifications for direct messages");

function receivesTyping(state: StoreState, user: User | undefined): user is User {
  return user !== undefined && user.isActive && state.settingsOf(user.id).receives_typing_notifications;
}

export function notifyTyping(state: StoreState, senderId: number, input: TypingInput): void {
  const sender = requireActiveUser(state, senderId);
  if (input.type === "direct") {
    if (input.to.length === 0) throw new BadRequestError("Empty 'to' list");
    // Refused, not dropped, and before the recipients are checked, as Zulip's send_notification_backend.
    if (!state.settingsOf(sender.id).send_private_typing_notifications) throw directTypingOff();
    const ids = resolveRecipients(state, sender, input.to);
    const recipients = ids.map((id) => state.users.get(id)!);
    state.dispatch({
      seq: 0,
      deliveries: [
        {
          event: { type: "typing", op: input.op, sender, recipients, channelId: null, topic: null },
          audience: usersAudience(recipients.filter((u) => receivesTyping(state, u)).map((u) => u.id)),
        },
      ],
    });
    return;
  }
  if (!state.settingsOf(sender.id).send_stream_typing_notifications) throw channelTypingOff();
  const channel = state.channels.get(input.channelId);
  // An invisible channel is reported exactly like a missing one.
  if (!channel || !canSendToChannel(state, sender, channel)) throw new ChannelNotFoundError({ id: input.channelId });
  const topic = normalizeTopic(state, channel, input.topic);
  state.dispatch({
    seq: 0,
    deliveries: [
      {
        event: { type: "typing", op: input.op, sender, recipients: null, channelId: channel.id, topic },
        audience: excludingWhere(
          channelSubscribersAudience(state, channel.id),
          (id) => !receivesTyping(state, state.users.get(id)),
        ),
      },
    ],
  });
}

/** POST /messages/{message_id}/typing: `op` for the caller's edit of the message. */
export function notifyEditTyping(state: StoreState, editorId: number, messageId: number, op: "start" | "stop"): void {
  const editor = requireActiveUser(state, editorId);
  const message =
    Number.isSafeInteger(messageId) && messageId > 0 && messageId <= 0xffffffff
      ? getMessageRecord(state.tables, messageId)
      : undefined;
  if (!message || !canChangeMessage(state, editor, message)) throw new BadRequestError("Invalid message(s)");
  // As the edit itself would be checked, without the edit's grace period (as Zulip does).
  checkContentEditAllowed(editor, message, realmMessagePolicy(state, editor.realmId), state.now(), 0);
  const settings = state.settingsOf(editor.id);
  const recipient = message.recipient;
  if (recipient.type === "channel") {
    if (!settings.send_stream_typing_notifications) throw channelTypingOff();
    state.dispatch({
      seq: 0,
      deliveries: [
        {
          event: {
            type: "typing_edit_message",
            op,
            senderId: editor.id,
            messageId: message.id,
            recipient: { type: "channel", channelId: recipient.channelId, topic: message.topic },
          },
          audience: excludingWhere(
            channelSubscribersAudience(state, recipient.channelId),
            (id) => !receivesTyping(state, state.users.get(id)),
          ),
        },
      ],
    });
    return;
  }
  if (!settings.send_private_typing_notifications) throw directTypingOff();
  const participants = state.conversations.get(recipient.conversationId)?.userIds ?? [editor.id];
  const userIds = participants.filter((id) => receivesTyping(state, state.users.get(id)));
  state.dispatch({
    seq: 0,
    deliveries: [
      {
        event: {
          type: "typing_edit_message",
          op,
          senderId: editor.id,
          messageId: message.id,
          recipient: { type: "direct", userIds },
        },
        audience: usersAudience(userIds),
      },
    ],
  });
}
