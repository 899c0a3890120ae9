/**
 * @module actions/scheduled-messages
 * Messages sent later (Zulip's scheduled messages). Scheduling and every edit run the
 * send checks (prepareMessage); delivery runs them again, on the state of the time of
 * delivery.
 *
 * Durability: a pending message has a key [deliverAt, id] in scheduled_due, written
 * with its record. Delivering stores the message, marks the scheduled one delivered
 * and deletes its key in ONE transaction, so a crash at any point leaves it either
 * pending (delivered after restart) or delivered, never both or neither. A delivery
 * that fails marks it failed (and drops its key) in one transaction too.
 */
import { BadRequestError, EngineError, NotFoundError } from "../errors.js";
import type { StoreState, WriteContext } from "../state.js";
import type { ReminderTarget, ScheduledMessage, ScheduledRecipient, User } from "../types.js";
import type { RenderResult } from "../render.js";
import { userAudience } from "../events/audience.js";
import {
  defaultReadBySender,
  prepareMessage,
  checkRenderedMessage,
  renderMessage,
  sendInternalDirectMessage,
  storeMessage,
  type MessageDestination,
  type MessageToWrite,
} from "./send-message.js";
import { requireActiveUser } from "./users.js";
import { ensureNotificationBotInTxn, findNotificationBot } from "./notification-bot.js";
import { checkDeliveryTime, DELIVERY_TIME_NOT_IN_FUTURE } from "./delivery-time.js";
import { deliverReminder } from "./reminders.js";

export { DELIVERY_TIME_NOT_IN_FUTURE, LATEST_DELIVERY_TIME } from "./delivery-time.js";
const DOES_NOT_EXIST = "Scheduled message does not exist";

export type ScheduledDestination =
  | { readonly type: "channel"; readonly channelId: number; readonly topic: string | undefined }
  | { readonly type: "direct"; readonly userIds: readonly number[] };

export interface ScheduleMessageInput {
  readonly to: ScheduledDestination;
  readonly content: string;
  /** UNIX seconds. */
  readonly deliverAt: number;
  readonly readBySender?: boolean;
  readonly client: string;
}

function destination(to: ScheduledDestination): MessageDestination {
  return to.type === "channel"
    ? { type: "channel", channel: to.channelId, topic: to.topic }
    : { type: "direct", users: [...to.userIds] };
}

/** Runs the send checks for a scheduled message; returns its stored recipient and normalized content. */
function check(
  state: StoreState,
  sender: User,
  to: ScheduledDestination,
  content: string,
  client: string,
): { recipient: ScheduledRecipient; prepared: MessageToWrite } {
  const prepared = prepareMessage(state, { senderId: sender.id, to: destination(to), content, client });
  const recipient: ScheduledRecipient =
    prepared.channel !== null
      ? { type: "channel", channelId: prepared.channel.id, topic: prepared.topic }
      : { type: "direct", userIds: [...new Set(to.type === "direct" ? to.userIds : [])].sort((a, b) => a - b) };
  return { recipient, prepared };
}

/** Zulip's default: read when the client marks its sends read, unless the message is only to oneself. */
function readBySenderDefault(client: string, sender: User, recipient: ScheduledRecipient): boolean {
  const toSelfOnly = recipient.type === "direct" && recipient.userIds.every((id) => id === sender.id);
  return defaultReadBySender(client) && !toSelfOnly;
}

/** POST /scheduled_messages. */
export function scheduleMessage(state: StoreState, senderId: number, input: ScheduleMessageInput): ScheduledMessage {
  const sender = requireActiveUser(state, senderId);
  const { recipient, prepared } = check(state, sender, input.to, input.content, input.client);
  checkDeliveryTime(state, input.deliverAt);
  const rendered = renderMessage(state, prepared);
  checkRenderedMessage(state, prepared, rendered);
  return state.write((ctx) => {
    const scheduled = putScheduled(state, ctx, {
      ...newRecord(state, sender, recipient, prepared, rendered, input),
      failed: false,
      failureMessage: null,
      delivered: false,
      deliveredMessageId: null,
    });
    ctx.emit({ type: "scheduled_messages", op: "add", scheduled }, () => userAudience(sender.id));
    return scheduled;
  });
}

type SettledFields = "failed" | "failureMessage" | "delivered" | "deliveredMessageId" | "reminder";

/** A new scheduled message's record, but for its state (pending, failed, delivered) and reminder target. */
function newRecord(
  state: StoreState,
  sender: User,
  recipient: ScheduledRecipient,
  prepared: MessageToWrite,
  rendered: RenderResult,
  input: ScheduleMessageInput,
): Omit<ScheduledMessage, SettledFields> {
  return {
    id: state.allocate("nextScheduledMessageId"),
    realmId: sender.realmId,
    senderId: sender.id,
    recipient,
    content: prepared.content,
    renderedContent: rendered.html,
    deliverAt: input.deliverAt,
    readBySender: input.readBySender ?? readBySenderDefault(input.client, sender, recipient),
    client: input.client,
  };
}

