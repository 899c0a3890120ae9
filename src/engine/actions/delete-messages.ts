/**
 * @module actions/delete-messages
 * Deleting messages (Zulip's DELETE /messages/{id}, do_delete_messages) and whole topics
 * (POST /streams/{id}/delete_topic, in atomic batches).
 *
 * A deleted message leaves no trace: its record and every message-level index bit go
 * through rewriteMessages; every reader's per-user bits for it (read, starred, mention
 * flags, historical rows, active notifications) are cleared here; uploads it claimed
 * lose the claim but stay (Zulip keeps them with its archive); a notification showing
 * it gets a `remove`; a channel whose first message it was gets its new first message.
 *
 * Who holds per-user bits for a message is derived, not scanned: the users who received
 * it (subscription intervals, a conversation's members, the sender) may hold any; other
 * readers only through a historical row, so one probe of their historical bitmap decides
 * (BitmapStore.removeStored answers a key without the message by a point read, and
 * remembers it). Read bits are the exception: anyone may hold them (a read purge clears
 * them, in bounded writes, for every user the read holders list). So are messages
 * moved from another channel, whose rows were granted or withdrawn and whose lost rows
 * keep their bits: every user is looked at.
 *
 * The delete_message audience is Zulip's event_recipient_ids_for_action_on_messages,
 * computed in the write before the bits it reads are cleared, plus the acting user.
 */
import { canAccessChannelContent, canChangeMessage, isAdmin, isAllowedBy } from "../access.js";
import { BadRequestError, PermissionDeniedError } from "../errors.js";
import { bitmapAudience, channelViewersAudience, usersAudience } from "../events/audience.js";
import type { Audience } from "../events/types.js";
import { RoaringBitmap32, sliceByRank, type ReadonlyBitmap } from "../index/bitmap-store.js";
import { key, type StoredFlag } from "../index/keys.js";
import { groupedAmong, stripWithdrawnGroups } from "../index/withdrawn-rows.js";
import { exceedsCodePoints } from "../limits.js";
import type { PlanContext } from "../narrow/plan.js";
import { pastLimit } from "../settings/message-policy.js";
import type { StoreState, WriteContext } from "../state.js";
import { getMessageRecord } from "../storage/message-records.js";
import { ROLE, type Attachment, type Channel, type GroupSettingValue, type Message, type User } from "../types.js";
import { uploadSpaceUsed } from "./attachments.js";
import { channelPermission } from "./channels.js";
import { BULK_IDS, rewriteMessages } from "./message-rewrite.js";
import { enqueueDeletedRemovals } from "./push-notifications.js";
import { realmMessagePolicy } from "./realm-message-policy.js";
import { topicPolicies } from "./move-topic-policies.js";
import { indexMessage, MAX_TOPIC_LENGTH } from "./send-message.js";
import { requireActiveUser } from "./users.js";
import { writeTopicPolicy } from "./user-topics.js";

/** Zulip's RETENTION_STREAM_MESSAGE_BATCH_SIZE: messages deleted per transaction of a topic deletion. */
export const DELETE_TOPIC_BATCH_SIZE = 100;
/** The most messages a batch of a topic deletion grows to (see nextTopicBatchSize). */
export const DELETE_TOPIC_MAX_BATCH_SIZE = 1000;
/**
 * The CPU time one batch of a topic deletion should take. Every batch commits durably
 * (an fsync) and repeats work that does not grow with its messages (the channel's
 * subscribers, the audience, the bitmap chunks, the change set): ten batches of
 * Zulip's 100 spent more time on that than on the messages. Well under the 50 ms loop
 * budget: on a loaded machine a batch's wall time is a multiple of its CPU time, and the
 * turn also holds the commit's fsync and whatever GC pause falls in it (bench:peer's delete
 * row measured turns of 18-33 ms CPU against 15 ms, GC pauses up to 13 ms among them, and
 * commits of 5-45 ms wall on a loaded disk).
 */
export const DELETE_TOPIC_BATCH_TARGET_MS = 12;
/**
 * How much larger than the last a batch may be: its cost per message varies with the GC
 * pause that lands in it, and fourfold growth from one quick batch overshot the target twofold.
 */
export const DELETE_TOPIC_BATCH_GROWTH = 2;
/** Zulip's delete_in_topic gives up after 50 s with complete: false; the client calls again. */
export const DELETE_TOPIC_TIME_BUDGET_MS = 50_000;

export const INVALID_MESSAGE = "Invalid message(s)";
export const CANNOT_DELETE = "You don't have permission to delete this message";
export const DELETE_TIME_LIMIT_PASSED = "The time limit for deleting this message has passed";

/**
 * Readers' read bitmaps one write changes at most, by how many messages leave each: a
 * message in a 10,000-user channel was read by 10,000 users, and each read bitmap is
 * its own key: clearing all of them in the deletion's write held the event loop 350 ms
 * (one message) to seconds (a topic's batch). What one write cannot clear is left to a
 * read-bit purge (below), done in further writes before the request answers. Stale
 * read bits are invisible meanwhile: every read of them intersects with sets the
 * deletion already emptied. ~6-10 µs a key for a message or a few, ~30 µs for a thousand.
 * 1,000 for a message: with 2,000, a deletion's own write in a realm whose 10,000 users had
 * read it took 40-55 ms of CPU on a loaded machine (bench/delete-topic.ts), its message's
 * share being 2-4 ms of it.
 */
