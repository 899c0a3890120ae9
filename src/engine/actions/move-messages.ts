/**
 * @module actions/move-messages
 * Moving messages to another topic and/or channel (Zulip's topic and stream_id edits,
 * with propagate_mode), resolving and unresolving topics.
 *
 * Contract with actions/update-message (the PATCH orchestrator): prepareMove checks
 * everything and writes nothing; writeMove stores the move inside the orchestrator's
 * write, so an edit of content and topic together is one transaction and one
 * update_message event, built by the orchestrator from the MoveResult; the orchestrator
 * then calls MoveResult.writeNotices in the same write, so Notification Bot's messages
 * follow the update_message event as in Zulip.
 *
 * What moves: change_one the message; change_later it and the later messages of its
 * topic; change_all the whole topic (topics match case-insensitively). Within a channel
 * every such message moves, readable by the mover or not, so that topics stay together;
 * to another channel only those the mover can read (Zulip's rule: moving must not give
 * access). Who may read them afterwards is actions/move-rows; users' topic policies
 * follow as actions/move-topic-policies says.
 *
 * Deliberate deviations: a `stream_id` naming the message's own channel is no channel
 * change (Zulip would delete the rows of the channel's former members); a case-only
 * rename keeps users' policies (Zulip resets them); notices are in English.
 */
import {
  canAccessChannelContent,
  canAccessChannelHistory,
  hasRow,
  isAdmin,
  isAllowedBy,
  isSubscribed,
} from "../access.js";
import { BadRequestError, MessageMoveError } from "../errors.js";
import { realmAudience, usersAudience } from "../events/audience.js";
import type { Audience } from "../events/types.js";
import { EMPTY, RoaringBitmap32, valueRange, type Bitmap, type ReadonlyBitmap } from "../index/bitmap-store.js";
import { key } from "../index/keys.js";
import { codePointPrefix, exceedsCodePoints } from "../limits.js";
import { pastLimit } from "../settings/message-policy.js";
import type { StoreState } from "../state.js";
import { getMessageRecord, getMessageRecords, getStoredMessageRecord } from "../storage/message-records.js";
import {
  ROLE,
  type Channel,
  type EditHistoryEntry,
  type Message,
  type Realm,
  type TopicRename,
  type User,
} from "../types.js";
import type { WriteContext } from "../write-coordinator.js";
import { channelPermission } from "./channels.js";
import { relocateTopic, rewriteMessages, type MessageRewrite, type RewritePlan } from "./message-rewrite.js";
import { renameTopicRows, topicByReference } from "./topic-registry.js";
import { prerenderMoveNotices, writeMoveNotices, type MoveNotices, type NoticeRenders } from "./move-notices.js";
import { planChannelMoveRows, planChannelMoveRowsInSteps, rowsAmong, type ChannelMoveRows } from "./move-rows.js";
import { applyInitiationPolicy, migrateTopicPolicies, topicPolicies } from "./move-topic-policies.js";
import { realmMessagePolicy, type MessagePolicy } from "./realm-message-policy.js";
import { MAX_TOPIC_LENGTH, RESOLVED_TOPIC_PREFIX } from "./send-message.js";

export type PropagateMode = "change_one" | "change_later" | "change_all";

export interface MoveRequest {
  /** New topic (as sent by the client, not yet trimmed or validated); absent: keep. */
  readonly topic?: string;
  /** New channel; absent: keep. */
  readonly channelId?: number;
  readonly propagateMode: PropagateMode;
  readonly sendNotificationToOldThread: boolean;
  readonly sendNotificationToNewThread: boolean;
}

/** A checked move, ready to write. Opaque to the orchestrator. */
export interface PreparedMove {
  /** Every message to move, ascending (the target included). */
  readonly messageIds: readonly number[];
  readonly actorId: number;
  readonly messageId: number;
  readonly fromChannelId: number;
  readonly toChannelId: number;
  readonly fromTopic: string;
  readonly toTopic: string;
  readonly resolve: "resolved" | "unresolved" | null;
  readonly propagateMode: PropagateMode;
  readonly sendNotificationToOldThread: boolean;
  readonly sendNotificationToNewThread: boolean;
}

