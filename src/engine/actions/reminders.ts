/**
 * @module actions/reminders
 * Message reminders (Zulip's views/reminders.py, actions/reminders.py, lib/reminders.py):
 * a reminder is a scheduled message of the delivery type "remind", a direct message to
 * oneself whose text Notification Bot sends at the time, quoting and linking the message.
 *
 * It shares scheduled messages' table, ID counter and due queue (scheduled_due), so the
 * scheduler delivers it with the same one-transaction durability; scheduled-messages'
 * own endpoints do not see it. Its text is written when it is created and again at
 * delivery from the message as it is then; a message the user can no longer read
 * (deleted, or access lost) is reminded with the text of creation, as Zulip does. The
 * realm's URL (for the absolute link to the message) is kept on the reminder, since
 * delivery has no request to take it from.
 */
import { canAccessMessage } from "../access.js";
import { BadRequestError, NotFoundError } from "../errors.js";
import { userAudience } from "../events/audience.js";
import { topicUrl, escapeLinkText } from "./move-notices.js";
import { channelSlug, encodeHashComponent } from "../narrow/url.js";
import type { StoreState } from "../state.js";
import type { Message, ScheduledMessage, User } from "../types.js";
import { displayList, unusedFence } from "./message-report.js";
import { ensureNotificationBotInTxn, silentMention } from "./notification-bot.js";
import {
  MAX_MESSAGE_LENGTH,
  prepareMessage,
  renderMessage,
  storeMessage,
  type MessageToWrite,
} from "./send-message.js";
import { requireActiveUser } from "./users.js";
import { checkDeliveryTime } from "./delivery-time.js";

/** Zulip's settings.MAX_REMINDER_NOTE_LENGTH (register's max_reminder_note_length). */
export const MAX_REMINDER_NOTE_LENGTH = 1000;
const DOES_NOT_EXIST = "Reminder does not exist";
const TRUNCATED = "\n[message truncated]";
/** Zulip's Message.EMPTY_TOPIC_FALLBACK_NAME, for link texts. */
const GENERAL_CHAT = "general chat";

export interface CreateReminderInput {
  readonly messageId: number;
  /** UNIX seconds. */
  readonly deliverAt: number;
  /** As given; "" for none. */
  readonly note: string;
  readonly client: string;
  /** The realm's URL, for the absolute link to the message. */
  readonly realmUrl: string;
}

/** The message a user may be reminded of (Zulip's access_message), or "Invalid message(s)". */
function accessibleMessage(state: StoreState, user: User, messageId: number): Message {
  const message =
    Number.isSafeInteger(messageId) && messageId > 0 && messageId <= 0xffffffff
      ? state.messageRecord(messageId)
      : undefined;
  if (!message || !canAccessMessage(state, user, message)) throw new BadRequestError("Invalid message(s)");
  return message;
}

/** Zulip's normalize_note_text: trailing whitespace and leading newlines dropped, then the length limit. */
function normalizeNote(note: string): string {
  const body = note.trimEnd().replace(/^\n+/, "");
  if (body.length > MAX_REMINDER_NOTE_LENGTH)
    throw new BadRequestError(`Maximum reminder note length: ${MAX_REMINDER_NOTE_LENGTH} characters`);
  return body;
}

/** Zulip's message_link_url: the message in its conversation, absolute. */
function messageUrl(state: StoreState, realmUrl: string, message: Message, participants: readonly number[]): string {
  if (message.recipient.type === "channel") {
    const channel = state.channels.get(message.recipient.channelId);
    const slug = channelSlug(message.recipient.channelId, channel?.name ?? "");
    return `${realmUrl}/#narrow/channel/${slug}/topic/${encodeHashComponent(message.topic)}/near/${message.id}`;
  }
  const ids = [...participants].sort((a, b) => a - b);
  return `${realmUrl}/#narrow/dm/${ids.join(",")}${ids.length >= 3 ? "-group" : ""}/near/${message.id}`;
}