export function readKeysPerWrite(messages: number): number {
  return messages < 16 ? 1000 : 500;
}

/** Deleted messages whose readers' read bits are not all cleared yet (meta table, in order). */
export interface ReadPurge {
  readonly realmId: number;
  /** Ascending. */
  readonly messageIds: readonly number[];
  /** Users of the realm up to this ID are done. */
  readonly afterUserId: number;
}

const READ_PURGES_KEY = "readPurges";

export function pendingReadPurges(state: StoreState): readonly ReadPurge[] {
  return (state.tables.meta.get(READ_PURGES_KEY) as ReadPurge[] | undefined) ?? [];
}

/**
 * The wall time a write of a read-bit purge spends clearing read bitmaps before it stops
 * (unless told a number of keys): a key's cost grows with the messages and the chunks
 * they span, and 392 keys of a 858-message topic took 37 ms in a 10,000-user realm
 * (bench:worst's delete_topic), three times what readKeysPerWrite's count assumed.
 * Wall, not CPU: what the event loop waits for, and stopping early only adds a write.
 */
export const READ_PURGE_STEP_MS = 8;

/** A clock in milliseconds (performance.now; tests pass their own). */
export type Clock = () => number;
const wallClock: Clock = () => performance.now();

/**
 * Clears the purge's messages from the realm's read bitmaps, holders in ID order, until
 * `budget` keys changed (or, when not told one, READ_PURGE_STEP_MS passed). Returns the
 * purge left, or null when every user is done.
 */
function purgeReadBits(
  state: StoreState,
  purge: ReadPurge,
  keysPerWrite: number | null,
  clock: Clock,
  stepMs: number | null = keysPerWrite === null ? READ_PURGE_STEP_MS : null,
): ReadPurge | null {
  const ids = purge.messageIds;
  const budget = keysPerWrite ?? readKeysPerWrite(ids.length);
  const deadline = stepMs === null ? Infinity : clock() + stepMs;
  const idSet = new RoaringBitmap32(ids);
  // Only users who ever had a read bit (the flag's holders, ascending): in the 100k
  // dataset 492 of a realm's 10,000, each of whom the walk over every user probed.
  let last = purge.afterUserId;
  let changed = 0;
  for (const userId of state.bitmaps.get(key.userFlagHolders("read")).toUint32Array()) {
    if (userId <= purge.afterUserId || state.users.get(userId)?.realmId !== purge.realmId) continue;
    if (changed >= budget || (changed > 0 && clock() >= deadline)) return { ...purge, afterUserId: last };
    if (state.bitmaps.removeStored(flagKey(userId, "read"), ids, idSet).length > 0) changed++;
    last = userId;
  }
  return null;
}

/**
 * One write of the oldest pending read-bit purge; returns whether any is left. Callers
 * loop (Store after each deletion, and at open for one a crash interrupted).
 */
export function continueReadPurge(
  state: StoreState,
  keysPerWrite: number | null = null,
  clock: Clock = wallClock,
): boolean {
  if (pendingReadPurges(state).length === 0) return false;
  return state.write(() => readPurgeStep(state, keysPerWrite, clock));
}

/**
 * continueReadPurge's work inside the caller's write (`stepMs`: its time limit, by default
 * READ_PURGE_STEP_MS when no key budget is given); returns whether any purge is left.
 */
function readPurgeStep(
  state: StoreState,
  keysPerWrite: number | null,
  clock: Clock = wallClock,
  stepMs?: number | null,
): boolean {
  const [purge, ...rest] = pendingReadPurges(state);
  if (purge === undefined) return false;
  const left = purgeReadBits(state, purge, keysPerWrite, clock, stepMs);
  const next = left === null ? rest : [left, ...rest];
  if (next.length === 0) state.tables.meta.removeSync(READ_PURGES_KEY);
  else state.tables.meta.putSync(READ_PURGES_KEY, next);
  return next.length > 0;
}

/**
 * Per-user bitmaps any receiver of a message may hold for it (its `dm` bits are
 * message-level; mention flags are only where the message mentions: see clearReaderBits;
 * read bits, which any user of the realm may hold, are the read purge's).
 */
const RECEIVER_FLAGS: readonly StoredFlag[] = [
  "starred",
  "collapsed",
  "has_alert_word",
  "active_mobile_push_notification",
];
const MENTION_FLAGS: readonly StoredFlag[] = ["mentioned", "group_mentioned", "topic_wildcard_mentioned"];
/** What a reader who did not receive it may hold besides the historical row that made them a reader. */
const HISTORICAL_ROW_FLAGS: readonly StoredFlag[] = ["starred", "collapsed", "has_alert_word"];

/**
 * Per flag, each user's key of it: a deletion in a 10,000-user channel looks up ~50,000 of
 * them, and building each string anew (its hash with it) was half of that cost. By flag
 * first: a walk over a flag's holders looks its map up once.
 */
const flagKeys = new Map<StoredFlag, Map<number, string>>();
const MAX_FLAG_KEY_USERS = 100_000;

function flagKeysOf(flag: StoredFlag): Map<number, string> {
  let keys = flagKeys.get(flag);
  if (keys === undefined) flagKeys.set(flag, (keys = new Map()));
  else if (keys.size >= MAX_FLAG_KEY_USERS) keys.clear();
  return keys;
}