/** What the orchestrator needs for the update_message event and its answer. */
export interface MoveResult {
  /** Every moved message, ascending. */
  readonly messageIds: readonly number[];
  readonly origChannelId: number;
  /** Absent when the channel did not change. */
  readonly newChannelId?: number;
  readonly origTopic: string;
  /** Absent when the topic did not change. */
  readonly newTopic?: string;
  readonly propagateMode: PropagateMode;
  /**
   * Who receives the update_message event (Zulip's audience): the users who had a row
   * for the target and keep it, and, when the old channel's history is shared, the
   * current members of both channels who may read the messages (with ["read"] when they
   * have no row). Decided at delivery for users of neither channel, whose rows the move
   * did not change.
   */
  readonly audience: Audience;
  /** Users who can no longer read the moved messages: writeMove sent them a delete_message instead. */
  readonly losingAccess: readonly number[];
  /** Stores Notification Bot's notices; call in the same write, after emitting the event. */
  writeNotices(): void;
}

/** Zulip's edit_limit_buffer (seconds past a limit a request is still accepted). */
const LIMIT_GRACE_SECONDS = 20;
/** Zulip's Message.EMPTY_TOPIC_FALLBACK_NAME. */
const GENERAL_CHAT = "general chat";
const TRUNCATION = "...";

/**
 * A topic as sent, normalised as a move takes it: trimmed, and the empty topic under any
 * of its names ("general chat", the realm's display name, "(no topic)") is "".
 */
export function normalizeMoveTopic(realm: Realm, raw: string): string {
  const topic = raw.trim();
  return topic === GENERAL_CHAT || topic === "(no topic)" || topic === realm.emptyTopicDisplayName ? "" : topic;
}

/** Zulip's check_stream_topic: control characters, lone surrogates and non-characters are refused. */
function checkTopicCharacters(topic: string): void {
  let position = 0;
  for (const ch of topic) {
    position++;
    const code = ch.codePointAt(0) ?? 0;
    const control = code < 0x20 || (code >= 0x7f && code <= 0x9f);
    const surrogate = code >= 0xd800 && code <= 0xdfff;
    const nonCharacter = (code >= 0xfdd0 && code <= 0xfdef) || (code & 0xfffe) === 0xfffe;
    if (control || surrogate || nonCharacter)
      throw new BadRequestError(`Invalid character in topic, at position ${position}!`);
  }
}

/** Zulip's truncate_topic: 60 characters, the last three "..." when cut. */
function truncateTopic(topic: string): string {
  return exceedsCodePoints(topic, MAX_TOPIC_LENGTH)
    ? codePointPrefix(topic, MAX_TOPIC_LENGTH - TRUNCATION.length) + TRUNCATION
    : topic;
}

/** Python's str.lstrip("✔ "): every leading check mark and space. */
function stripResolvedPrefix(topic: string): string {
  return topic.replace(/^[✔ ]+/u, "");
}

/** Zulip's build_message_edit_request: does the rename resolve or unresolve the topic? */
function resolveToggle(oldTopic: string, newTopic: string, sent: string): "resolved" | "unresolved" | null {
  const p = RESOLVED_TOPIC_PREFIX;
  if (newTopic.startsWith(p) && !oldTopic.startsWith(p) && sent.slice(p.length) === oldTopic) return "resolved";
  if (oldTopic.startsWith(p) && !newTopic.startsWith(p) && stripResolvedPrefix(oldTopic) === newTopic)
    return "unresolved";
  return null;
}

/**
 * Zulip's topic_resolve_toggled, on a history entry (no pre-truncation name there):
 * such a rename does not count as a move for last_moved_timestamp.
 */
export function historyResolveToggled(topic: string, prevTopic: string): boolean {
  const p = RESOLVED_TOPIC_PREFIX;
  if (prevTopic.startsWith(p) && !topic.startsWith(p)) return prevTopic.slice(p.length) === topic;
  if (topic.startsWith(p) && !prevTopic.startsWith(p)) {
    if ([...prevTopic].length <= MAX_TOPIC_LENGTH - p.length) return topic.slice(p.length) === prevTopic;
    if (topic.endsWith(TRUNCATION)) return prevTopic.startsWith(topic.slice(p.length, -TRUNCATION.length));
  }
  return false;
}

function isModerator(user: User): boolean {
  return user.role <= ROLE.MODERATOR;
}

