/**
 * @module actions/send-message
 * Sending channel and direct messages. One write transaction stores the record, the
 * time index and every index bit. Nothing is written per channel subscriber: what they
 * received derives from their subscription intervals (see received.ts). Per-user bits
 * are written only for the few users a message singles out (sender's read flag,
 * personal/group/topic mentions, direct-message participants).
 */
import { directMessageAccessGains, emitDirectMessageAccessGains } from "./guest-access-events.js";
import { canSeeChannel, receivedAtSend, sendRefusal } from "../access.js";
import { BadRequestError, ChannelNotFoundError, clip, PermissionDeniedError } from "../errors.js";
import { RoaringBitmap32 } from "../index/bitmap-store.js";
import { HAS_OPERANDS, isIndexableTerm, key, type StoredFlag } from "../index/keys.js";
import { indexTerms } from "../search/index.js";
import { codePointPrefix, exceedsCodePoints, MAX_DIRECT_RECIPIENTS } from "../limits.js";
import { type StoreState, type WriteContext } from "../state.js";
import { type Channel, type Conversation, type Message, type User } from "../types.js";
import { checkTopicCreation, findChannelByName } from "./channels.js";
import { renderContextFor } from "./render-context.js";
import { checkDirectMessagePermission, checkWildcardMention } from "./message-permissions.js";
import { channelViewersAudience, messageAudience } from "../events/audience.js";
import type { MessageOrigin } from "../events/types.js";
import { alertedReceivers } from "./alert-words.js";
import { FlagsAtSend } from "../queries/message-flags.js";
import type { RenderResult } from "../render.js";

/** key.userFlag(userId, flag) parsed back. */
const USER_FLAG_KEY = /^u:(\d+):(\w+)$/;
import { requireUser } from "./users.js";
import { claimableAttachments, claimAttachments } from "./attachments.js";
import { applyAutomaticPolicies } from "./user-topics.js";
import { enqueueMessagePushes } from "./push-notifications.js";
import { enqueueServiceBotCallsInTxn } from "../outgoing-webhooks/triggers.js";
import { enqueueMissedEmails } from "./missed-message-emails.js";
import { getMessageRecord, putMessageRecord } from "../storage/message-records.js";
import { storedMetaOf } from "../storage/topic-rows.js";
import { placeSent } from "./topic-registry.js";
import { widgetContentFor } from "../widgets.js";

export const MAX_MESSAGE_LENGTH = 10000;
export const MAX_TOPIC_LENGTH = 60;
export const RESOLVED_TOPIC_PREFIX = "✔ ";

export type MessageDestination =
  | {
      readonly type: "channel";
      /** A name or ID; null: the sender's default sending channel (a bot's default_sending_stream). */
      readonly channel: number | string | null;
      readonly topic: string | undefined;
    }
  | { readonly type: "direct"; readonly users: readonly (number | string)[] };

export interface SendMessageInput {
  readonly senderId: number;
  readonly to: MessageDestination;
  readonly content: string;
  /** Name of the sending client ("website", "ZulipMobile", "API", ...). */
  readonly client?: string;
  /** Default: decided from the client name, like Zulip. */
  readonly readBySender?: boolean;
  /** For imports and data generators; default now. */
  readonly dateSent?: number;
  /** The sending client's event queue and local ID, echoed in its own message event. */
  readonly origin?: MessageOrigin;
  /**
   * Zulip's automatic topic policies on send (default true). Imports replaying history
   * turn them off: the export already holds the policies that resulted.
   */
  readonly automaticPolicies?: boolean;
  /** Call the outgoing webhook bots the message triggers (default true); imports replaying history do not. */
  readonly callServiceBots?: boolean;
  /** Add the message to away recipients' missed-message emails (default true); imports replaying history do not. */
  readonly missedMessageEmails?: boolean;
  /**
   * Make a `/poll` or `/todo` message a widget (default true). Imports replaying history
   * do not: Zulip's export holds no submessages and its import creates none.
   */
  readonly widgets?: boolean;
}

/** Clients that are full UIs used by humans: their sends start read for the sender. */
const HUMAN_CLIENTS = new Set([
  "zulipandroid",
  "zulipios",
  "zulipdesktop",
  "zulipmobile",
  "zulipelectron",
  "zulipterminal",
  "snipe",
  "website",
  "ios",
  "android",
]);