function keyIn(keys: Map<number, string>, userId: number, flag: StoredFlag): string {
  let k = keys.get(userId);
  if (k === undefined) keys.set(userId, (k = key.userFlag(userId, flag)));
  return k;
}

function flagKey(userId: number, flag: StoredFlag): string {
  return keyIn(flagKeysOf(flag), userId, flag);
}

/** The realm's can_delete_any_message_group is one of Zulip's allow_everyone_group=False settings: never guests. */
function allowsNonGuest(state: StoreState, value: GroupSettingValue, user: User): boolean {
  return user.role !== ROLE.GUEST && isAllowedBy(state, value, user);
}

/**
 * Zulip's validate_can_delete_message: anyone in the realm's or (for a channel message)
 * the channel's can_delete_any_message_group, at any time; otherwise the sender or the
 * sending bot's owner, if in the realm's or the channel's can_delete_own_message_group,
 * within message_content_delete_limit_seconds.
 */
export function checkCanDelete(state: StoreState, actor: User, message: Message, now: number): void {
  const policy = realmMessagePolicy(state, actor.realmId);
  if (allowsNonGuest(state, policy.canDeleteAnyMessageGroup, actor)) return;
  const channel = message.recipient.type === "channel" ? state.channels.get(message.recipient.channelId) : undefined;
  // Unlike the realm's, the channel's setting may include guests (Zulip's allow_everyone_group).
  if (channel && isAllowedBy(state, channelPermission(state, channel, "canDeleteAnyMessageGroup"), actor)) return;
  const sender = state.users.get(message.senderId);
  const own = message.senderId === actor.id || (sender?.isBot === true && sender.botOwnerId === actor.id);
  if (!own) throw new BadRequestError(CANNOT_DELETE);
  if (
    !isAllowedBy(state, policy.canDeleteOwnMessageGroup, actor) &&
    !(channel && isAllowedBy(state, channelPermission(state, channel, "canDeleteOwnMessageGroup"), actor))
  )
    throw new BadRequestError(CANNOT_DELETE);
  if (pastLimit(policy.messageContentDeleteLimitSeconds, message.dateSent, now))
    throw new BadRequestError(DELETE_TIME_LIMIT_PASSED);
}

/** DELETE /messages/{message_id}. */
export function deleteMessage(
  state: StoreState,
  actorId: number,
  messageId: number,
  readBudget: number | null = null,
): void {
  const actor = requireActiveUser(state, actorId);
  const message =
    Number.isInteger(messageId) && messageId > 0 && messageId <= 0xffffffff
      ? getMessageRecord(state.tables, messageId)
      : undefined;
  if (!message || !canChangeMessage(state, actor, message)) throw new BadRequestError(INVALID_MESSAGE);
  checkCanDelete(state, actor, message, state.now());
  state.write((ctx) => deleteMessagesInWrite(state, ctx, [message], actor.id, readBudget));
}

/** One conversation's deleted messages: a channel topic (lower-cased, as Zulip groups) or a DM conversation. */
interface DeletionGroup {
  readonly channel: Channel | null;
  readonly topicKey: string;
  readonly messages: Message[];
}

/**
 * Deletes `messages` inside `ctx`'s write, with Zulip's events: one delete_message per
 * conversation (and a first_message_id update where a channel's first message went).
 * `actingUserId` always hears of it, as in Zulip. No permission check: callers check.
 * Readers' read bits are cleared up to `readBudget` keys (null: readKeysPerWrite, 0:
 * none) here; the rest is left to a pending read purge (continueReadPurge).
 */