/** Zulip's can_administer_accessible_channel (a setting guests are never in). */
function administersChannel(state: StoreState, user: User, channel: Channel): boolean {
  return (
    user.role !== ROLE.GUEST && isAllowedBy(state, channelPermission(state, channel, "canAdministerChannelGroup"), user)
  );
}

/** Zulip's can_move_messages_within_channel. */
function movesWithinChannel(state: StoreState, user: User, channel: Channel): boolean {
  if (isAdmin(user) || administersChannel(state, user, channel)) return true;
  return isAllowedBy(state, channelPermission(state, channel, "canMoveMessagesWithinChannelGroup"), user);
}

/** Zulip's can_edit_topic: the realm's setting, or either channel's. */
function canEditTopic(state: StoreState, user: User, policy: MessagePolicy, from: Channel, to: Channel): boolean {
  if (isAllowedBy(state, policy.canMoveMessagesBetweenTopicsGroup, user)) return true;
  if (movesWithinChannel(state, user, from)) return true;
  return from.id !== to.id && movesWithinChannel(state, user, to);
}

/** Zulip's can_resolve_topics: the realm's setting, or either channel's (no admin shortcut). */
function canResolveTopics(state: StoreState, user: User, policy: MessagePolicy, from: Channel, to: Channel): boolean {
  if (isAllowedBy(state, policy.canResolveTopicsGroup, user)) return true;
  if (isAllowedBy(state, channelPermission(state, from, "canResolveTopicsGroup"), user)) return true;
  return from.id !== to.id && isAllowedBy(state, channelPermission(state, to, "canResolveTopicsGroup"), user);
}

/** Zulip's can_move_messages_out_of_channel (the realm's setting excludes guests). */
function canMoveOutOfChannel(state: StoreState, user: User, policy: MessagePolicy, channel: Channel): boolean {
  if (isAdmin(user)) return true;
  if (user.role !== ROLE.GUEST && isAllowedBy(state, policy.canMoveMessagesBetweenChannelsGroup, user)) return true;
  if (administersChannel(state, user, channel)) return true;
  return isAllowedBy(state, channelPermission(state, channel, "canMoveMessagesOutOfChannelGroup"), user);
}

/** Zulip's access_stream_by_id_for_message: an unarchived channel whose content the user may read. */
function targetChannel(state: StoreState, user: User, channelId: number): Channel {
  const channel = state.channels.get(channelId);
  if (
    !channel ||
    channel.realmId !== user.realmId ||
    channel.isArchived ||
    !canAccessChannelContent(state, user, channel)
  )
    throw new BadRequestError("Invalid channel ID");
  return channel;
}

/** The channel's topics policy, with the realm's for "inherit". */
function topicsPolicyOf(realm: Realm, channel: Channel): Channel["topicsPolicy"] {
  return channel.topicsPolicy === "inherit" ? realm.topicsPolicy : channel.topicsPolicy;
}

/**
 * The part of `ids` (messages of `channel`) the user may read (Zulip's
 * bulk_access_stream_messages_query): all of a public channel for non-guests; none
 * without a subscription; of protected history, those they have a row for.
 */
export function accessibleAmong(state: StoreState, user: User, channel: Channel, ids: ReadonlyBitmap): ReadonlyBitmap {
  if (!channel.inviteOnly && user.role !== ROLE.GUEST) return ids;
  if (!isSubscribed(state, user.id, channel.id)) return EMPTY;
  if (channel.historyPublicToSubscribers) return ids;
  const sent = RoaringBitmap32.and(state.bitmaps.get(key.sender(user.id)), ids);
  return rowsAmong(state, user.id, channel.id, ids, sent);
}

/**
 * Zulip's check_time_limit_for_change_all_propagate_mode: every message of the topic the
 * mover may see must be within the stricter applicable move limit (+20 s). Message IDs
 * grow with their send times, so the first allowed one is found by bisection.
 */