/** What Notification Bot will say (Zulip's get_reminder_formatted_content). */
export function reminderText(state: StoreState, user: User, message: Message, note: string, realmUrl: string): string {
  const shownNote = note === "" ? "" : normalizeNote(note);
  const sender = state.users.get(message.senderId);
  const senderMention = sender ? silentMention(sender) : `@_**|${message.senderId}**`;
  const widget = message.content.startsWith("/poll")
    ? "poll"
    : message.content.startsWith("/todo")
      ? "todo list"
      : null;
  let content: string;
  let said: string;
  if (message.recipient.type === "channel") {
    const channel = state.channels.get(message.recipient.channelId);
    const url = messageUrl(state, realmUrl, message, []);
    const shownTopic = message.topic === "" ? GENERAL_CHAT : message.topic;
    const where = channel
      ? `[#${escapeLinkText(channel.name)} > ${escapeLinkText(shownTopic)}](${topicUrl(channel, message.topic)}` +
        `/with/${message.id})`
      : "";
    content = "You requested a reminder for the following message.";
    said = widget
      ? `${senderMention} [sent](${url}) a ${widget} in ${where}.`
      : `${senderMention} [said](${url}) in ${where}:`;
  } else {
    const participants = state.conversations.get(message.recipient.conversationId)?.userIds ?? [message.senderId];
    const url = messageUrl(state, realmUrl, message, participants);
    const others = participants.filter((id) => id !== message.senderId);
    content = "You requested a reminder for the following direct message.";
    if (others.length === 0 && message.senderId === user.id) {
      said = widget ? `You [sent](${url}) yourself a ${widget}.` : `You [sent](${url}) a note to yourself:`;
    } else {
      const mentions = (others.length > 0 ? others : [message.senderId]).flatMap((id) => {
        const u = state.users.get(id);
        return u ? [silentMention(u)] : [];
      });
      const to = displayList(mentions);
      said = widget
        ? `${senderMention} [sent](${url}) a ${widget} to ${to}.`
        : `${senderMention} [said](${url}) to ${to}:`;
    }
  }
  if (shownNote !== "") content = `${content.slice(0, -1)}. Note:\n > ${shownNote}`;
  content += `\n\n${said}`;
  if (widget) return content;
  content += "\n";
  const fence = unusedFence(content);
  const room = MAX_MESSAGE_LENGTH - (content.length + `${fence}quote\n\n${fence}`.length);
  const quoted =
    message.content.length <= room ? message.content : message.content.slice(0, room - TRUNCATED.length) + TRUNCATED;
  return `${content}${fence}quote\n${quoted}\n${fence}`;
}

/** The reminder's message as checked and rendered for the user to themselves (Zulip's check_message). */
function prepare(state: StoreState, user: User, content: string, client: string): MessageToWrite {
  return prepareMessage(state, { senderId: user.id, to: { type: "direct", users: [user.id] }, content, client });
}

/** POST /reminders: Zulip's refusals in its order (the time, the message, the note). */
export function createReminder(state: StoreState, userId: number, input: CreateReminderInput): ScheduledMessage {
  const user = requireActiveUser(state, userId);
  checkDeliveryTime(state, input.deliverAt);
  const message = accessibleMessage(state, user, input.messageId);
  const prepared = prepare(state, user, reminderText(state, user, message, input.note, input.realmUrl), input.client);
  const rendered = renderMessage(state, prepared);
  return state.write((ctx) => {
    const reminder: ScheduledMessage = {
      id: state.allocate("nextScheduledMessageId"),
      realmId: user.realmId,
      senderId: user.id,
      recipient: { type: "direct", userIds: [user.id] },
      content: prepared.content,
      renderedContent: rendered.html,
      deliverAt: input.deliverAt,
      readBySender: false,
      client: input.client,
      failed: false,
      failureMessage: null,
      delivered: false,
      deliveredMessageId: null,
      reminder: { messageId: message.id, note: input.note, realmUrl: input.realmUrl },
    };
    state.tables.scheduledMessages.putSync(reminder.id, reminder);
    state.tables.scheduledDue.putSync([reminder.deliverAt, reminder.id], null);
    ctx.afterCommit(() => state.indexScheduledMessage(reminder));
    ctx.emit({ type: "reminders", op: "add", reminder }, () => userAudience(user.id));
    return reminder;
  });
}