export function deleteMessagesInWrite(
  state: StoreState,
  ctx: WriteContext,
  messages: readonly Message[],
  actingUserId: number | null,
  readBudget: number | null = null,
): void {
  const groups = new Map<string, DeletionGroup>();
  for (const message of messages) {
    const channel =
      message.recipient.type === "channel" ? (state.channels.get(message.recipient.channelId) ?? null) : null;
    const topicKey = message.topic.toLowerCase();
    const k =
      message.recipient.type === "channel"
        ? `c:${message.recipient.channelId}:${topicKey}`
        : `d:${message.recipient.conversationId}`;
    let group = groups.get(k);
    if (!group) groups.set(k, (group = { channel, topicKey, messages: [] }));
    group.messages.push(message);
  }
  // Zulip's order: direct-message conversations, then channel topics.
  const ordered = [...groups].sort(([a], [b]) => (a[0] === b[0] ? (a < b ? -1 : 1) : a[0] === "d" ? -1 : 1));
  const shownByUser = new Map<number, number[]>();
  const channels = new Map<number, Channel>();
  for (const [, group] of ordered) {
    group.messages.sort((a, b) => a.id - b.id);
    const ids = group.messages.map((m) => m.id);
    const rows = clearReaderBits(state, group, ids, shownByUser);
    const audience = deletionAudience(state, group.channel, rows, actingUserId);
    rewriteMessages(
      state,
      ctx,
      group.messages.map((before) => ({ before, after: null })),
    );
    const realmId = group.messages[0]!.realmId;
    // Zulip's check_update_first_message_id. Told to everyone who sees the channel, as
    // the first message's own update was at send (Zulip tells only the deletion's
    // audience, which leaves its administrators and other metadata viewers stale).
    const channel = group.channel === null ? undefined : (channels.get(group.channel.id) ?? group.channel);
    if (channel?.firstMessageId != null && ids.includes(channel.firstMessageId))
      channels.set(
        channel.id,
        nextFirstMessage(state, ctx, channel, () => channelViewersAudience(state, channel)),
      );
    const where = group.channel === null ? null : { channelId: group.channel.id, topic: group.topicKey };
    ctx.emit({ type: "delete_message", realmId, messageIds: ids, channel: where }, () => audience);
  }
  // A first message moved elsewhere before its deletion: its old channel names it too
  // (Zulip leaves that stale; parley's channels name a stored message), told to its viewers.
  const deleted = new Set(messages.map((m) => m.id));
  for (const stored of state.channels.values()) {
    const channel = channels.get(stored.id) ?? stored;
    if (channel.firstMessageId !== null && deleted.has(channel.firstMessageId))
      nextFirstMessage(state, ctx, channel, () => channelViewersAudience(state, channel));
  }
  detachUploads(state, ctx, messages);
  for (const [userId, shown] of shownByUser)
    enqueueDeletedRemovals(
      state,
      ctx,
      userId,
      shown.sort((a, b) => a - b),
    );
  const byRealm = new Map<number, number[]>();
  for (const message of messages) {
    const ids = byRealm.get(message.realmId);
    if (ids) ids.push(message.id);
    else byRealm.set(message.realmId, [message.id]);
  }
  const pendingBefore = pendingReadPurges(state);
  const pending = [...pendingBefore];
  const before = pending.length;
  for (const [realmId, ids] of byRealm) {
    const purge: ReadPurge = { realmId, messageIds: ids.sort((a, b) => a - b), afterUserId: 0 };
    const left = readBudget === 0 ? purge : purgeReadBits(state, purge, readBudget, wallClock);
    if (left === null) continue;
    // A topic's batches defer all of theirs: one purge, so each read bitmap is rewritten once.
    const last = pending[pending.length - 1];
    if (last !== undefined && last.realmId === realmId && last.afterUserId === 0 && left.afterUserId === 0)
      pending[pending.length - 1] = {
        ...last,
        messageIds: [...last.messageIds, ...left.messageIds].sort((a, b) => a - b),
      };
    else pending.push(left);
  }
  if (pending.length > before || pending.some((p, i) => p !== pendingBefore[i]))
    state.tables.meta.putSync(READ_PURGES_KEY, pending);
}

/** Stores the channel with its first stored message as first_message_id, with the stream update event. */
function nextFirstMessage(state: StoreState, ctx: WriteContext, channel: Channel, audience: () => Audience): Channel {
  // The whole bitmap: a message moved in may be older than the one deleted.
  const rest = state.bitmaps.get(key.channel(channel.id));
  const value = rest.isEmpty ? null : rest.minimum();
  const next: Channel = { ...channel, firstMessageId: value };
  state.tables.channels.putSync(next.id, next);
  ctx.afterCommit(() => state.indexChannel(next));
  ctx.emit({ type: "stream", op: "update", channel: next, property: "first_message_id", value }, audience);
  return next;
}

/** Whether any of `ids` (ascending) is in [from, to); `to` null: no end. */
function anyIn(ids: readonly number[], from: number, to: number | null): boolean {
  const lo = lowerBound(ids, from);
  return lo < ids.length && (to === null || ids[lo]! < to);
}

/** The index of the first of `ids` (ascending) at or past `from`. */
function lowerBound(ids: readonly number[], from: number): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ids[mid]! < from) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Whether a subscription's intervals cover any of `ids` (ascending) outside `withdrawn`
 * (a subset of them): per interval, a count of each. Asking each message of a batch of
 * a 10,000-user channel's moved topic, per user, took ~50 ms of CPU per batch of 100.
 */
function receivedInIntervals(
  ids: readonly number[],
  withdrawn: ReadonlyBitmap,
  intervals: readonly { readonly from: number; readonly to: number | null }[],
): boolean {
  for (const iv of intervals) {
    const end = iv.to === null ? ids.length : lowerBound(ids, iv.to);
    const covered = end - lowerBound(ids, iv.from);
    if (covered <= 0) continue;
    if (withdrawn.isEmpty || covered > withdrawn.rangeCardinality(iv.from, iv.to ?? 2 ** 32)) return true;
  }
  return false;
}

/**
 * Clears every reader's per-user bits for the group's messages but the read bits (the
 * read purge's: they also cover whole ranges a user never received, the data
 * generator's "read up to X", so every read holder of the realm is looked at) and returns the
 * users who had a row for any of them (Zulip's UserMessage holders): its receivers, and
 * the readers who had a historical row. Messages a notification showed are added to
 * `shownByUser` for their removal.
 */