function checkChangeAllLimit(
  state: StoreState,
  actor: User,
  policy: MessagePolicy,
  from: Channel,
  topic: string,
  topicChanged: boolean,
  channelChanged: boolean,
  now: number,
): void {
  const limits: number[] = [];
  if (topicChanged && policy.moveMessagesWithinStreamLimitSeconds !== null)
    limits.push(policy.moveMessagesWithinStreamLimitSeconds + LIMIT_GRACE_SECONDS);
  if (channelChanged && policy.moveMessagesBetweenStreamsLimitSeconds !== null)
    limits.push(policy.moveMessagesBetweenStreamsLimitSeconds + LIMIT_GRACE_SECONDS);
  if (limits.length === 0) return;
  const oldest = now - Math.min(...limits);
  const all = state.bitmaps.get(key.channelTopic(from.id, topic));
  const visible = canAccessChannelHistory(state, actor, from)
    ? all
    : rowsAmong(state, actor.id, from.id, all, RoaringBitmap32.and(state.bitmaps.get(key.sender(actor.id)), all));
  const ids = visible.toUint32Array();
  const dateOf = (i: number) => getMessageRecord(state.tables, ids[i]!)?.dateSent ?? 0;
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (dateOf(mid) > oldest) hi = mid;
    else lo = mid + 1;
  }
  if (lo === 0 || lo === ids.length) return;
  throw new MessageMoveError(ids[lo]!, ids.length, ids.length - lo);
}

/** Zulip's check_for_can_create_topic_group_violation; a bot may use its owner's permission. */
function checkCanCreateTopic(state: StoreState, user: User, channel: Channel, topic: string): void {
  if (!state.bitmaps.isEmpty(key.channelTopic(channel.id, topic))) return;
  const group = channelPermission(state, channel, "canCreateTopicGroup");
  if (isAllowedBy(state, group, user)) return;
  const owner = user.isBot && user.botOwnerId !== null ? state.users.get(user.botOwnerId) : undefined;
  if (owner && isAllowedBy(state, group, owner)) return;
  throw new BadRequestError("You do not have permission to create new topics in this channel.");
}

/**
 * Checks a move of `message` (and, by propagate mode, others) by `actor`: topic and
 * channel validity, every realm and channel permission and time limit, in Zulip's
 * order. Throws the engine error Zulip's answer maps from; writes nothing. Null when
 * the request moves nothing (the topic is the current one and no other channel is named).
 */
export function prepareMove(
  state: StoreState,
  actor: User,
  message: Message,
  request: MoveRequest,
  now: number,
): PreparedMove | null {
  if (message.recipient.type !== "channel") {
    if (request.channelId !== undefined) throw new BadRequestError("Direct messages cannot be moved to channels.");
    throw new BadRequestError("Direct messages cannot have topics.");
  }
  const realm = state.realms.get(message.realmId);
  const from = state.channels.get(message.recipient.channelId);
  if (!realm || !from) throw new BadRequestError("Invalid message(s)");
  const sent = request.topic === undefined ? undefined : normalizeMoveTopic(realm, request.topic);
  const topicChanged = sent !== undefined && sent !== message.topic;
  const channelChanged = request.channelId !== undefined && request.channelId !== from.id;
  if (!topicChanged && !channelChanged) return null;
  if (topicChanged) {
    if (sent === RESOLVED_TOPIC_PREFIX.trim() || sent === `${RESOLVED_TOPIC_PREFIX}${GENERAL_CHAT}`)
      throw new BadRequestError("General chat cannot be marked as resolved");
    checkTopicCharacters(sent);
  }
  const toTopic = topicChanged ? truncateTopic(sent) : message.topic;
  const resolve = topicChanged ? resolveToggle(message.topic, toTopic, sent) : null;
  const to = channelChanged ? targetChannel(state, actor, request.channelId!) : from;

  const topicsPolicy = topicsPolicyOf(realm, to);
  if (toTopic === "" && topicsPolicy === "disable_empty_topic")
    throw new BadRequestError(`Sending messages to the ${realm.emptyTopicDisplayName} is not allowed in this channel.`);
  if (toTopic !== "" && topicsPolicy === "empty_topic_only")
    throw new BadRequestError(`Only the ${realm.emptyTopicDisplayName} topic is allowed in this channel.`);

  const policy = realmMessagePolicy(state, realm.id);
  if (topicChanged) {
    if (resolve !== null) {
      if (!canResolveTopics(state, actor, policy, from, to))
        throw new BadRequestError("You don't have permission to resolve topics in this channel.");
    } else {
      if (!canEditTopic(state, actor, policy, from, to))
        throw new BadRequestError("You don't have permission to edit this message");
      const limit = policy.moveMessagesWithinStreamLimitSeconds;
      if (limit !== null && !isModerator(actor) && pastLimit(limit + LIMIT_GRACE_SECONDS, message.dateSent, now))
        throw new BadRequestError("The time limit for editing this message's topic has passed.");
    }
  }
  if (channelChanged) {
    if (!canMoveOutOfChannel(state, actor, policy, from))
      throw new BadRequestError("You don't have permission to move this message");
    if (!isAllowedBy(state, channelPermission(state, to, "canSendMessageGroup"), actor))
      throw new BadRequestError("You do not have permission to post in this channel.");
    const limit = policy.moveMessagesBetweenStreamsLimitSeconds;
    if (limit !== null && !isModerator(actor) && pastLimit(limit + LIMIT_GRACE_SECONDS, message.dateSent, now))
      throw new BadRequestError("The time limit for editing this message's channel has passed");
  }
  if (request.propagateMode === "change_all" && !isModerator(actor) && resolve === null)
    checkChangeAllLimit(state, actor, policy, from, message.topic, topicChanged, channelChanged, now);
  if (resolve === null) checkCanCreateTopic(state, actor, to, toTopic);

  return {
    messageIds: selectMessages(state, actor, message, from, request.propagateMode, channelChanged),
    actorId: actor.id,
    messageId: message.id,
    fromChannelId: from.id,
    toChannelId: to.id,
    fromTopic: message.topic,
    toTopic,
    resolve,
    propagateMode: request.propagateMode,
    sendNotificationToOldThread: request.sendNotificationToOldThread,
    sendNotificationToNewThread: request.sendNotificationToNewThread,
  };
}