/** GET /reminders and register's reminders: the user's undelivered ones (failed included), by time. */
export function listReminders(state: StoreState, userId: number): ScheduledMessage[] {
  const user = requireActiveUser(state, userId);
  const out: ScheduledMessage[] = [];
  for (const s of state.scheduledMessages.values())
    if (s.reminder !== undefined && s.senderId === user.id && !s.delivered) out.push(s);
  return out.sort((a, b) => a.deliverAt - b.deliverAt || a.id - b.id);
}

/**
 * DELETE /reminders/{id}: the user's own reminder, or 404 "Reminder does not exist". As
 * Zulip's access_reminder, a delivered one may be deleted too (its record goes).
 */
export function deleteReminder(state: StoreState, userId: number, id: number): void {
  const user = requireActiveUser(state, userId);
  const reminder = state.scheduledMessages.get(id);
  if (!reminder || reminder.reminder === undefined || reminder.senderId !== user.id)
    throw new NotFoundError(DOES_NOT_EXIST);
  state.write((ctx) => {
    if (!reminder.delivered && !reminder.failed)
      state.tables.scheduledDue.removeSync([reminder.deliverAt, reminder.id]);
    state.tables.scheduledMessages.removeSync(reminder.id);
    ctx.afterCommit(() => state.scheduledMessages.delete(reminder.id));
    ctx.emit({ type: "reminders", op: "remove", reminderId: reminder.id }, () => userAudience(user.id));
  });
}

export interface ReminderDelivery {
  readonly scheduledMessageId: number;
  readonly messageId: number | null;
  readonly failure: string | null;
}

/**
 * Sends a due reminder (Zulip's send_reminder): Notification Bot's direct message to the
 * user, the reminder marked delivered, its due key dropped and the remove event, in one
 * transaction. A deactivated user or realm fails it quietly (no notice: reminders are
 * their own notice), as does a text that can no longer be sent.
 */
export function deliverReminder(state: StoreState, reminder: ScheduledMessage): ReminderDelivery {
  const target = reminder.reminder;
  const user = state.users.get(reminder.senderId);
  const realm = state.realms.get(reminder.realmId);
  if (!target || !user || !realm) return failReminder(state, reminder, "Reminder could not be sent.");
  if (realm.deactivated) return failReminder(state, reminder, "This organization has been deactivated");
  if (!user.isActive) return failReminder(state, reminder, "Account is deactivated");
  let content = reminder.content;
  const message = state.messageRecord(target.messageId);
  if (message && canAccessMessage(state, user, message)) {
    try {
      content = reminderText(state, user, message, target.note, target.realmUrl);
    } catch (error) {
      // A note too long for a limit lowered since creation: the text of creation still stands.
      if (!(error instanceof BadRequestError)) throw error;
    }
  }
  return state.write((ctx) => {
    const bot = ensureNotificationBotInTxn(state, ctx, realm);
    const input: MessageToWrite = {
      sender: bot,
      channel: null,
      topic: "",
      participants: [bot.id, user.id].sort((a, b) => a - b),
      content,
      client: "Internal",
      readBy: [],
      dateSent: state.now(),
    };
    const { id } = storeMessage(state, ctx, input, renderMessage(state, input));
    const next: ScheduledMessage = { ...reminder, delivered: true, deliveredMessageId: id };
    state.tables.scheduledMessages.putSync(next.id, next);
    state.tables.scheduledDue.removeSync([reminder.deliverAt, reminder.id]);
    ctx.afterCommit(() => state.indexScheduledMessage(next));
    ctx.emit({ type: "reminders", op: "remove", reminderId: next.id }, () => userAudience(next.senderId));
    return { scheduledMessageId: next.id, messageId: id, failure: null };
  });
}

function failReminder(state: StoreState, reminder: ScheduledMessage, reason: string): ReminderDelivery {
  const next: ScheduledMessage = { ...reminder, failed: true, failureMessage: reason };
  state.write((ctx) => {
    state.tables.scheduledMessages.putSync(next.id, next);
    state.tables.scheduledDue.removeSync([reminder.deliverAt, reminder.id]);
    ctx.afterCommit(() => state.indexScheduledMessage(next));
    ctx.changed({ kind: "scheduledMessage", id: next.id });
  });
  return { scheduledMessageId: reminder.id, messageId: null, failure: reason };
}