export function defaultReadBySender(client: string): boolean {
  const name = client.toLowerCase();
  return HUMAN_CLIENTS.has(name) || name.includes("desktop app");
}

/** Cuts by code points without materialising them: a 1 MB body costs one scan of its head. */
function truncate(text: string, max: number, marker: string): string {
  return exceedsCodePoints(text, max) ? codePointPrefix(text, max - [...marker].length) + marker : text;
}

/** Zulip's normalize_body: trimmed, non-empty, no NUL, truncated to the maximum. */
export function normalizeContent(content: string): string {
  const body = content.trimEnd().replace(/^\n+/, "");
  if (body.length === 0) throw new BadRequestError("Message must not be empty");
  if (body.includes("\0")) throw new BadRequestError("Message must not contain null bytes");
  return truncate(body, MAX_MESSAGE_LENGTH, "\n[message truncated]");
}

/** The stored topic for a channel message, applying the channel's topics policy. */
export function normalizeTopic(state: StoreState, channel: Channel, raw: string | undefined): string {
  const realm = state.realms.get(channel.realmId);
  if (raw === undefined) throw new BadRequestError("Missing topic");
  if (raw.includes("\0")) throw new BadRequestError("Topic must not contain null bytes");
  let topic = raw.trim();
  if (topic === "(no topic)" || topic === realm?.emptyTopicDisplayName) topic = "";
  topic = truncate(topic, MAX_TOPIC_LENGTH, "...");
  const policy =
    channel.topicsPolicy === "inherit" ? (realm?.topicsPolicy ?? "allow_empty_topic") : channel.topicsPolicy;
  if (topic === "" && policy === "disable_empty_topic")
    throw new BadRequestError("Sending messages to the general chat is not allowed in this channel.");
  if (topic !== "" && policy === "empty_topic_only")
    throw new BadRequestError("Only the general chat topic is allowed in this channel.");
  return topic;
}

/**
 * Deliberate deviation from Zulip, which answers "Not authorized to send to channel
 * 'NAME'" for any existing channel: for one the sender cannot see, that told a
 * non-subscriber a private channel's name from its ID. It is "does not exist" here.
 */
export function resolveChannel(state: StoreState, sender: User, ref: number | string): Channel {
  const channel = typeof ref === "number" ? state.channels.get(ref) : findChannelByName(state, sender.realmId, ref);
  if (!channel || channel.realmId !== sender.realmId)
    throw new ChannelNotFoundError(typeof ref === "number" ? { id: ref } : { name: ref });
  const refusal = sendRefusal(state, sender, channel);
  if (refusal === "group") throw new PermissionDeniedError("You do not have permission to post in this channel.");
  if (refusal === "access") {
    // Zulip names the channel here; we do so only to those who may see it, so that a
    // private channel's existence (or name, when addressed by ID) does not leak.
    if (!canSeeChannel(state, sender, channel))
      throw new ChannelNotFoundError(typeof ref === "number" ? { id: ref } : { name: ref });
    throw new PermissionDeniedError(`Not authorized to send to channel '${channel.name}'`);
  }
  return channel;
}

/** Resolves direct-message recipients by ID or email; the sender is dropped unless alone. */
export function resolveRecipients(state: StoreState, sender: User, refs: readonly (number | string)[]): number[] {
  if (refs.length === 0) throw new BadRequestError("Message must have recipients");
  if (refs.length > MAX_DIRECT_RECIPIENTS)
    throw new BadRequestError(`Too many recipients (maximum ${MAX_DIRECT_RECIPIENTS}).`);
  const ids = new Set<number>();
  for (const ref of refs) {
    const id = typeof ref === "number" ? ref : state.userByEmail.get(`${sender.realmId}:${ref.trim().toLowerCase()}`);
    const user = id === undefined ? undefined : state.users.get(id);
    if (!user || user.realmId !== sender.realmId) {
      throw new BadRequestError(typeof ref === "number" ? `Invalid user ID ${ref}` : `Invalid email '${clip(ref)}'`);
    }
    if (!user.isActive && user.id !== sender.id) throw new BadRequestError(`'${user.email}' is no longer using Zulip.`);
    ids.add(user.id);
  }
  ids.add(sender.id);
  return [...ids].sort((a, b) => a - b);
}

