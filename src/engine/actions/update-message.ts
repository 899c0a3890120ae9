/**
 * @module actions/update-message
 * PATCH /messages/{id} (Zulip's check_update_message and do_update_message): a content
 * edit, a move (topic and/or channel, actions/move-messages), or both, checked in
 * Zulip's order and stored in one write with one history entry and one update_message
 * event.
 *
 * A content edit re-renders the message with its sender's context and stores it through
 * rewriteMessages (records, search terms, has:, the stream wildcard); the per-user
 * mention bits (mentioned, group_mentioned, topic_wildcard_mentioned) go from what the
 * old version set to what the new one sets, for the users who received it; uploads are
 * claimed and detached; users it newly mentions get a push notification.
 *
 * With a move, the target is stored here with its content edit (no history entry yet)
 * and writeMove then moves it and the others in the same write, taking the stored
 * target as `edited` and adding the one history entry (the `historyEntry` given plus
 * the move's fields). The record's lastEditTimestamp is Zulip's API last_edit_timestamp
 * (the newest content edit); moves set lastMovedTimestamp.
 */
import { createHash } from "node:crypto";
import { canChangeMessage, hasRow, receivedAtSend } from "../access.js";
import { realmAudience, usersAudience } from "../events/audience.js";
import type { ApiFlag } from "../flags.js";
import { BadRequestError, ExpectationMismatchError, PermissionDeniedError } from "../errors.js";
import type { Audience, ContentEdit, MessageMove } from "../events/types.js";
import { key } from "../index/keys.js";
import { userFlagHas } from "../index/user-flag-holders.js";
import { rowFlags, type KnownRow } from "../queries/message-flags.js";
import type { RenderResult } from "../render.js";
import { pastLimit } from "../settings/message-policy.js";
import type { StoreState } from "../state.js";
import { getMessageRecord } from "../storage/message-records.js";
import type { Attachment, Channel, EditHistoryEntry, Message, Realm, User } from "../types.js";
import type { WriteContext } from "../write-coordinator.js";
import { reclaimAttachments } from "./attachments.js";
import { requireActiveUser } from "./lookups.js";
import { rewriteMessages } from "./message-rewrite.js";
import {
  movesByReference,
  prepareMove,
  writeMove,
  type MoveResult,
  type PreparedMove,
  type PropagateMode,
  type StagedRewrites,
} from "./move-messages.js";
import { MOVE_STAGING, sameMove, shouldStage, stageMove } from "./move-staging.js";
import { enqueueEditPushes } from "./push-notifications.js";
import { enqueueEditMissedEmails } from "./missed-message-emails.js";
import { realmMessagePolicy, type MessagePolicy } from "./realm-message-policy.js";
import { renderContextFor } from "./render-context.js";
import { alertedReceivers } from "./alert-words.js";
import { checkWildcardMention } from "./message-permissions.js";
import { normalizeContent, receiverCheck, RESOLVED_TOPIC_PREFIX, writeMentionFlags } from "./send-message.js";

export interface UpdateMessageInput {
  /** New Markdown; only whitespace becomes "(deleted)", as in Zulip. */
  readonly content?: string;
  /** New topic, as sent (trimmed and checked here and by the move). */
  readonly topic?: string;
  /** Move to this channel. */
  readonly channelId?: number;
  /** Default change_one. */
  readonly propagateMode?: PropagateMode;
  /** Notification Bot's notice in the old topic (Zulip's default: false). */
  readonly sendNotificationToOldThread?: boolean;
  /** Notification Bot's notice in the new topic (Zulip's default: true). */
  readonly sendNotificationToNewThread?: boolean;
  /** Hex SHA-256 of the raw content the client last saw: the edit is refused when it is stale. */
  readonly prevContentSha256?: string;
}

export interface UpdateMessageResult {
  /** Every message the edit changed, ascending. */
  readonly messageIds: readonly number[];
  /** Zulip's detached_uploads: the sender's uploads the edit unlinked and no message claims any more. */
  readonly detachedUploads: readonly Attachment[];
}