/** The messages a move takes (Zulip's update_messages_for_topic_edit), ascending. */
function selectMessages(
  state: StoreState,
  actor: User,
  message: Message,
  from: Channel,
  mode: PropagateMode,
  channelChanged: boolean,
): number[] {
  if (mode === "change_one") return [message.id];
  const topic = state.bitmaps.get(key.channelTopic(from.id, message.topic));
  let ids: ReadonlyBitmap = mode === "change_later" ? valueRange(topic, message.id + 1) : topic;
  if (channelChanged) ids = accessibleAmong(state, actor, from, ids);
  const out = RoaringBitmap32.from(ids);
  out.add(message.id);
  return Array.from(out.toUint32Array());
}

/**
 * A move's records as read and its rewrites planned before its write (actions/move-staging),
 * valid while no write since changed those messages; writeMove then stores them as planned.
 */
export interface StagedRewrites {
  /** The moved messages' records, ascending. */
  readonly records: readonly Message[];
  /** Their IDs. */
  readonly moved: ReadonlyBitmap;
  readonly plan: RewritePlan;
  /** planMoveRows's answer when staging ended. */
  readonly rows: ChannelMoveRows | null;
  /** Notification Bot's notices rendered before the write (null once any write committed since). */
  readonly noticeRenders: NoticeRenders | null;
}

/**
 * Stores a prepared move inside `ctx`'s write. `edited` is the target message as the
 * orchestrator changed it (its content edit, if any), and `historyEntry` the fields of
 * that edit's history entry, so the target gets one entry naming both.
 */