export function sendMessage(state: StoreState, input: SendMessageInput): SentMessage {
  const prepared = prepareMessage(state, input);
  const rendered = renderMessage(state, prepared);
  checkRenderedMessage(state, prepared, rendered);
  return state.write((ctx) => storeMessage(state, ctx, prepared, rendered));
}

/** The checks of a send that need the rendered content (Zulip's check_message after rendering). */
export function checkRenderedMessage(state: StoreState, prepared: MessageToWrite, rendered: RenderResult): void {
  if (prepared.channel) checkWildcardMention(state, prepared.sender, prepared.channel, prepared.topic, rendered);
}

/**
 * sendMessage through the group commit (StoreState.writeGrouped): concurrent sends
 * share one fsync; the checks and the rendering run when the group is written, on the
 * state every earlier send of the group left.
 */
export function sendMessageGrouped(state: StoreState, input: SendMessageInput): Promise<SentMessage> {
  return state.writeGrouped(() => {
    const prepared = prepareMessage(state, input);
    const rendered = renderMessage(state, prepared);
    checkRenderedMessage(state, prepared, rendered);
    return (ctx) => storeMessage(state, ctx, prepared, rendered);
  });
}

/**
 * Zulip's Addressee.legacy_build for a channel message without `to`: the sender's
 * default_sending_stream (only bots have one), else "Missing channel". The usual
 * sending checks then apply to it.
 */
function defaultSendingChannel(sender: User): number {
  const channelId = sender.botConfig?.defaultSendingChannelId ?? null;
  if (channelId === null) throw new BadRequestError("Missing channel");
  return channelId;
}

/**
 * Every check of a send (Zulip's check_message), without writing: the validated
 * message, ready for writeMessage or storeMessage. Scheduled messages run it when
 * scheduled and again when delivered.
 */
export function prepareMessage(state: StoreState, input: SendMessageInput): MessageToWrite {
  const sender = requireUser(state, input.senderId);
  const realm = state.realms.get(sender.realmId);
  if (!sender.isActive || !realm || realm.deactivated) throw new PermissionDeniedError("Account is deactivated");
  const content = normalizeContent(input.content);
  const client = input.client ?? "API";

  let channel: Channel | null = null;
  let topic = "";
  let participants: number[] = [];
  if (input.to.type === "channel") {
    channel = resolveChannel(state, sender, input.to.channel ?? defaultSendingChannel(sender));
    topic = normalizeTopic(state, channel, input.to.topic);
    checkTopicCreation(state, sender, channel, topic);
  } else {
    participants = resolveRecipients(state, sender, input.to.users);
    checkDirectMessagePermission(state, sender, participants);
  }
  const readBySender = input.readBySender ?? defaultReadBySender(client);
  return {
    sender,
    channel,
    topic,
    participants,
    content,
    client,
    readBy: readBySender ? [sender.id] : [],
    dateSent: input.dateSent ?? state.now(),
    origin: input.origin,
    automaticPolicies: input.automaticPolicies ?? true,
    callServiceBots: input.callServiceBots ?? true,
    missedMessageEmails: input.missedMessageEmails ?? true,
    widgets: input.widgets ?? true,
  };
}

/**
 * A channel message from a system bot (Zulip's internal_send_stream_message): no
 * sending permission applies; `readBy` start with the message read (Zulip's
 * mark_as_read), for those of them who receive it.
 */
export function sendInternalChannelMessage(
  state: StoreState,
  senderId: number,
  channelId: number,
  topic: string,
  content: string,
  readBy: readonly number[],
): { id: number } {
  return writeMessage(state, internalChannelMessage(state, senderId, channelId, topic, content, readBy));
}

/**
 * The checked form of a system bot's channel message, for writeMessages to store with
 * others. The sender may be given as a user, for a bot created in the running write.
 */