function clearReaderBits(
  state: StoreState,
  group: DeletionGroup,
  ids: readonly number[],
  shownByUser: Map<number, number[]>,
): ReadonlyBitmap {
  const idSet = new RoaringBitmap32(ids);
  // Most of the realm's users hold none of these bitmaps: their holders say so in one bitmap probe.
  const holders = new Map<StoredFlag, ReadonlyBitmap>();
  const clear = (userId: number, flag: StoredFlag): number[] => {
    let held = holders.get(flag);
    if (held === undefined) holders.set(flag, (held = state.bitmaps.get(key.userFlagHolders(flag))));
    return held.has(userId) ? state.bitmaps.removeStored(flagKey(userId, flag), ids, idSet) : [];
  };
  const noteShown = (userId: number, removed: number[]) => {
    if (removed.length === 0) return;
    const shown = shownByUser.get(userId);
    if (shown) shown.push(...removed);
    else shownByUser.set(userId, removed);
  };
  if (group.channel !== null && group.messages.some(movedChannel))
    return new RoaringBitmap32(clearMovedReaderBits(state, group.channel, group.messages, ids, noteShown));
  // Bitmaps, not Sets: a batch of a 10,000-subscriber channel's topic builds these for
  // every subscriber, and Set inserts were most of a batch's CPU.
  const receiverList: number[] = group.messages.map((m) => m.senderId);
  const first = group.messages[0]!;
  if (first.recipient.type === "direct")
    for (const userId of state.conversations.get(first.recipient.conversationId)?.userIds ?? [])
      receiverList.push(userId);
  const channel = group.channel;
  if (channel !== null) {
    const low = ids[0]!;
    const high = ids[ids.length - 1]!;
    for (const sub of state.everSubscribed(channel.id).values()) {
      for (const iv of sub.intervals) {
        if (iv.from > high || (iv.to !== null && iv.to <= low)) continue;
        if (anyIn(ids, iv.from, iv.to)) {
          receiverList.push(sub.userId);
          break;
        }
      }
    }
  }
  const receivers = new RoaringBitmap32(receiverList);
  const rows = receivers.clone();
  // Each flag's holders, not every receiver times every flag: a 10,000-subscriber
  // channel's batch asked 60,000 (user, flag) pairs, of which a few hundred hold bits.
  const holdersOf = (flag: StoredFlag): Uint32Array => state.bitmaps.get(key.userFlagHolders(flag)).toUint32Array();
  const clearHolders = (flag: StoredFlag, among: (userId: number) => boolean) => {
    for (const userId of holdersOf(flag)) {
      if (!among(userId)) continue;
      const removed = clear(userId, flag);
      if (flag === "active_mobile_push_notification") noteShown(userId, removed);
    }
  };
  const isReceiver = (userId: number) => receivers.has(userId);
  for (const flag of RECEIVER_FLAGS) clearHolders(flag, isReceiver);
  // Mention flags are written at send (and by edits) only where the message mentions.
  const mentioned = new Set(group.messages.flatMap((m) => m.mentionedUserIds));
  for (const userId of mentioned) if (receivers.has(userId)) clear(userId, "mentioned");
  if (group.messages.some((m) => m.mentionedGroupIds.length > 0)) clearHolders("group_mentioned", isReceiver);
  if (group.messages.some((m) => m.wildcard === "topic")) clearHolders("topic_wildcard_mentioned", isReceiver);
  // Anyone else who may have had a historical row: readers of a private channel have had
  // a subscription, of a public one anyone may have; of a DM, no one.
  if (channel !== null)
    for (const userId of holdersOf("historical")) {
      if (receivers.has(userId)) continue;
      if (channel.inviteOnly && state.subsByUser.get(userId)?.get(channel.id) === undefined) continue;
      if (clear(userId, "historical").length === 0) continue;
      rows.add(userId);
      for (const flag of HISTORICAL_ROW_FLAGS) clear(userId, flag);
    }
  return rows;
}

/** Whether a message was moved from another channel (its rows then follow move-rows.ts). */
function movedChannel(message: Message): boolean {
  return message.editHistory?.some((e) => e.prevStream !== undefined) ?? false;
}

/**
 * clearReaderBits for messages a move brought from another channel: a row may be
 * granted or withdrawn, per user or grouped (actions/move-rows.ts), and a row lost in the move keeps its flag
 * bits, so every user of the realm may hold any kind of bit. A user has a row for a
 * message they received and kept (not withdrawn), were granted, or hold a historical
 * row for. Each flag's holders are looked at, and who received one among the senders and
 * the channel's subscribers: every user of the realm, each with a Set of their withdrawn
 * IDs, took 63-225 ms of CPU per batch of 100 messages moved into a 10,000-user channel.
 * The rows returned are only the audience's: received rows only where they decide it (rowDecidesAudience).
 */