/** Stores a scheduled message (due for delivery only while pending), indexed once the write commits. */
function putScheduled(state: StoreState, ctx: WriteContext, scheduled: ScheduledMessage): ScheduledMessage {
  state.tables.scheduledMessages.putSync(scheduled.id, scheduled);
  if (!scheduled.failed && !scheduled.delivered)
    state.tables.scheduledDue.putSync([scheduled.deliverAt, scheduled.id], null);
  ctx.afterCommit(() => state.indexScheduledMessage(scheduled));
  return scheduled;
}

/** A scheduled message or reminder as an export had it (parley import): its state, not only pending ones. */
export interface ImportedScheduledMessage extends ScheduleMessageInput {
  readonly failed: boolean;
  readonly failureMessage: string | null;
  /** The message it became (a message of the realm), if delivered and that message was carried. */
  readonly delivered: boolean;
  readonly deliveredMessageId: number | null;
  readonly reminder?: ReminderTarget;
}

/**
 * parley import's scheduled messages and reminders: checked as a send now (its
 * channel or people, its content, rendered again), written with the exported state
 * (failed with Zulip's failure message, delivered and to which message, a reminder's
 * target), a pending one due at its time even if that has passed (it goes out at the
 * next delivery round, as after a server's downtime). No event: it is not new.
 */
export function importScheduledMessage(
  state: StoreState,
  senderId: number,
  input: ImportedScheduledMessage,
): ScheduledMessage {
  const sender = requireActiveUser(state, senderId);
  const { recipient, prepared } =
    input.failed || input.delivered
      ? checkSettled(state, sender, input.to, input.content, input.client)
      : check(state, sender, input.to, input.content, input.client);
  const inRealm = (id: number | null) => id === null || state.messageRecord(id)?.realmId === sender.realmId;
  if (!inRealm(input.deliveredMessageId) || (input.reminder !== undefined && !inRealm(input.reminder.messageId)))
    throw new BadRequestError("Invalid message(s)");
  if (!Number.isFinite(input.deliverAt)) throw new BadRequestError("Invalid scheduled_delivery_timestamp");
  const rendered = renderMessage(state, prepared);
  checkRenderedMessage(state, prepared, rendered);
  return state.write((ctx) => {
    const scheduled = putScheduled(state, ctx, {
      ...newRecord(state, sender, recipient, prepared, rendered, input),
      failed: input.failed,
      failureMessage: input.failed ? input.failureMessage : null,
      delivered: input.delivered,
      deliveredMessageId: input.delivered ? input.deliveredMessageId : null,
      ...(input.reminder !== undefined ? { reminder: input.reminder } : {}),
    });
    ctx.changed({ kind: "scheduledMessage", id: scheduled.id });
    return scheduled;
  });
}

/**
 * A failed or delivered one's recipient and rendering: checked as a send when it still
 * could be sent, else (it failed because the sender lost the channel, say) its channel
 * or people only checked to be of the realm, its content rendered as to the sender.
 */
function checkSettled(
  state: StoreState,
  sender: User,
  to: ScheduledDestination,
  content: string,
  client: string,
): { recipient: ScheduledRecipient; prepared: MessageToWrite } {
  try {
    return check(state, sender, to, content, client);
  } catch (error) {
    if (!(error instanceof EngineError)) throw error;
  }
  const ofRealm = (realmId: number | undefined) => realmId === sender.realmId;
  if (to.type === "channel" ? !ofRealm(state.channels.get(to.channelId)?.realmId) : to.userIds.length === 0)
    throw new BadRequestError("Invalid recipient");
  if (to.type === "direct" && to.userIds.some((id) => !ofRealm(state.users.get(id)?.realmId)))
    throw new BadRequestError("Invalid recipient");
  const prepared = prepareMessage(state, {
    senderId: sender.id,
    to: { type: "direct", users: [sender.id] },
    content,
    client,
  });
  const recipient: ScheduledRecipient =
    to.type === "channel"
      ? { type: "channel", channelId: to.channelId, topic: to.topic ?? "" }
      : { type: "direct", userIds: [...new Set(to.userIds)].sort((a, b) => a - b) };
  return { recipient, prepared };
}

/** Every scheduled message and reminder of the sender, delivered and failed ones too (imports, tests), by ID. */
export function scheduledMessageRecords(state: StoreState, senderId: number): ScheduledMessage[] {
  const out: ScheduledMessage[] = [];
  for (const s of state.scheduledMessages.values()) if (s.senderId === senderId) out.push(s);
  return out.sort((a, b) => a.id - b.id);
}