export function internalChannelMessage(
  state: StoreState,
  senderId: number | User,
  channelOrId: number | Channel,
  topic: string,
  content: string,
  readBy: readonly number[],
): MessageToWrite {
  const sender = typeof senderId === "number" ? requireUser(state, senderId) : senderId;
  // A record given directly is the one a write in progress is changing (not yet in state.channels).
  const channelId = typeof channelOrId === "number" ? channelOrId : channelOrId.id;
  const channel = typeof channelOrId === "number" ? state.channels.get(channelOrId) : channelOrId;
  if (!channel || channel.realmId !== sender.realmId) throw new ChannelNotFoundError({ id: channelId });
  // The channel's member set looked up once: a resolve notice is read by its 10,000 members.
  const members = state.subscribers.get(channel.id);
  const receivers = readBy.filter((userId) => userId === sender.id || members?.has(userId) === true);
  // A channel that allows only the general chat gets the notice there rather than none.
  const policy =
    channel.topicsPolicy === "inherit" ? state.realms.get(channel.realmId)?.topicsPolicy : channel.topicsPolicy;
  const stored = policy === "empty_topic_only" ? "" : normalizeTopic(state, channel, topic);
  return {
    sender,
    channel,
    topic: stored,
    participants: [],
    content: normalizeContent(content),
    client: "Internal",
    readBy: receivers,
    dateSent: state.now(),
  };
}

/** A direct message from a system bot to one user (Zulip's internal_send_private_message). */
export function sendInternalDirectMessage(
  state: StoreState,
  senderId: number,
  recipientId: number,
  content: string,
  options: { readonly externalNotifications?: boolean } = {},
): { id: number } {
  return writeMessage(state, { ...internalDirectMessage(state, senderId, recipientId, content), ...options });
}

/** The message sendInternalDirectMessage writes, for writeMessages to store several in one transaction. */
export function internalDirectMessage(
  state: StoreState,
  senderId: number,
  recipientId: number,
  content: string,
): MessageToWrite {
  const sender = requireUser(state, senderId);
  const participants = [...new Set([senderId, recipientId])].sort((a, b) => a - b);
  return {
    sender,
    channel: null,
    topic: "",
    participants,
    content: normalizeContent(content),
    client: "Internal",
    readBy: [],
    dateSent: state.now(),
  };
}

export interface MessageToWrite {
  readonly sender: User;
  readonly channel: Channel | null;
  readonly topic: string;
  /** Direct-message participants (sorted, sender included); empty for channel messages. */
  readonly participants: number[];
  readonly content: string;
  readonly client: string;
  readonly readBy: readonly number[];
  readonly dateSent: number;
  readonly origin?: MessageOrigin | undefined;
  /** Apply Zulip's automatic topic policies (default true; internal sends are by bots, which never get them). */
  readonly automaticPolicies?: boolean;
  /** Call the outgoing webhook bots the message triggers (default true). */
  readonly callServiceBots?: boolean;
  /** Add the message to away recipients' missed-message emails (default true). */
  readonly missedMessageEmails?: boolean;
  /** Make a `/poll` or `/todo` message a widget (default true). */
  readonly widgets?: boolean;
  /**
   * Push notifications and missed-message emails for it (default true). Zulip's
   * disable_external_notifications: Welcome Bot's messages are meant to be read in the app.
   */
  readonly externalNotifications?: boolean;
}

/** Renders and stores a validated message in one write. */
export function writeMessage(state: StoreState, input: MessageToWrite): SentMessage {
  const rendered = renderMessage(state, input);
  return state.write((ctx) => storeMessage(state, ctx, input, rendered));
}

/**
 * Several messages in one transaction: one commit (and one write of each bitmap chunk
 * they touch) instead of one per message, for bulk system notices.
 */
export function writeMessages(state: StoreState, inputs: readonly MessageToWrite[]): SentMessage[] {
  if (inputs.length === 0) return [];
  // Bulk notices repeat one text (1000 new channels, each "Public channel created by
  // X"): the renderer is a pure function of the text and the sender's realm lookups,
  // so each distinct (sender, text) is rendered once.
  const memo = new Map<string, RenderResult>();
  const rendered = inputs.map((input) => {
    const k = `${input.sender.id}:${input.content}`;
    let result = memo.get(k);
    if (result === undefined) memo.set(k, (result = renderMessage(state, input)));
    return result;
  });
  return state.write((ctx) => inputs.map((input, i) => storeMessage(state, ctx, input, rendered[i]!)));
}

export function renderMessage(state: StoreState, input: MessageToWrite): RenderResult {
  return state.renderer(input.content, renderContextFor(state, input.sender));
}

/**
 * Stores a validated, rendered message inside an open write, so a caller can make it
 * part of a larger transaction (a scheduled message is delivered and marked delivered
 * in one).
 */