function clearMovedReaderBits(
  state: StoreState,
  channel: Channel,
  messages: readonly Message[],
  ids: readonly number[],
  noteShown: (userId: number, removed: number[]) => void,
): Set<number> {
  const rows = new Set<number>();
  const idSet = new RoaringBitmap32(ids);
  const grouped = groupedAmong(state.bitmaps, idSet);
  const realmUsers = state.usersOfRealm(channel.realmId);
  // clearReaderBits' `clear` without its holder check, each flag's keys looked up once:
  // a batch of a 10,000-user channel's topic walks ~1,700 holders of "mentioned" alone.
  const clearHolders = (flag: StoredFlag, each: (userId: number, removed: number[]) => void): void => {
    const keys = flagKeysOf(flag);
    for (const userId of state.bitmaps.get(key.userFlagHolders(flag)).toUint32Array()) {
      if (!realmUsers.has(userId)) continue;
      each(userId, state.bitmaps.removeStored(keyIn(keys, userId, flag), ids, idSet));
    }
  };
  // Withdrawn rows as bitmaps (subsets of `ids`), not per-user Sets: a topic moved from a
  // small channel into a 10,000-user one is withdrawn from nearly all of them as a group,
  // and a Set of the batch's IDs for each was most of the batch's CPU (and its garbage).
  const ownWithdrawn = new Map<number, number[]>();
  clearHolders("withdrawn", (userId, removed) => {
    if (removed.length > 0) ownWithdrawn.set(userId, removed);
  });
  // Who may have received one: the senders and whoever was ever subscribed to the channel.
  const sentBy = new Map<number, number[]>();
  for (const m of messages) {
    const sent = sentBy.get(m.senderId);
    if (sent) sent.push(m.id);
    else sentBy.set(m.senderId, [m.id]);
  }
  const decides = rowDecidesAudience(state, channel);
  const received = (userId: number): boolean => {
    if (!realmUsers.has(userId) || !decides(userId)) return false;
    const own = ownWithdrawn.get(userId);
    const fromGroups = grouped.of(userId);
    const withdrawn = own === undefined ? fromGroups : RoaringBitmap32.or(fromGroups, new RoaringBitmap32(own));
    // Withdrawn from all of them (a topic moved out and back): received none, no need to look.
    if (withdrawn.size >= messages.length) return false;
    return (
      sentBy.get(userId)?.some((id) => !withdrawn.has(id)) === true ||
      receivedInIntervals(ids, withdrawn, state.subsByUser.get(userId)?.get(channel.id)?.intervals ?? [])
    );
  };
  // The senders and whoever was ever subscribed (no Set of the 10,000 built per batch).
  for (const userId of sentBy.keys()) if (received(userId)) rows.add(userId);
  for (const userId of state.everSubscribed(channel.id).keys())
    if (!sentBy.has(userId) && received(userId)) rows.add(userId);
  for (const flag of ["granted", "historical"] as const)
    clearHolders(flag, (userId, removed) => {
      if (removed.length > 0) rows.add(userId);
    });
  const ignore = () => {};
  for (const flag of [...RECEIVER_FLAGS, ...MENTION_FLAGS])
    clearHolders(flag, flag === "active_mobile_push_notification" ? noteShown : ignore);
  if (grouped.parts.length > 0) stripWithdrawnGroups(state.bitmaps, idSet);
  return rows;
}

/**
 * Whether deletionAudience's answer for a user of `channel` depends on their having a
 * row: a public channel's active subscribers hear of it anyway, a private channel's
 * others never, and with shared history only its active subscribers do. Finding who
 * received a moved-in message costs a look at each member's withdrawn rows and
 * subscription intervals: ~25 ms of CPU per batch of a 10,000-subscriber channel's
 * topic (bench:worst's delete_topic) that decided nothing.
 */
function rowDecidesAudience(state: StoreState, channel: Channel): (userId: number) => boolean {
  const subscribers = state.subscribers.get(channel.id);
  const active = (userId: number) => subscribers?.has(userId) === true && state.users.get(userId)?.isActive === true;
  if (!channel.inviteOnly) {
    // Asked for each of the channel's 10,000 members a batch: one bitmap, not a user lookup each.
    const activeSubscribers = new RoaringBitmap32(state.activeSubscriberList(channel.id));
    return (userId) => !activeSubscribers.has(userId);
  }
  if (channel.historyPublicToSubscribers) return () => false;
  return active;
}

/**
 * Zulip's event_recipient_ids_for_action_on_messages, plus the acting user: a DM's row
 * holders; a channel's active subscribers, intersected with the row holders for
 * protected history, joined with the non-guest row holders for a public channel.
 */
function deletionAudience(
  state: StoreState,
  channel: Channel | null,
  rows: ReadonlyBitmap,
  actingUserId: number | null,
): ReturnType<typeof usersAudience> {
  let out: InstanceType<typeof RoaringBitmap32>;
  if (channel === null) out = new RoaringBitmap32(rows);
  else {
    out = new RoaringBitmap32(state.activeSubscriberList(channel.id));
    if (channel.inviteOnly && !channel.historyPublicToSubscribers) out.andInPlace(rows);
    if (!channel.inviteOnly)
      for (const userId of RoaringBitmap32.andNot(rows, out))
        if (state.users.get(userId)?.role !== ROLE.GUEST) out.add(userId);
  }
  if (actingUserId !== null) out.add(actingUserId);
  return bitmapAudience(out);
}

/**
 * The deleted messages' claims on uploads go; the uploads stay, marked with the time so
 * that the unclaimed-upload cleanup keeps them as long as Zulip's archive would. Each
 * owner hears of their upload's new claims.
 */
function detachUploads(state: StoreState, ctx: WriteContext, messages: readonly Message[]): void {
  const ids = new Set(messages.filter((m) => m.hasAttachment).map((m) => m.id));
  if (ids.size === 0) return;
  const claimed = new Set<number>();
  for (const id of ids) for (const attachmentId of state.attachmentsByMessage.get(id) ?? []) claimed.add(attachmentId);
  const now = state.now();
  // In ID order, as the walk over every upload went.
  for (const attachmentId of [...claimed].sort((a, b) => a - b)) {
    const current = state.attachments.get(attachmentId);
    if (current === undefined) continue;
    const next: Attachment = {
      ...current,
      messageIds: current.messageIds.filter((id) => !ids.has(id)),
      claimDeletedAt: now,
    };
    state.tables.attachments.putSync(next.id, next);
    ctx.afterCommit(() => state.indexAttachment(next));
    ctx.emit(
      { type: "attachment", op: "update", attachment: next, uploadSpaceUsed: uploadSpaceUsed(state, next.realmId) },
      () => usersAudience([next.ownerId]),
    );
  }
}