export function writeMove(
  state: StoreState,
  ctx: WriteContext,
  move: PreparedMove,
  edited: Message,
  historyEntry: Partial<EditHistoryEntry>,
  staged: StagedRewrites | null = null,
): MoveResult {
  const actor = state.users.get(move.actorId)!;
  const realm = state.realms.get(actor.realmId)!;
  const from = state.channels.get(move.fromChannelId)!;
  const to = state.channels.get(move.toChannelId)!;
  const topicChanged = move.fromTopic !== move.toTopic;
  const channelChanged = from.id !== to.id;
  const timestamp = historyEntry.timestamp ?? state.now();

  // A whole topic renamed within its channel whose records all name registry rows: the rows are renamed instead.
  const byReference =
    staged === null && historyEntry.prevContent === undefined ? renamedByReference(state, move) : null;
  let records: readonly Message[];
  if (staged !== null) records = staged.records;
  // Not read: a rename by reference needs only their IDs (their senders are asked of the bitmaps).
  else if (byReference !== null) records = [];
  else {
    const read = getMessageRecords(state.tables, move.messageIds);
    // The target as the orchestrator changed it (its content edit, in this write).
    records = read.map((record) => (record.id === edited.id ? edited : record));
  }
  const moved =
    staged?.moved ?? RoaringBitmap32.from(byReference !== null ? move.messageIds : records.map((m) => m.id));
  // Read once: the events, the rename by reference and the answer name the same IDs.
  const movedIds = idsOf(moved);

  // Everything that depends on where the messages were, decided before they move.
  const rows = staged !== null ? staged.rows : planMoveRows(state, from, to, moved, records, edited.id);
  const losingAccess = rows?.losingAccess ?? NOBODY;
  const movedAll =
    move.propagateMode === "change_all" ||
    accessibleAmong(state, actor, from, RoaringBitmap32.andNot(topicBitmap(state, from, move.fromTopic), moved))
      .isEmpty;
  const targetHadMessages = !state.bitmaps.isEmpty(key.channelTopic(to.id, move.toTopic));
  const policiesBefore = movedAll ? topicPolicies(state, from, move.fromTopic) : null;

  if (staged !== null) staged.plan.apply(state, ctx);
  else if (byReference !== null) {
    const rename: TopicRename = {
      userId: move.actorId,
      timestamp,
      prevTopic: move.fromTopic,
      topic: move.toTopic,
      moved: !historyResolveToggled(move.toTopic, move.fromTopic),
    };
    renameTopicRows(state, ctx, byReference, rename);
    relocateTopic(
      state,
      ctx,
      realm.id,
      [from.id, move.fromTopic],
      [to.id, move.toTopic],
      movedIds,
      (id) => getStoredMessageRecord(state.tables, id)?.renderedContent ?? "",
    );
  } else rewriteMessages(state, ctx, moveRewrites(move, records, edited.id, historyEntry, timestamp));
  rows?.apply();
  if (losingAccess.size > 0) {
    // For those who can no longer read them, the messages are gone (Zulip's delete_message,
    // naming where they were).
    ctx.emit(
      {
        type: "delete_message",
        realmId: realm.id,
        messageIds: movedIds,
        channel: { channelId: from.id, topic: move.fromTopic },
      },
      () => usersAudience(losingAccess),
    );
  }

  if (policiesBefore !== null) {
    migrateTopicPolicies(
      state,
      ctx,
      { from, fromTopic: move.fromTopic, to, toTopic: move.toTopic, targetHadMessages, losingAccess },
      policiesBefore,
    );
  } else {
    const sender = state.users.get(edited.senderId);
    const earlier = sender
      ? accessibleAmong(state, sender, to, RoaringBitmap32.andNot(topicBitmap(state, to, move.toTopic), moved))
      : EMPTY;
    applyInitiationPolicy(state, ctx, edited, to, move.toTopic, earlier, losingAccess);
  }

  const followers =
    policiesBefore === null ? null : new Set([...policiesBefore].filter(([, p]) => p === 3).map(([u]) => u));
  // Sorted only when asked (tests): up to every user of the realm.
  let losingAccessSorted: number[] | null = null;
  return {
    messageIds: movedIds,
    origChannelId: from.id,
    ...(channelChanged ? { newChannelId: to.id } : {}),
    origTopic: move.fromTopic,
    ...(topicChanged ? { newTopic: move.toTopic } : {}),
    propagateMode: move.propagateMode,
    audience: moveAudience(state, from, to, edited.id, rows, losingAccess, sentAny(state, records, moved, byReference)),
    get losingAccess() {
      return (losingAccessSorted ??= [...losingAccess].sort((a, b) => a - b));
    },
    writeNotices: () =>
      writeMoveNotices(
        state,
        ctx,
        moveNotices(state, move, { actor, realm, from, to, moved, movedAll, followers }, edited.id, historyEntry),
        staged?.noticeRenders ?? null,
      ),
  };
}

/**
 * The registry rows to rename for a move that renames a whole topic within its channel
 * with no content edit, when every message it takes names one of them (actions/topic-registry);
 * null when the move rewrites records.
 */