export function storeMessage(
  state: StoreState,
  ctx: WriteContext,
  input: MessageToWrite,
  rendered: RenderResult,
): SentMessage {
  const { sender, channel, topic, participants, content, client } = input;
  {
    // Before the message is indexed: "initiation" means the topic has no message yet.
    const automatic =
      channel && input.automaticPolicies !== false
        ? applyAutomaticPolicies(state, ctx, sender, channel, topic, rendered.mentionedUserIds)
        : null;
    const id = state.allocate("nextMessageId");
    const failure = rendered.failure;
    if (failure !== undefined) ctx.afterCommit(() => state.reportRenderFailure({ messageId: id, failure }));
    const conversation = channel ? null : conversationFor(state, ctx, sender.realmId, participants);
    // Zulip's has_attachment: the message claimed at least one upload (a link to a missing or foreign file does not
    // count).
    const claimed = claimableAttachments(state, sender, rendered.uploadPathIds);
    const message: Message = {
      id,
      realmId: sender.realmId,
      senderId: sender.id,
      recipient: channel
        ? { type: "channel", channelId: channel.id }
        : { type: "direct", conversationId: conversation!.id },
      topic,
      content,
      renderedContent: rendered.html,
      dateSent: input.dateSent,
      client,
      isMeMessage: rendered.isMeMessage,
      hasLink: rendered.hasLink,
      hasImage: rendered.hasImage,
      hasAttachment: claimed.length > 0,
      mentionedUserIds: [...rendered.mentionedUserIds],
      mentionedGroupIds: [...rendered.mentionedGroupIds],
      wildcard: rendered.wildcard,
      reactions: [],
      ...(input.widgets === false ? {} : widgetOf(state, sender.id, content)),
      editHistory: null,
      lastEditTimestamp: null,
      lastMovedTimestamp: null,
    };
    // A channel message names its topic's registry row (actions/topic-registry).
    placeSent(state, ctx, message);
    putMessageRecord(state.tables, message, undefined, undefined, true);
    state.tables.messageMeta.putSync(id, storedMetaOf(message));
    state.tables.dateMessage.putSync([message.dateSent, id], null);
    claimAttachments(state, ctx, claimed, id);
    // Per-user bits this write sets are also the recipients' flags in the message event.
    const flags = new FlagsAtSend(message.wildcard === "stream" && channel !== null);
    const sink: IndexSink = {
      add: (k, bit) => {
        const userBit = USER_FLAG_KEY.exec(k);
        if (userBit) flags.record(Number(userBit[1]), userBit[2]!);
        return state.bitmaps.add(k, bit);
      },
      // A mention reaching thousands: their bits written in later writes, readable at once, as for
      // a notice born read (BitmapStore.addDeferredForUsers); 10,000 chunk writes took ~10 ms of the send's.
      addForUsers: (flag, userIds, bit) => {
        flags.recordForUsers(flag, userIds);
        state.bitmaps.addDeferredForUsers(flag, userIds, new RoaringBitmap32([bit]));
      },
    };
    // Before the message is indexed: who a limited guest could see until now.
    const gains = channel ? null : directMessageAccessGains(state, participants);
    indexMessage(state, message, sink, conversation);
    const readers = [...input.readBy, ...mutersReceiving(state, message, input.readBy, participants)];
    if (readers.length <= 1) for (const userId of readers) sink.add(key.userFlag(userId, "read"), id);
    else {
      // Born read for many (a notice for a channel's thousands of subscribers, a sender
      // muted by many): BitmapStore.addDeferredForUsers writes their read bitmaps in later writes
      // when they are many, readable at once.
      flags.recordBornRead(readers);
      state.bitmaps.addDeferredForUsers("read", readers, new RoaringBitmap32([id]));
    }
    writeMentionFlags(state, message, sink, { groups: true, conversation, sending: true });
    const receives = receiverCheck(state, message, conversation, undefined, true);
    for (const userId of alertedReceivers(state, message.realmId, message.content, receives))
      sink.add(key.userFlag(userId, "has_alert_word"), id);
    const external = input.externalNotifications !== false;
    if (external) enqueueMessagePushes(state, ctx, message, channel, participants, flags);
    if (input.callServiceBots !== false)
      enqueueServiceBotCallsInTxn(state, ctx, sender, message, channel, participants);
    if (external && input.missedMessageEmails !== false)
      enqueueMissedEmails(state, ctx, message, channel, participants, flags);
    if (channel && channel.firstMessageId === null) {
      const next: Channel = { ...channel, firstMessageId: id };
      state.tables.channels.putSync(next.id, next);
      ctx.afterCommit(() => state.indexChannel(next));
      ctx.emit({ type: "stream", op: "update", channel: next, property: "first_message_id", value: id }, () =>
        channelViewersAudience(state, next),
      );
    }
    if (gains !== null) emitDirectMessageAccessGains(state, ctx, gains);
    ctx.emit(
      {
        type: "message",
        message,
        flagsFor: (userId) => flags.flagsFor(userId),
        publicChannelRealmId: channel && !channel.inviteOnly ? channel.realmId : null,
        origin: input.origin ?? null,
      },
      () => messageAudience(state, message),
    );
    return automatic === null ? { id } : { id, automaticNewVisibilityPolicy: automatic };
  }
}