/**
 * The size of a topic deletion's next batch, from the last one's: what the time it
 * took per message says fits DELETE_TOPIC_BATCH_TARGET_MS, at most DELETE_TOPIC_BATCH_GROWTH
 * times as many (one quick batch is not much of a measure), between DELETE_TOPIC_BATCH_SIZE and
 * DELETE_TOPIC_MAX_BATCH_SIZE. Batches cheaper than Zulip's 100 are never taken: a
 * slow batch is slow for what it repeats (a moved topic's readers), not for its size
 * (batches of 50 of bench:worst's moved-in topic took as much CPU as those of 100).
 */
export function nextTopicBatchSize(size: number, deleted: number, elapsedMs: number): number {
  if (deleted === 0) return size;
  const fitting = Math.floor((DELETE_TOPIC_BATCH_TARGET_MS * deleted) / Math.max(elapsedMs, 0.01));
  return Math.max(
    DELETE_TOPIC_BATCH_SIZE,
    Math.min(DELETE_TOPIC_MAX_BATCH_SIZE, size * DELETE_TOPIC_BATCH_GROWTH, fitting),
  );
}

/**
 * Read bitmaps the last batch of a topic deletion clears in its own write: enough for a
 * topic its readers mostly left unread (its senders' bits), few enough (~3 ms) that a
 * batch sized for the loop budget without them stays within it when every user read it.
 */
export const LAST_BATCH_READ_KEYS = 100;
/**
 * And at most this long (wall): the keys are seldom in memory by then, and 100 loaded in the
 * write took 18-45 ms of CPU after bench:worst's moved-in topic, whose last batch it joined.
 */
export const LAST_BATCH_READ_MS = 3;

export interface TopicDeletionStep {
  /** Messages this step deleted. */
  readonly deleted: number;
  /** Nothing the caller may delete is left in the topic (and stale topic policies were reset). */
  readonly complete: boolean;
}

/**
 * One batch of POST /streams/{stream_id}/delete_topic (Zulip's delete_in_topic): an
 * organization administrator deletes the newest `batchSize` messages of the topic they
 * can access, in one transaction. When none are left, the users' policies for the topic
 * are reset, except (protected history) for users who still have rows for messages
 * the administrator could not delete. Readers' read bits are left to a read purge
 * (continueReadPurge), whose first `readBudget` keys (null: LAST_BATCH_READ_KEYS, 0:
 * none) the last batch clears.
 */
export function deleteTopicBatch(
  ctx: PlanContext<StoreState>,
  channelId: number,
  topicName: string,
  batchSize = DELETE_TOPIC_BATCH_SIZE,
  readBudget: number | null = null,
): TopicDeletionStep {
  const { state, user } = ctx;
  const { channel, topic, ids, complete } = topicBatch(ctx, channelId, topicName, batchSize);
  if (channel === null) return { deleted: 0, complete: true };
  const messages: Message[] = [];
  for (const id of ids) {
    const message = getMessageRecord(state.tables, id);
    if (message) messages.push(message);
  }
  if (messages.length === 0 && !(complete && hasTopicPolicies(state, channel, topic))) return { deleted: 0, complete };
  state.write((w) => {
    // Read bits wait for the last batch: one purge rewrites each read bitmap once, and
    // its first share goes in this write rather than a durable write of its own.
    if (messages.length > 0) deleteMessagesInWrite(state, w, messages, user.id, 0);
    if (complete) {
      resetTopicPolicies(ctx, w, channel, topic);
      // Told a budget (tests), keys alone decide.
      if (readBudget !== 0)
        readPurgeStep(
          state,
          readBudget ?? LAST_BATCH_READ_KEYS,
          wallClock,
          readBudget === null ? LAST_BATCH_READ_MS : null,
        );
    }
  });
  return { deleted: messages.length, complete };
}

/**
 * The messages deleteTopicBatch deletes next (ascending), after its checks; `channel`
 * null when the topic name is too long to be a topic.
 */
function topicBatch(
  ctx: PlanContext<StoreState>,
  channelId: number,
  topicName: string,
  batchSize: number,
): { channel: Channel | null; topic: string; ids: number[]; complete: boolean } {
  const { state, user } = ctx;
  if (!isAdmin(user))
    throw new PermissionDeniedError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL");
  const channel = Number.isInteger(channelId) ? state.channels.get(channelId) : undefined;
  if (!channel || channel.isArchived || !canAccessChannelContent(state, user, channel))
    throw new BadRequestError("Invalid channel ID");
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError("batchSize must be a positive integer");
  const realm = state.realms.get(user.realmId);
  const topic = topicName === realm?.emptyTopicDisplayName ? "" : topicName;
  // Topics (and topic policies) are cut to MAX_TOPIC_LENGTH: a longer name is no topic.
  if (exceedsCodePoints(topic, MAX_TOPIC_LENGTH)) return { channel: null, topic, ids: [], complete: true };
  const inTopic = state.bitmaps.get(key.channelTopic(channel.id, topic));
  // Zulip's bulk_access_stream_messages_query: protected history only where the admin has a row.
  const deletable =
    channel.inviteOnly && !channel.historyPublicToSubscribers
      ? ctx.received.restrictToPersonal(user.id, inTopic)
      : inTopic;
  const ids = sliceByRank(deletable, Math.max(0, deletable.size - batchSize), batchSize);
  return { channel, topic, ids, complete: ids.length === deletable.size };
}