function renamedByReference(state: StoreState, move: PreparedMove): number[] | null {
  if (move.fromChannelId !== move.toChannelId || move.fromTopic === move.toTopic) return null;
  if (move.propagateMode !== "change_all") return null;
  const topic = state.bitmaps.get(key.channelTopic(move.fromChannelId, move.fromTopic));
  if (topic.size !== move.messageIds.length) return null;
  return topicByReference(state, move.fromChannelId, move.fromTopic, topic);
}

/** Whether a prepared move (without a content edit) renames its topic by reference: nothing to stage. */
export function movesByReference(state: StoreState, move: PreparedMove): boolean {
  return renamedByReference(state, move) !== null;
}

/** What writeMoveNotices needs to know of a move. */
function moveNotices(
  state: StoreState,
  move: PreparedMove,
  known: Pick<MoveNotices, "actor" | "realm" | "from" | "to" | "moved" | "movedAll" | "followers">,
  targetId: number,
  historyEntry: Partial<EditHistoryEntry>,
): MoveNotices {
  const { actor, to } = known;
  return {
    ...known,
    fromTopic: move.fromTopic,
    toTopic: move.toTopic,
    targetId,
    topicChanged: move.fromTopic !== move.toTopic,
    channelChanged: known.from.id !== to.id,
    contentEdited: historyEntry.prevContent !== undefined,
    resolve: move.resolve,
    sendToOldThread: move.sendNotificationToOldThread,
    sendToNewThread: move.sendNotificationToNewThread,
    visibleInNewTopic: (exclude) =>
      accessibleAmong(state, actor, to, RoaringBitmap32.andNot(topicBitmap(state, to, move.toTopic), exclude)),
  };
}

/**
 * The notices of a staged move (no content edit) rendered before its write, from the
 * state before the move (move-notices' prerenderMoveNotices); empty when a place or
 * the actor is gone.
 */
export function prerenderNotices(state: StoreState, move: PreparedMove, moved: ReadonlyBitmap): NoticeRenders {
  const actor = state.users.get(move.actorId);
  const realm = actor && state.realms.get(actor.realmId);
  const from = state.channels.get(move.fromChannelId);
  const to = state.channels.get(move.toChannelId);
  if (!actor || !realm || !from || !to) return new Map();
  // As writeMove decides it before the messages move.
  const movedAll =
    move.propagateMode === "change_all" ||
    accessibleAmong(state, actor, from, RoaringBitmap32.andNot(topicBitmap(state, from, move.fromTopic), moved))
      .isEmpty;
  const known = { actor, realm, from, to, moved, movedAll, followers: null };
  return prerenderMoveNotices(state, moveNotices(state, move, known, move.messageId, {}));
}

/** Who keeps, gains and loses the rows of messages moved to another channel (null: the channel stays). */
export function planMoveRows(
  state: StoreState,
  from: Channel,
  to: Channel,
  moved: ReadonlyBitmap,
  records: readonly Message[],
  targetId: number,
): ChannelMoveRows | null {
  if (from.id === to.id) return null;
  return planChannelMoveRows(state, from, to, moved, sentBy(records), targetId, movedBefore(records));
}

/** planMoveRows in steps (move-rows' planChannelMoveRowsInSteps), for a staged move's turns. */
export function* planMoveRowsInSteps(
  state: StoreState,
  from: Channel,
  to: Channel,
  moved: ReadonlyBitmap,
  records: readonly Message[],
  targetId: number,
): Generator<void, ChannelMoveRows | null, void> {
  if (from.id === to.id) return null;
  return yield* planChannelMoveRowsInSteps(state, from, to, moved, sentBy(records), targetId, movedBefore(records));
}

/** Whether any of the records was moved between channels before (its history names a previous channel). */
function movedBefore(records: readonly Message[]): boolean {
  return records.some((m) => m.editHistory?.some((e) => e.prevStream !== undefined) ?? false);
}

/**
 * The records of a move as they are to be stored: in their new place, each with a
 * history entry (the target's with `historyEntry`'s fields too).
 */