/**
 * Zulip's do_widget_post_save_actions: a message starting with `/poll` or `/todo` is
 * stored with its widget as its first submessage, in the same write.
 */
function widgetOf(state: StoreState, senderId: number, content: string): Pick<Message, "submessages"> {
  const widget = widgetContentFor(content);
  if (widget === null) return {};
  return { submessages: [{ id: state.allocate("nextSubmessageId"), senderId, msgType: "widget", content: widget }] };
}

/**
 * Zulip's muted_sender_user_ids: the recipients who mute the message's sender, not in
 * `readBy`, for whom it arrives read. Only those users are looked at (the sender's muters, one map lookup), never
 * every recipient.
 */
function mutersReceiving(
  state: StoreState,
  message: Message,
  readBy: readonly number[],
  participants: readonly number[],
): number[] {
  const muters = state.mutingUsers.get(message.senderId);
  if (muters === undefined) return [];
  const already = new Set(readBy);
  const out: number[] = [];
  for (const userId of muters) {
    if (already.has(userId)) continue;
    const receives =
      message.recipient.type === "direct" ? participants.includes(userId) : receivedAtSend(state, userId, message);
    if (receives) out.push(userId);
  }
  return out;
}

/**
 * A stored message's ID, and the sender's topic policy when a send changed it (Zulip's
 * automatic_new_visibility_policy).
 */
export interface SentMessage {
  readonly id: number;
  readonly automaticNewVisibilityPolicy?: 2 | 3;
}

/** Where index bits go: the live BitmapStore on send, an in-memory rebuild in verify. */
export interface IndexSink {
  add(key: string, id: number): unknown;
  /**
   * One per-user flag's bit for many users at once (a group or topic wildcard mention
   * reaching thousands); without it each user's bit goes through `add`.
   */
  addForUsers?(flag: StoredFlag, userIds: readonly number[], id: number): void;
}

/**
 * Sets every message-level index bit of `message` (also used by verify to rebuild).
 * Per-user bits here are the direct-message participants' `dm` sets only.
 */
export function indexMessage(
  state: StoreState,
  message: Message,
  b: IndexSink,
  conversation: Conversation | null = null,
): void {
  const id = message.id;
  b.add(key.realm(message.realmId), id);
  b.add(key.sender(message.senderId), id);
  if (message.recipient.type === "channel") {
    b.add(key.channel(message.recipient.channelId), id);
    b.add(key.channelTopic(message.recipient.channelId, message.topic), id);
    b.add(key.topic(message.realmId, message.topic), id);
    if (message.topic.startsWith(RESOLVED_TOPIC_PREFIX)) b.add(key.resolved(message.realmId), id);
    if (message.wildcard === "stream") b.add(key.streamWildcard(message.realmId), id);
  } else {
    const members = conversationMembers(state, message, conversation);
    b.add(key.conversation(message.recipient.conversationId), id);
    b.add(key.allDirect(message.realmId), id);
    if (members.length >= 3) b.add(key.groupDirect(message.realmId), id);
    for (const userId of members) b.add(key.userFlag(userId, "dm"), id);
  }
  const has = {
    link: message.hasLink,
    image: message.hasImage,
    attachment: message.hasAttachment,
    reaction: message.reactions.length > 0,
  };
  for (const what of HAS_OPERANDS) if (has[what]) b.add(key.has(message.realmId, what), id);
  for (const term of indexTerms(message.topic, message.renderedContent))
    if (isIndexableTerm(term)) b.add(key.term(message.realmId, term), id);
}

/**
 * A direct message's participants (the sender passes the conversation it just found or
 * created, saving a lookup).
 */