/**
 * Reads what deleteTopicBatch(ctx, channelId, topicName, batchSize) would next, caching
 * it, one piece of work per step (the caller stops between steps: Store.deleteTopic gives
 * each few milliseconds of them a turn of the event loop): its messages, their index
 * keys, the withdrawn-row groups and every per-user bitmap of its readers the write may
 * clear. Changes nothing; what changes meanwhile only makes the write read a little
 * again. Cold, these reads were most of a batch: the first batches of bench:worst's
 * moved-in topic (a 10,000-subscriber channel's) took 80-160 ms of CPU against 20-30
 * for the ones after. Refused requests warm nothing (the batch refuses them).
 */
export function* warmTopicBatch(
  ctx: PlanContext<StoreState>,
  channelId: number,
  topicName: string,
  batchSize: number,
): Generator<void, void, void> {
  const { state } = ctx;
  let batch: ReturnType<typeof topicBatch>;
  try {
    batch = topicBatch(ctx, channelId, topicName, batchSize);
  } catch {
    return;
  }
  const { channel, ids } = batch;
  if (channel === null || ids.length === 0) return;
  const messages: Message[] = [];
  for (const id of ids) {
    const message = getMessageRecord(state.tables, id);
    if (message) messages.push(message);
  }
  yield;
  // As rewriteMessages removes them: a key losing few IDs is loaded whole (removeMany), others from the first's chunk.
  const removals = new Map<string, number[]>();
  const rows = new Set<number>();
  for (const message of messages) {
    indexMessage(state, message, { add: (k, id) => push(removals, k, id) });
    if (message.topicRef !== undefined) rows.add(message.topicRef);
    yield;
  }
  for (const [k, keyIds] of removals) {
    if (keyIds.length >= BULK_IDS) state.bitmaps.getFrom(k, keyIds[0]!);
    else state.bitmaps.get(k);
    yield;
  }
  // The topic registry's rows of their places (TopicPlacer.applyBits): whole, as a few IDs leave them.
  for (const row of rows) state.bitmaps.get(key.topicRow(row));
  const low = ids[0]!;
  const high = ids[ids.length - 1]!;
  const moved = messages.some(movedChannel);
  if (moved) groupedAmong(state.bitmaps, new RoaringBitmap32(ids));
  const realmUsers = state.usersOfRealm(channel.realmId);
  const members = state.everSubscribed(channel.id);
  // clearReaderBits's keys: for a moved-in topic every holder's in the realm; else its
  // receivers' (among whoever was ever subscribed), and the historical rows of others.
  const flags: readonly StoredFlag[] = moved
    ? ["withdrawn", "granted", "historical", ...RECEIVER_FLAGS, ...MENTION_FLAGS]
    : [...RECEIVER_FLAGS, "historical"];
  for (const flag of flags) {
    const among = moved || flag === "historical" ? realmUsers : members;
    const holders = state.bitmaps.get(key.userFlagHolders(flag)).toUint32Array();
    for (let i = 0; i < holders.length; i++) {
      const userId = holders[i]!;
      if (!among.has(userId)) continue;
      state.bitmaps.warmStored(flagKey(userId, flag), low, high);
      if (i % WARM_KEYS_PER_STEP === 0) yield;
    }
    yield;
  }
}

/** Per-user keys warmTopicBatch probes a step (~2-20 µs each: a cached or absent key costs a lookup). */
const WARM_KEYS_PER_STEP = 16;

function push(into: Map<string, number[]>, k: string, id: number): void {
  const list = into.get(k);
  if (list) list.push(id);
  else into.set(k, [id]);
}

function hasTopicPolicies(state: StoreState, channel: Channel, topic: string): boolean {
  return topicPolicies(state, channel, topic).size > 0;
}

/**
 * Zulip's end of delete_in_topic: the topic is gone, so its users' policies are reset;
 * in a channel with protected history, not for users who still have rows for messages
 * left in it. Inside the last batch's write (the bitmaps already lack the deleted ones).
 */
function resetTopicPolicies(ctx: PlanContext<StoreState>, w: WriteContext, channel: Channel, topic: string): void {
  const { state } = ctx;
  const left = state.bitmaps.get(key.channelTopic(channel.id, topic));
  // Only the channel's policy holders may have one: asking every user of a 10,000-user
  // realm was an LMDB read each, twice in the last batch.
  for (const userId of topicPolicies(state, channel, topic).keys()) {
    if (!channel.historyPublicToSubscribers && !left.isEmpty && !ctx.received.restrictToPersonal(userId, left).isEmpty)
      continue;
    writeTopicPolicy(state, w, userId, channel.id, topic, 0);
  }
}