export function moveRewrites(
  move: PreparedMove,
  records: readonly Message[],
  targetId: number,
  historyEntry: Partial<EditHistoryEntry>,
  timestamp: number,
): MessageRewrite[] {
  const topicChanged = move.fromTopic !== move.toTopic;
  const channelChanged = move.fromChannelId !== move.toChannelId;
  const place: Partial<EditHistoryEntry> = {
    ...(channelChanged ? { prevStream: move.fromChannelId, stream: move.toChannelId } : {}),
    ...(topicChanged ? { prevTopic: move.fromTopic, topic: move.toTopic } : {}),
  };
  const countsAsMove = channelChanged || (topicChanged && !historyResolveToggled(move.toTopic, move.fromTopic));
  return records.map((before) => {
    const entry: EditHistoryEntry =
      before.id === targetId
        ? { userId: move.actorId, timestamp, ...historyEntry, ...place }
        : { userId: move.actorId, timestamp, ...place };
    const after: Message = {
      ...before,
      recipient: { type: "channel", channelId: move.toChannelId },
      topic: move.toTopic,
      // Zulip keeps the history newest first.
      editHistory: [entry, ...(before.editHistory ?? [])],
      lastMovedTimestamp: countsAsMove ? timestamp : before.lastMovedTimestamp,
    };
    return { before, after };
  });
}

const NOBODY: ReadonlySet<number> = new Set();

/** A bitmap's IDs as an array, by index (Array.from iterates a typed array through an iterator: 5,000 results). */
function idsOf(ids: ReadonlyBitmap): number[] {
  const values = ids.toUint32Array();
  const out = new Array<number>(values.length);
  for (let i = 0; i < values.length; i++) out[i] = values[i]!;
  return out;
}

function topicBitmap(state: StoreState, channel: Channel, topic: string): ReadonlyBitmap {
  return state.bitmaps.get(key.channelTopic(channel.id, topic));
}

/** Whether a user sent any of the moved messages: from the records read, or (none read) from the senders' bitmaps. */
function sentAny(
  state: StoreState,
  records: readonly Message[],
  moved: ReadonlyBitmap,
  byReference: readonly number[] | null,
): (userId: number) => boolean {
  if (byReference !== null) return (userId) => state.bitmaps.get(key.sender(userId)).intersects(moved);
  const senders = new Set(records.map((m) => m.senderId));
  return (userId) => senders.has(userId);
}

/** Each sender of the messages, with the IDs they sent. */
function sentBy(records: readonly Message[]): Map<number, Bitmap> {
  // Plain arrays first: one native call per sender, not one per message (5,000 in a topic move).
  const ids = new Map<number, number[]>();
  for (const m of records) {
    const list = ids.get(m.senderId);
    if (list) list.push(m.id);
    else ids.set(m.senderId, [m.id]);
  }
  return new Map([...ids].map(([senderId, list]) => [senderId, RoaringBitmap32.from(list)]));
}

/**
 * Zulip's update_message audience for a move. Row holders of the target keep hearing
 * of it unless the move took their row; with shared history in the old channel, so do
 * the active members of the new channel (but guests who were not members of the old
 * one) and of the old one, except users who lost access.
 * Beyond Zulip: the senders of the moved messages hear of it too. Zulip asks only the
 * target's rows, so a sender who is not a member and sent a later message of a
 * change_later move keeps it in the old topic until they register again (the events
 * oracle found this).
 */
function moveAudience(
  state: StoreState,
  from: Channel,
  to: Channel,
  targetId: number,
  rows: ChannelMoveRows | null,
  losingAccess: ReadonlySet<number>,
  sentOne: (userId: number) => boolean,
): Audience {
  const byMembership = (user: User): boolean => {
    const inFrom = state.subscribers.get(from.id)?.has(user.id) ?? false;
    if (from.id === to.id) return inFrom;
    if (state.subscribers.get(to.id)?.has(user.id) === true) return user.role !== ROLE.GUEST || inFrom;
    return inFrom;
  };
  // The moved target as committed, read once (asked of up to every user of the realm).
  let target: Message | undefined | null = null;
  return realmAudience(state, from.realmId, (user) => {
    // Membership answers for most users without reading their rows.
    if (from.historyPublicToSubscribers && !losingAccess.has(user.id) && byMembership(user)) return true;
    if (rows?.rowLosers.has(user.id) === true) return false;
    if (sentOne(user.id) && !losingAccess.has(user.id)) return true;
    const hadRow = rows?.hadTargetRow(user.id);
    if (hadRow !== undefined) return hadRow;
    target ??= getMessageRecord(state.tables, targetId);
    return target?.recipient.type === "channel" && hasRow(state, user.id, target);
  });
}