function conversationMembers(
  state: StoreState,
  message: Message,
  conversation: Conversation | null,
): readonly number[] {
  if (message.recipient.type !== "direct") return [];
  return (conversation ?? state.conversations.get(message.recipient.conversationId))?.userIds ?? [];
}

/** The realm's conversation with exactly these (sorted) members, stored in the running write if new. */
function conversationFor(state: StoreState, ctx: WriteContext, realmId: number, userIds: number[]): Conversation {
  const existing = state.conversations.idOf(realmId, userIds);
  if (existing !== undefined) return state.conversations.get(existing)!;
  const conversation: Conversation = { id: state.allocate("nextConversationId"), realmId, userIds };
  state.conversations.put(conversation);
  ctx.changed({ kind: "conversation", id: conversation.id, op: "added" });
  return conversation;
}

/**
 * Per-user mention flags, for users who receive the message (Zulip gives flags only
 * to UserMessage rows). Stream-wildcard mentions are message-level (key.streamWildcard).
 * `historicalRows`: users holding a historical row, who count as receivers too (an edit
 * sets their flags as Zulip's update_user_message_flags does for every row).
 */
export function writeMentionFlags(
  state: StoreState,
  message: Message,
  sink: IndexSink,
  options: {
    groups: boolean;
    conversation?: Conversation | null;
    historicalRows?: ReadonlySet<number>;
    /** The message is being sent (never moved): see receiverCheck. */
    sending?: boolean;
  },
): void {
  const receives = receiverCheck(
    state,
    message,
    options.conversation ?? null,
    options.historicalRows,
    options.sending === true,
  );
  for (const userId of message.mentionedUserIds) {
    if (receives(userId)) sink.add(key.userFlag(userId, "mentioned"), message.id);
  }
  const forUsers = (flag: StoredFlag, userIds: readonly number[]) => {
    if (sink.addForUsers) sink.addForUsers(flag, userIds, message.id);
    else for (const userId of userIds) sink.add(key.userFlag(userId, flag), message.id);
  };
  if (options.groups && message.mentionedGroupIds.length > 0) {
    // Each group's members as a set, not isGroupMember (a scan of a 10,000-member list) for every user.
    const groups = message.mentionedGroupIds.map((g) => state.groupMembers(g));
    const mentioned: number[] = [];
    for (const user of state.users.values()) {
      if (user.realmId !== message.realmId || !groups.some((members) => members.has(user.id))) continue;
      if (receives(user.id)) mentioned.push(user.id);
    }
    forUsers("group_mentioned", mentioned);
  }
  if (message.wildcard === "topic" && message.recipient.type === "channel") {
    forUsers("topic_wildcard_mentioned", [...topicParticipants(state, message)].filter(receives));
  }
}

/**
 * Whether a user has the message (Zulip's UserMessage row), for per-user flags:
 * received at send, or one of `historicalRows` (users holding a historical row).
 */
export function receiverCheck(
  state: StoreState,
  message: Message,
  conversation: Conversation | null,
  historicalRows?: ReadonlySet<number>,
  sending = false,
): (userId: number) => boolean {
  // Deactivation closes receive intervals, so receivedAtSend is what the user received at send time.
  const members = conversationMembers(state, message, conversation);
  if (message.recipient.type === "direct") return (userId) => members.includes(userId);
  if (sending) {
    // A message being sent has not been moved: no withdrawn or granted rows name its ID, and
    // looking for them cost each of a 10,000-member group mention's users two bitmap lookups.
    const channelId = message.recipient.channelId;
    return (userId) => {
      if (userId === message.senderId) return true;
      const sub = state.subsByUser.get(userId)?.get(channelId);
      return (
        sub !== undefined && sub.intervals.some((iv) => message.id >= iv.from && (iv.to === null || message.id < iv.to))
      );
    };
  }
  return (userId) => historicalRows?.has(userId) === true || receivedAtSend(state, userId, message);
}

/** Users who had sent a message to the topic before `message` (Zulip's topic participants). */
function topicParticipants(state: StoreState, message: Message): Set<number> {
  const out = new Set<number>([message.senderId]);
  if (message.recipient.type !== "channel") return out;
  for (const id of state.bitmaps.get(key.channelTopic(message.recipient.channelId, message.topic))) {
    if (id >= message.id) break;
    const other = getMessageRecord(state.tables, id);
    if (other) out.add(other.senderId);
  }
  return out;
}