/**
 * Zulip's edit_limit_buffer: the web app offers an edit up to 15 s past the limit, and a
 * request may take a few seconds more to arrive.
 */
export const EDIT_LIMIT_GRACE_SECONDS = 20;

/** Zulip's Message.EMPTY_TOPIC_FALLBACK_NAME, which a topic edit also accepts for the empty topic. */
const GENERAL_CHAT = "general chat";

/** Zulip's error for a message the caller may not change, existing or not. */
const INVALID_MESSAGE = "Invalid message(s)";

/** The rendered new version of a content edit, ready to store. */
interface PreparedContent {
  readonly content: string;
  readonly rendered: RenderResult;
}

/** A PATCH checked and rendered, ready to write. */
interface CheckedUpdate {
  readonly actor: User;
  readonly message: Message;
  readonly channel: Channel | undefined;
  readonly now: number;
  readonly prepared: PreparedMove | null;
  readonly edit: PreparedContent | null;
}

export function updateMessage(
  state: StoreState,
  actorId: number,
  messageId: number,
  input: UpdateMessageInput,
): UpdateMessageResult {
  return writeUpdate(state, checkUpdate(state, actorId, messageId, input, state.now()), null);
}

/**
 * updateMessage for a request that may move thousands of messages: such a move is staged
 * between turns of the event loop (awaiting `pause` between chunks) and written in one
 * short write (actions/move-staging); everything else is written at once, as
 * updateMessage does. The request is checked again just before its write, at the time it
 * arrived; a refusal then is its answer, and changes nothing.
 */
export async function updateMessageStaged(
  state: StoreState,
  actorId: number,
  messageId: number,
  input: UpdateMessageInput,
  pause: () => Promise<void>,
): Promise<UpdateMessageResult> {
  const now = state.now();
  let checked = checkUpdate(state, actorId, messageId, input, now);
  for (let attempt = 0; attempt < MOVE_STAGING.attempts; attempt++) {
    const move = checked.prepared;
    // A content edit with the move changes the target in the write: not staged (see writeMove's `edited`).
    // A rename by reference writes a few rows: nothing to stage either.
    if (move === null || checked.edit !== null || !shouldStage(move) || movesByReference(state, move)) break;
    const staged = await stageMove(state, move, { userId: move.actorId, timestamp: now }, now, pause);
    try {
      checked = checkUpdate(state, actorId, messageId, input, now);
      const again = checked.prepared;
      if (!staged.spoiled && again !== null && checked.edit === null && sameMove(move, again))
        return writeUpdate(state, checked, staged);
    } finally {
      staged.release();
    }
  }
  return writeUpdate(state, checked, null);
}