/** The caller's own scheduled message, not a reminder (Zulip's access_scheduled_message). */
function requireOwn(state: StoreState, sender: User, id: number): ScheduledMessage {
  const scheduled = state.scheduledMessages.get(id);
  if (!scheduled || scheduled.senderId !== sender.id || scheduled.reminder !== undefined)
    throw new NotFoundError(DOES_NOT_EXIST);
  return scheduled;
}

export interface EditScheduledMessageInput {
  readonly type?: "channel" | "direct";
  /** A channel ID, or user IDs: read with `type`, or with the current type. */
  readonly to?: number | readonly number[];
  readonly topic?: string;
  readonly content?: string;
  readonly deliverAt?: number;
}

/** PATCH /scheduled_messages/{id} (Zulip's edit_scheduled_message). */
export function editScheduledMessage(
  state: StoreState,
  senderId: number,
  id: number,
  input: EditScheduledMessageInput,
): void {
  const sender = requireActiveUser(state, senderId);
  const current = requireOwn(state, sender, id);
  if (current.delivered) throw new BadRequestError("Scheduled message was already sent");
  if (
    input.type === undefined &&
    input.to === undefined &&
    input.topic === undefined &&
    input.content === undefined &&
    input.deliverAt === undefined
  )
    throw new BadRequestError("Nothing to change");
  if (input.type !== undefined && input.to === undefined)
    throw new BadRequestError("Recipient required when updating type of scheduled message.");
  const type = input.type ?? current.recipient.type;
  if (input.type === "channel" && current.recipient.type !== "channel" && input.topic === undefined)
    throw new BadRequestError("Topic required when updating scheduled message type to stream.");
  let to: ScheduledDestination;
  if (type === "channel") {
    const channelId =
      input.to === undefined ? (current.recipient.type === "channel" ? current.recipient.channelId : 0) : input.to;
    if (typeof channelId !== "number") throw new BadRequestError("Invalid data type for channel");
    to = {
      type: "channel",
      channelId,
      topic: input.topic ?? (current.recipient.type === "channel" ? current.recipient.topic : undefined),
    };
  } else {
    const userIds =
      input.to === undefined
        ? current.recipient.type === "direct"
          ? current.recipient.userIds
          : []
        : typeof input.to === "number"
          ? [input.to]
          : input.to;
    to = { type: "direct", userIds };
  }
  // A failed message needs a new time; a new time must be in the future.
  if (input.deliverAt !== undefined) checkDeliveryTime(state, input.deliverAt);
  else if (current.failed) throw new BadRequestError(DELIVERY_TIME_NOT_IN_FUTURE);
  const { recipient, prepared } = check(state, sender, to, input.content ?? current.content, current.client);
  const rendered = renderMessage(state, prepared);
  checkRenderedMessage(state, prepared, rendered);
  const next: ScheduledMessage = {
    ...current,
    recipient,
    content: prepared.content,
    renderedContent: rendered.html,
    deliverAt: input.deliverAt ?? current.deliverAt,
    failed: false,
    failureMessage: null,
  };
  state.write((ctx) => {
    if (!current.failed) state.tables.scheduledDue.removeSync([current.deliverAt, current.id]);
    state.tables.scheduledDue.putSync([next.deliverAt, next.id], null);
    state.tables.scheduledMessages.putSync(next.id, next);
    ctx.afterCommit(() => state.indexScheduledMessage(next));
    ctx.emit({ type: "scheduled_messages", op: "update", scheduled: next }, () => userAudience(sender.id));
  });
}

/** DELETE /scheduled_messages/{id}. */
export function deleteScheduledMessage(state: StoreState, senderId: number, id: number): void {
  const sender = requireActiveUser(state, senderId);
  const current = requireOwn(state, sender, id);
  if (current.delivered) throw new NotFoundError(DOES_NOT_EXIST);
  state.write((ctx) => {
    state.tables.scheduledDue.removeSync([current.deliverAt, current.id]);
    state.tables.scheduledMessages.removeSync(current.id);
    ctx.afterCommit(() => state.scheduledMessages.delete(current.id));
    ctx.emit({ type: "scheduled_messages", op: "remove", scheduledMessageId: current.id }, () =>
      userAudience(sender.id),
    );
  });
}

/** GET /scheduled_messages: the caller's undelivered ones (failed included, reminders not), by delivery time. */
export function listScheduledMessages(state: StoreState, senderId: number): ScheduledMessage[] {
  const sender = requireActiveUser(state, senderId);
  const out: ScheduledMessage[] = [];
  for (const s of state.scheduledMessages.values())
    if (s.senderId === sender.id && !s.delivered && s.reminder === undefined) out.push(s);
  return out.sort((a, b) => a.deliverAt - b.deliverAt || a.id - b.id);
}

