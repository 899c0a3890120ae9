/**
 * @module actions/submessages
 * Zulip's POST /submessage (zerver/views/submessage.py, actions/submessage.py): a vote,
 * a new option, a task toggle... appended to a message's submessages. Checks in Zulip's
 * order: the message must be one the user may change (access_message with
 * is_modifying_message), the first submessage must come from the message's sender,
 * the content must be JSON, and on a poll or todo message it must be one of that
 * widget's events. Stored in the message record (like reactions), so deleting the
 * message deletes them and moving it keeps them. The sender's participation follows
 * topics as a reaction does; the `submessage` event goes to the users with a row for
 * the message (Zulip's UserMessage rows), not to other readers of a public channel.
 */
import { canChangeMessage, hasRow } from "../access.js";
import { BadRequestError } from "../errors.js";
import { realmAudience, usersAudience } from "../events/audience.js";
import type { Audience } from "../events/types.js";
import type { StoreState } from "../state.js";
import { getMessageRecord, putMessageRecord } from "../storage/message-records.js";
import type { Message, Submessage } from "../types.js";
import { checkWidgetEvent, parseSubmessageJson, widgetTypeOf } from "../widgets.js";
import { applyParticipationPolicy } from "./user-topics.js";
import { requireActiveUser } from "./users.js";

export interface SubmessageInput {
  readonly messageId: number;
  readonly msgType: string;
  readonly content: string;
}

/** Zulip's verify_submessage_sender: others may add only once the sender has added one. */
function checkSender(message: Message, userId: number): void {
  if (message.senderId === userId) return;
  if ((message.submessages ?? []).some((s) => s.senderId === message.senderId)) return;
  throw new BadRequestError("You cannot attach a submessage to this message.");
}

/** Zulip's get_widget_type: what the first widget submessage says the message is. */
function widgetType(message: Message): unknown {
  const widget = (message.submessages ?? []).find((s) => s.msgType === "widget");
  return widget === undefined ? undefined : widgetTypeOf(widget.content);
}

export function addSubmessage(state: StoreState, userId: number, input: SubmessageInput): { id: number } {
  const user = requireActiveUser(state, userId);
  const { messageId } = input;
  const message =
    Number.isInteger(messageId) && messageId > 0 && messageId <= 0xffffffff
      ? getMessageRecord(state.tables, messageId)
      : undefined;
  if (!message || !canChangeMessage(state, user, message)) throw new BadRequestError("Invalid message(s)");
  checkSender(message, user.id);
  const parsed = parseSubmessageJson(input.content);
  if (parsed === undefined) throw new BadRequestError("Invalid json for submessage");
  checkWidgetEvent(widgetType(message), parsed.value, message.senderId === user.id);

  const channel = message.recipient.type === "channel" ? state.channels.get(message.recipient.channelId) : undefined;
  return state.write((ctx) => {
    const submessage: Submessage = {
      id: state.allocate("nextSubmessageId"),
      senderId: user.id,
      msgType: input.msgType,
      content: input.content,
    };
    const next: Message = { ...message, submessages: [...(message.submessages ?? []), submessage] };
    if (channel) applyParticipationPolicy(state, ctx, user, channel, message.topic);
    putMessageRecord(state.tables, next);
    ctx.emit({ type: "submessage", messageId: message.id, realmId: message.realmId, submessage }, () =>
      rowHoldersAudience(state, next),
    );
    return { id: submessage.id };
  });
}

/** The active users with a row for the message (Zulip sends to its UserMessage rows). */
function rowHoldersAudience(state: StoreState, message: Message): Audience {
  if (message.recipient.type === "direct") {
    const members = state.conversations.get(message.recipient.conversationId)?.userIds ?? [message.senderId];
    return usersAudience(members.filter((id) => state.users.get(id)?.isActive === true));
  }
  // Former subscribers keep their rows, and readers of a public channel may hold historical ones.
  return realmAudience(state, message.realmId, (user) => hasRow(state, user.id, message));
}