/** Every check of the request, in Zulip's order, and the rendering of new content; writes nothing. */
function checkUpdate(
  state: StoreState,
  actorId: number,
  messageId: number,
  input: UpdateMessageInput,
  now: number,
): CheckedUpdate {
  const actor = requireActiveUser(state, actorId);
  const realm = state.realms.get(actor.realmId);
  if (!realm || realm.deactivated) throw new PermissionDeniedError("Account is deactivated");
  const message =
    Number.isSafeInteger(messageId) && messageId > 0 && messageId <= 0xffffffff
      ? getMessageRecord(state.tables, messageId)
      : undefined;
  if (!message || !canChangeMessage(state, actor, message)) throw new BadRequestError(INVALID_MESSAGE);
  const policy = realmMessagePolicy(state, realm.id);
  if (input.content !== undefined) checkContentEditAllowed(actor, message, policy, now);

  const topic = input.topic !== undefined && !sameTopic(realm, input.topic, message.topic) ? input.topic : undefined;
  const { channelId } = input;
  const propagateMode = input.propagateMode ?? "change_one";
  checkPayload(message, input, topic, propagateMode);
  const channel = message.recipient.type === "channel" ? state.channels.get(message.recipient.channelId) : undefined;
  const moving = topic !== undefined || channelId !== undefined;
  if (channel && !moving) checkTopicsPolicy(realm, channel, message.topic);

  // Checks and rendering before the write: a refused move or a bad body writes nothing.
  const prepared: PreparedMove | null = moving
    ? prepareMove(
        state,
        actor,
        message,
        {
          ...(topic !== undefined ? { topic } : {}),
          ...(channelId !== undefined ? { channelId } : {}),
          propagateMode,
          sendNotificationToOldThread: input.sendNotificationToOldThread ?? false,
          sendNotificationToNewThread: input.sendNotificationToNewThread ?? true,
        },
        now,
      )
    : null;
  // A topic naming the current one and the message's own channel move nothing (see move-messages).
  if (moving && prepared === null && input.content === undefined) throw new BadRequestError("Nothing to change");
  const edit: PreparedContent | null = input.content === undefined ? null : prepareContent(state, actor, input.content);
  // Zulip's check_update_message: a wildcard mention in the new content is checked for the message's sender.
  if (edit !== null && message.recipient.type === "channel") {
    const channel = state.channels.get(message.recipient.channelId);
    const sender = state.users.get(message.senderId);
    if (channel && sender) checkWildcardMention(state, sender, channel, message.topic, edit.rendered);
  }
  return { actor, message, channel, now, prepared, edit };
}

/** The write of a checked request; `staged`, the move's rewrites staged for it (only without a content edit). */
function writeUpdate(state: StoreState, checked: CheckedUpdate, staged: StagedRewrites | null): UpdateMessageResult {
  const { actor, message, channel, now, prepared, edit } = checked;
  return state.write((ctx) => {
    const entry: { userId: number; timestamp: number; prevContent?: string; prevRenderedContent?: string } = {
      userId: actor.id,
      timestamp: now,
    };
    let target = message;
    let detached: readonly Attachment[] = [];
    let contentEdit: ContentEdit | null = null;
    let mentionsAfter: ((userId: number) => KnownRow["mentions"]) | null = null;
    if (edit !== null) {
      entry.prevContent = message.content;
      entry.prevRenderedContent = message.renderedContent;
      const stored = storeContentEdit(state, ctx, actor, message, channel ?? null, edit, prepared ? null : entry, now);
      target = stored.message;
      detached = stored.detached;
      // A move may change topic wildcard mentions after this: then the flags are read.
      if (prepared === null) mentionsAfter = stored.mentionsAfter;
      contentEdit = {
        origContent: message.content,
        origRenderedContent: message.renderedContent,
        content: target.content,
        renderedContent: target.renderedContent,
        isMeMessage: target.isMeMessage,
      };
    }
    // The move (when asked) stores the target's location and the edit's one history entry.
    const moved: MoveResult | null =
      prepared === null ? null : writeMove(state, ctx, prepared, target, entry, edit === null ? staged : null);
    const messageIds = moved?.messageIds ?? [message.id];
    ctx.emit(
      {
        type: "update_message",
        realmId: message.realmId,
        userId: actor.id,
        editTimestamp: now,
        messageId: message.id,
        messageIds,
        channelId: message.recipient.type === "channel" ? message.recipient.channelId : null,
        content: contentEdit,
        move: moved === null ? null : moveOf(moved),
        flagsFor: recipientFlags(state, message.id, message.realmId, mentionsAfter),
      },
      () => (moved === null ? editAudience(state, message.id) : moved.audience),
    );
    // Notification Bot's notices follow the event, as in Zulip.
    moved?.writeNotices();
    return { messageIds, detachedUploads: detached };
  });
}

/**
 * Zulip's validate_user_can_edit_message: the realm allows edits, the actor sent it, in
 * time. Edit typing notifications check the same with no grace (`graceSeconds` 0).
 */