/** The earliest pending delivery time (UNIX seconds), or null. */
export function nextScheduledDelivery(state: StoreState): number | null {
  for (const key of state.tables.scheduledDue.getKeys({ limit: 1 })) return key[0];
  return null;
}

export interface DeliveryOutcome {
  readonly scheduledMessageId: number;
  /** The sent message's ID, or null when the delivery failed. */
  readonly messageId: number | null;
  readonly failure: string | null;
}

/**
 * Delivers every pending message due at `now`, oldest first, one transaction each.
 * A message that can no longer be sent is marked failed with Zulip's reason, and its
 * sender gets the Notification Bot's direct message (unless they or the realm are
 * deactivated), as Zulip's send_scheduled_message does.
 */
export function deliverDueScheduledMessages(
  state: StoreState,
  now: number,
  limit = Number.POSITIVE_INFINITY,
): DeliveryOutcome[] {
  const out: DeliveryOutcome[] = [];
  while (out.length < limit) {
    let due: [number, number] | undefined;
    for (const key of state.tables.scheduledDue.getKeys({ limit: 1 })) due = key;
    if (!due || due[0] > now) return out;
    const scheduled = state.scheduledMessages.get(due[1]);
    if (!scheduled || scheduled.delivered || scheduled.failed) {
      // A key without a pending record cannot be delivered; drop it so the queue moves on.
      const stale = due;
      state.write((ctx) => {
        state.tables.scheduledDue.removeSync(stale);
        ctx.changed({ kind: "scheduledMessage", id: stale[1] });
      });
      continue;
    }
    out.push(scheduled.reminder !== undefined ? deliverReminder(state, scheduled) : deliverOne(state, scheduled));
  }
  return out;
}

function deliverOne(state: StoreState, scheduled: ScheduledMessage): DeliveryOutcome {
  let prepared: MessageToWrite;
  let rendered: RenderResult;
  try {
    const sender = state.users.get(scheduled.senderId);
    if (!sender) throw new BadRequestError("Invalid user");
    const to: ScheduledDestination =
      scheduled.recipient.type === "channel"
        ? { type: "channel", channelId: scheduled.recipient.channelId, topic: scheduled.recipient.topic }
        : { type: "direct", userIds: scheduled.recipient.userIds };
    prepared = {
      ...check(state, sender, to, scheduled.content, scheduled.client).prepared,
      readBy: scheduled.readBySender ? [sender.id] : [],
      dateSent: state.now(),
    };
    rendered = renderMessage(state, prepared);
    checkRenderedMessage(state, prepared, rendered);
  } catch (error) {
    if (!(error instanceof EngineError)) throw error;
    return fail(state, scheduled, error.message);
  }
  return state.write((ctx) => {
    const { id } = storeMessage(state, ctx, prepared, rendered);
    const next: ScheduledMessage = { ...scheduled, delivered: true, deliveredMessageId: id };
    state.tables.scheduledMessages.putSync(next.id, next);
    state.tables.scheduledDue.removeSync([scheduled.deliverAt, scheduled.id]);
    ctx.afterCommit(() => state.indexScheduledMessage(next));
    ctx.emit({ type: "scheduled_messages", op: "remove", scheduledMessageId: next.id }, () =>
      userAudience(next.senderId),
    );
    return { scheduledMessageId: next.id, messageId: id, failure: null };
  });
}

function fail(state: StoreState, scheduled: ScheduledMessage, reason: string): DeliveryOutcome {
  const next: ScheduledMessage = { ...scheduled, failed: true, failureMessage: reason };
  const sender = state.users.get(scheduled.senderId);
  const realm = state.realms.get(scheduled.realmId);
  const notify = sender !== undefined && sender.isActive && realm !== undefined && !realm.deactivated;
  state.write((ctx) => {
    state.tables.scheduledMessages.putSync(next.id, next);
    state.tables.scheduledDue.removeSync([scheduled.deliverAt, scheduled.id]);
    ctx.afterCommit(() => state.indexScheduledMessage(next));
    ctx.changed({ kind: "scheduledMessage", id: next.id });
    if (notify) {
      ctx.emit({ type: "scheduled_messages", op: "update", scheduled: next }, () => userAudience(next.senderId));
      ensureNotificationBotInTxn(state, ctx, realm);
    }
  });
  // The notice is a message of its own: a crash before it loses the notice, never the failure.
  const bot = notify ? findNotificationBot(state, scheduled.realmId) : undefined;
  if (bot) {
    const at = new Date(scheduled.deliverAt * 1000).toISOString().replace(/\.\d{3}Z$/, "+00:00");
    const content = `The message you scheduled for <time:${at}> was not sent because of the following error:\n\n> ${reason}\n\n[View scheduled messages](#scheduled)`;
    sendInternalDirectMessage(state, bot.id, scheduled.senderId, content);
  }
  return { scheduledMessageId: scheduled.id, messageId: null, failure: reason };
}