export function checkContentEditAllowed(
  actor: User,
  message: Message,
  policy: MessagePolicy,
  now: number,
  graceSeconds = EDIT_LIMIT_GRACE_SECONDS,
): void {
  if (!policy.allowMessageEditing) throw new BadRequestError("Your organization has turned off message editing");
  if (message.senderId !== actor.id) throw new BadRequestError("You don't have permission to edit this message");
  const limit = policy.messageContentEditLimitSeconds;
  if (limit !== null && pastLimit(limit + graceSeconds, message.dateSent, now))
    throw new BadRequestError("The time limit for editing this message has passed");
}

/** Whether a topic as sent names the message's topic (Zulip then treats it as not sent). */
function sameTopic(realm: Realm, raw: string, current: string): boolean {
  const topic = raw.trim();
  const empty =
    topic === "" || topic === GENERAL_CHAT || topic === "(no topic)" || topic === realm.emptyTopicDisplayName;
  return empty ? current === "" : topic === current;
}

/** Zulip's validate_message_edit_payload, in its order (the topic's own checks are the move's). */
function checkPayload(
  message: Message,
  input: UpdateMessageInput,
  topic: string | undefined,
  propagateMode: PropagateMode,
): void {
  const { content, channelId } = input;
  if (topic === undefined && content === undefined && channelId === undefined)
    throw new BadRequestError("Nothing to change");
  if (message.recipient.type === "direct") {
    if (channelId !== undefined) throw new BadRequestError("Direct messages cannot be moved to channels.");
    if (topic !== undefined) throw new BadRequestError("Direct messages cannot have topics.");
  }
  if (propagateMode !== "change_one" && topic === undefined && channelId === undefined)
    throw new BadRequestError("Invalid propagate_mode without topic edit");
  const trimmed = topic?.trim();
  if (trimmed === RESOLVED_TOPIC_PREFIX.trim() || trimmed === `${RESOLVED_TOPIC_PREFIX}${GENERAL_CHAT}`)
    throw new BadRequestError("General chat cannot be marked as resolved");
  if (content !== undefined && channelId !== undefined)
    throw new BadRequestError("Cannot change message content while changing channel");
  // Zulip's is_widget_message: any submessage makes the content fixed.
  if (content !== undefined && (message.submessages?.length ?? 0) > 0)
    throw new BadRequestError("Widgets cannot be edited.");
  if (input.prevContentSha256 !== undefined && input.prevContentSha256 !== sha256Hex(message.content))
    throw new ExpectationMismatchError("prev_content_sha256");
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * Zulip applies the channel's topics policy to every edit, not only to moves: in a
 * channel that now allows only the general chat, a message in a named topic cannot be
 * edited until it is moved there. (A move checks its target itself.)
 */
function checkTopicsPolicy(realm: Realm, channel: Channel, topic: string): void {
  const policy = channel.topicsPolicy === "inherit" ? realm.topicsPolicy : channel.topicsPolicy;
  if (policy === "empty_topic_only" && topic !== "")
    throw new BadRequestError("Only the general chat topic is allowed in this channel.");
}

function prepareContent(state: StoreState, sender: User, raw: string): PreparedContent {
  const content = normalizeContent(raw.trimEnd() === "" ? "(deleted)" : raw);
  return { content, rendered: state.renderer(content, renderContextFor(state, sender)) };
}

/**
 * Stores the new version of the message (with `entry` prepended to its history unless
 * a move adds the entry) and everything that follows from its content: uploads, the
 * per-user mention bits and the notifications of newly mentioned users.
 */
function storeContentEdit(
  state: StoreState,
  ctx: WriteContext,
  sender: User,
  before: Message,
  channel: Channel | null,
  edit: PreparedContent,
  entry: EditHistoryEntry | null,
  now: number,
): { message: Message; detached: readonly Attachment[]; mentionsAfter: (userId: number) => KnownRow["mentions"] } {
  const { rendered } = edit;
  const failure = rendered.failure;
  if (failure !== undefined) ctx.afterCommit(() => state.reportRenderFailure({ messageId: before.id, failure }));
  const uploads = reclaimAttachments(state, ctx, before, sender, rendered.uploadPathIds);
  const after: Message = {
    ...before,
    content: edit.content,
    renderedContent: rendered.html,
    isMeMessage: rendered.isMeMessage,
    hasLink: rendered.hasLink,
    hasImage: rendered.hasImage,
    hasAttachment: uploads.hasAttachment,
    mentionedUserIds: [...rendered.mentionedUserIds],
    mentionedGroupIds: [...rendered.mentionedGroupIds],
    wildcard: rendered.wildcard,
    // Zulip keeps the history newest first.
    editHistory: entry === null ? before.editHistory : [entry, ...(before.editHistory ?? [])],
    lastEditTimestamp: now,
  };
  // As stored (naming its topic's registry row): a move in this write starts from it.
  const stored = rewriteMessages(state, ctx, [{ before, after }])[0] ?? after;
  const mentions = rewriteMentionBits(state, ctx, before, after);
  rewriteAlertWordBits(state, ctx, before, after);
  if (channel !== null && after.recipient.type === "channel") {
    enqueueEditPushes(state, ctx, after, channel, mentions.before, mentions.after);
    // Under a channel-wide wildcard before, every receiver counted as mentioned: the edit emails nobody
    // (said here so that the candidates' check, stored for later writes, need not ask each who received it).
    const candidates =
      before.wildcard === "stream"
        ? []
        : after.wildcard === "stream"
          ? (state.subscribers.get(channel.id) ?? [])
          : mentions.mentionedAfter();
    enqueueEditMissedEmails(state, ctx, after, channel, candidates, mentions.before, mentions.after);
  }
  return { message: stored, detached: uploads.detached, mentionsAfter: mentions.after };
}

/**
 * The user and flag of a per-user flag key (`u:<userId>:<flag>`, key.userFlag), or null.
 * Read without a regular expression: one used only by edits ran cold in each of them, ~15 µs
 * of a PATCH in a profile of bench:peer's edits (its few keys parse in well under 1 µs).
 */
function userFlagOfKey(k: string): { readonly userId: number; readonly flag: string } | null {
  if (!k.startsWith("u:")) return null;
  const colon = k.indexOf(":", 2);
  const userId = colon > 2 ? Number(k.slice(2, colon)) : NaN;
  return Number.isSafeInteger(userId) && userId >= 0 ? { userId, flag: k.slice(colon + 1) } : null;
}

/**
 * Zulip's update_user_message_flags for has_alert_word: after a content edit the flag
 * says whether the new content holds one of the user's words now. The users holding it
 * before are read among the flag's few holders.
 */
function rewriteAlertWordBits(state: StoreState, ctx: WriteContext, before: Message, after: Message): void {
  const alerted = new Set(alertedReceivers(state, after.realmId, after.content, receiverCheck(state, after, null)));
  const changed: number[] = [];
  // Copied out, not iterated: roaring's iterator costs ~20 µs to set up, empty or not (an edit's few holders).
  for (const userId of state.bitmaps.get(key.userFlagHolders("has_alert_word")).toUint32Array()) {
    if (alerted.has(userId) || !userFlagHas(state.bitmaps, userId, "has_alert_word", before.id)) continue;
    state.bitmaps.removeMany(key.userFlag(userId, "has_alert_word"), [before.id]);
    changed.push(userId);
  }
  for (const userId of alerted) {
    if (userFlagHas(state.bitmaps, userId, "has_alert_word", before.id)) continue;
    state.bitmaps.add(key.userFlag(userId, "has_alert_word"), after.id);
    changed.push(userId);
  }
  for (const userId of changed) ctx.changed({ kind: "flags", userId, messageIds: [before.id] });
}

/** The per-user mention bit keys a version of the message sets (writeMentionFlags, as send and verify). */
function derivedMentionKeys(
  state: StoreState,
  message: Message,
  groups: boolean,
  historicalRows?: ReadonlySet<number>,
): Set<string> {
  const keys = new Set<string>();
  writeMentionFlags(state, message, { add: (k) => keys.add(k) }, { groups, ...(historicalRows && { historicalRows }) });
  return keys;
}

/**
 * Users holding a historical row for a channel message (they read or starred it without
 * having received it). Only the few users listed as ever holding one are asked.
 */
function historicalRowUsers(state: StoreState, message: Message): Set<number> {
  const out = new Set<number>();
  if (message.recipient.type !== "channel") return out;
  for (const userId of state.bitmaps.get(key.userFlagHolders("historical")).toUint32Array()) {
    if (userFlagHas(state.bitmaps, userId, "historical", message.id) && !receivedAtSend(state, userId, message))
      out.add(userId);
  }
  return out;
}

/**
 * Mention bits of historical rows as stored: the row may have been created after the
 * last edit (with no mention flags, as Zulip creates it), so they are read, not derived.
 */
function storedHistoricalMentionKeys(state: StoreState, message: Message, users: ReadonlySet<number>): Set<string> {
  const keys = new Set<string>();
  for (const userId of users)
    for (const flag of MENTION_FLAGS)
      if (userFlagHas(state.bitmaps, userId, flag, message.id)) keys.add(key.userFlag(userId, flag));
  return keys;
}

/**
 * group_mentioned bits as stored: they follow group membership at send, which may have
 * changed since, so the old ones are read, not derived. Only receivers can have one.
 */
function storedGroupMentionKeys(state: StoreState, message: Message): Set<string> {
  const keys = new Set<string>();
  if (message.mentionedGroupIds.length === 0) return keys;
  for (const userId of state.usersOfRealm(message.realmId)) {
    if (!receivedAtSend(state, userId, message)) continue;
    if (userFlagHas(state.bitmaps, userId, "group_mentioned", message.id))
      keys.add(key.userFlag(userId, "group_mentioned"));
  }
  return keys;
}

/**
 * Moves the message's per-user mention bits from the old version's to the new one's,
 * and names the users whose flags changed in the write's change set. Returns who was
 * mentioned before (any mention flag, the stream wildcard included) and each user's
 * personal mention flags after, for the notifications.
 */
function rewriteMentionBits(
  state: StoreState,
  ctx: WriteContext,
  before: Message,
  after: Message,
): {
  before: (userId: number) => boolean;
  after: (userId: number) => NonNullable<KnownRow["mentions"]>;
  /** The users with a personal mention flag after the edit. */
  mentionedAfter: () => Iterable<number>;
} {
  // Zulip's update_user_message_flags sets the flags of every row, historical ones too.
  const historical = historicalRowUsers(state, before);
  const old = derivedMentionKeys(state, before, false);
  for (const k of storedGroupMentionKeys(state, before)) old.add(k);
  for (const k of storedHistoricalMentionKeys(state, before, historical)) old.add(k);
  const next = derivedMentionKeys(state, after, true, historical);
  const changedUsers = new Set<number>();
  const userOf = (k: string) => userFlagOfKey(k)?.userId ?? NaN;
  for (const k of old)
    if (!next.has(k)) {
      state.bitmaps.removeMany(k, [before.id]);
      changedUsers.add(userOf(k));
    }
  for (const k of next)
    if (!old.has(k)) {
      state.bitmaps.add(k, after.id);
      changedUsers.add(userOf(k));
    }
  for (const userId of changedUsers) ctx.changed({ kind: "flags", userId, messageIds: [before.id] });
  const mentionedBefore = mentionFlagsByUser(old);
  const mentionedAfter = mentionFlagsByUser(next);
  return {
    before: (userId) =>
      mentionedBefore.has(userId) || (before.wildcard === "stream" && receivedAtSend(state, userId, before)),
    // Asked for every recipient of the event: one lookup, the few mentioned users listed once.
    after: (userId) => mentionedAfter.get(userId) ?? NO_MENTIONS,
    mentionedAfter: () => mentionedAfter.keys(),
  };
}

type MentionFlag = NonNullable<KnownRow["mentions"]>[number];
const MENTION_FLAGS: readonly MentionFlag[] = ["mentioned", "group_mentioned", "topic_wildcard_mentioned"];
const NO_MENTIONS: readonly MentionFlag[] = Object.freeze([]);

/** Each user's personal mention flags among a version's mention bit keys, in MENTION_FLAGS order. */
function mentionFlagsByUser(keys: ReadonlySet<string>): Map<number, MentionFlag[]> {
  const out = new Map<number, MentionFlag[]>();
  for (const k of keys) {
    const parsed = userFlagOfKey(k);
    const flag = MENTION_FLAGS.find((f) => f === parsed?.flag);
    if (!parsed || flag === undefined) continue;
    const { userId } = parsed;
    const flags = out.get(userId) ?? [];
    flags.push(flag);
    out.set(userId, flags);
  }
  for (const flags of out.values()) flags.sort((a, b) => MENTION_FLAGS.indexOf(a) - MENTION_FLAGS.indexOf(b));
  return out;
}

function moveOf(moved: MoveResult): MessageMove {
  return {
    origTopic: moved.origTopic,
    ...(moved.newTopic !== undefined ? { newTopic: moved.newTopic } : {}),
    ...(moved.newChannelId !== undefined ? { newChannelId: moved.newChannelId } : {}),
    propagateMode: moved.propagateMode,
  };
}

/**
 * Who hears of a content edit (Zulip's do_update_message): every user with a row for the
 * message (received at send, or a historical row), and in a channel whose history is
 * shared with subscribers, its current subscribers too. Non-subscribers who merely read
 * a public channel are not told, as in Zulip. The realm's users are the candidates, so
 * delivery walks whichever is smaller, them or the users with event queues.
 */
function editAudience(state: StoreState, messageId: number): Audience {
  const message = getMessageRecord(state.tables, messageId);
  // A direct message's rows are its participants': no need to ask every queue.
  if (message?.recipient.type === "direct") {
    const members = state.conversations.get(message.recipient.conversationId)?.userIds ?? [];
    return usersAudience(members.filter((id) => state.users.get(id)?.isActive === true));
  }
  const channel = message?.recipient.type === "channel" ? state.channels.get(message.recipient.channelId) : undefined;
  const sharedWith = channel?.historyPublicToSubscribers === true ? state.subscribers.get(channel.id) : undefined;
  return realmAudience(
    state,
    message?.realmId ?? -1,
    // Members first: a set lookup answers for nearly everyone, the row needs bitmap reads.
    (user) => message !== undefined && (sharedWith?.has(user.id) === true || hasRow(state, user.id, message)),
  );
}

/**
 * Each recipient's flags for the target after the edit, read at delivery (memoized per
 * user: a queue's variant and its rendering both ask). Subscribers without a row get
 * ["read"], as Zulip sends them. `mentions`: each user's mention flags as the content
 * edit just wrote them (null when a move may have changed them since).
 */
function recipientFlags(
  state: StoreState,
  messageId: number,
  realmId: number,
  mentions: ((userId: number) => KnownRow["mentions"]) | null,
): (userId: number) => readonly ApiFlag[] {
  const memo = new Map<number, readonly ApiFlag[]>();
  // Read once, after the commit (delivery runs then): a move changes where it lives.
  let message: Message | undefined | null = null;
  return (userId) => {
    let flags = memo.get(userId);
    if (flags === undefined) {
      message ??= getMessageRecord(state.tables, messageId);
      const received = message !== undefined && receivedAtSend(state, userId, message);
      flags =
        message === undefined || (!received && !hasRow(state, userId, message))
          ? NO_ROW
          : rowFlags(state, userId, realmId, messageId, {
              received,
              streamWildcard: message.wildcard === "stream",
              ...(mentions !== null ? { mentions: mentions(userId) } : {}),
            });
      memo.set(userId, flags);
    }
    return flags;
  };
}

/** What Zulip tells subscribers without a row for the message. */
const NO_ROW: readonly ApiFlag[] = Object.freeze(["read"]);
