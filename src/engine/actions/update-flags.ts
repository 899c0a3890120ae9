/**
 * @module actions/update-flags
 * Personal flag changes by message IDs, by narrow window, and for a whole topic.
 * Zulip's rules: only read, starred and collapsed are editable; messages without a
 * row count as read+historical, and changing one away from that materialises a
 * historical row (after an access check); marking unread in channels the caller is
 * not subscribed to is skipped and reported, for messages the caller may read only
 * (anything else is "Invalid message(s)", like an ID that does not exist). Cost grows
 * with the IDs touched.
 */
import { NothingToWrite, type GroupedBody, type StoreState } from "../state.js";
import { canAccessChannelHistory, canAccessMessage, canSeeChannel, isSubscribed } from "../access.js";
import { BadRequestError, clip } from "../errors.js";
import { key } from "../index/keys.js";
import { mentionedSet, mutedSet, type PlanContext } from "../narrow/plan.js";
import { normalizeNarrow } from "../narrow/normalize.js";
import { parseNarrow } from "../narrow/parse.js";
import { checkWindow, requireRange, selectNarrowWindow, type WindowInput } from "../queries/get-messages.js";
import { API_FLAGS, EDITABLE_FLAGS } from "../queries/message-flags.js";
import { EMPTY, RoaringBitmap32, type ReadonlyBitmap } from "../index/bitmap-store.js";
import { exceedsCodePoints } from "../limits.js";
import { idArrayOf } from "../index/id-array.js";
import { MAX_TOPIC_LENGTH } from "./send-message.js";
import type {} from "../types.js";
import { userAudience } from "../events/audience.js";
import type { MessageDetail } from "../events/types.js";
import { enqueueReadRemovals } from "./push-notifications.js";
import { getMessageRecord } from "../storage/message-records.js";

export type FlagOp = "add" | "remove";
export type EditableFlag = "read" | "starred" | "collapsed";

/** Zulip's MAX_MESSAGES_PER_UPDATE for flags by narrow. */
export const MAX_MESSAGES_PER_UPDATE = 5000;

export function checkFlagAndOp(flag: string, op: string): { flag: EditableFlag; op: FlagOp } {
  if (op !== "add" && op !== "remove") throw new BadRequestError(`Invalid message flag operation: '${clip(op)}'`);
  if (!(API_FLAGS as readonly string[]).includes(flag)) throw new BadRequestError(`Invalid flag: '${clip(flag)}'`);
  if (!(EDITABLE_FLAGS as readonly string[]).includes(flag)) throw new BadRequestError(`Flag not editable: '${flag}'`);
  return { flag: flag as EditableFlag, op };
}

export interface FlagChangeResult {
  readonly updatedCount: number;
  /** Channels skipped when marking unread (only for remove + read). */
  readonly ignoredBecauseNotSubscribedChannels?: readonly number[];
}

/** Applies one flag change to `ids` inside a single write (see prepareFlagChange). */
export function applyFlagChange(
  ctx: PlanContext<StoreState>,
  ids: readonly number[] | ReadonlyBitmap,
  flag: EditableFlag,
  op: FlagOp,
  idsAreChanges = false,
): FlagChangeResult {
  return ctx.state.writePrepared(prepareFlagChange(ctx, ids, flag, op, idsAreChanges));
}

/** A prepared write's answer, passed through `f` (the body's, or the one with nothing to write). */
function mapBody<T, U>(body: GroupedBody<T>, f: (value: T) => U): GroupedBody<U> {
  return body instanceof NothingToWrite ? new NothingToWrite(f(body.value)) : (w) => f(body(w));
}

/**
 * Checks one flag change to `ids` and returns the write that makes it (nothing written
 * here: the body runs alone or in a group commit); the core of all three entry
 * points. Which IDs have a row is decided in bulk from bitmaps; records are read only
 * where Zulip's rules need them: marking unread (subscription check) and messages
 * without a row whose flag moves away from read+historical (access check).
 */
export function prepareFlagChange(
  ctx: PlanContext<StoreState>,
  ids: readonly number[] | ReadonlyBitmap,
  flag: EditableFlag,
  op: FlagOp,
  idsAreChanges = false,
): GroupedBody<FlagChangeResult> {
  const { state, user } = ctx;
  // A message's meta names its channel without decoding the record (5000 records cost
  // ~50 ms); the record is read only where the channel alone cannot decide access.
  const accessible = (id: number, channelId: number | null): boolean => {
    const channel = channelId === null ? undefined : state.channels.get(channelId);
    if (channel && channel.realmId === user.realmId && canAccessChannelHistory(state, user, channel)) return true;
    const message = getMessageRecord(state.tables, id);
    return message !== undefined && canAccessMessage(state, user, message);
  };
  const channelOf = (id: number): number | null => {
    const meta = state.metaOf(id);
    return meta !== undefined && meta[0] > 0 ? meta[0] : null;
  };
  const markingUnread = flag === "read" && op === "remove";
  const ignored = new Set<number>();
  // A bitmap holds only valid IDs already (mark-as-read passes one: no array round trip).
  // IDs no message can have (0, negative, past 32 bits) are missing messages: they count
  // as rows of nobody and fail the access check below exactly like an unused ID.
  const listed = ids instanceof RoaringBitmap32 ? null : (ids as readonly number[]);
  const possible = (id: number): boolean => Number.isInteger(id) && id > 0 && id <= 0xffffffff;
  const anyImpossible = listed !== null && !listed.every(possible);
  let candidates: ReadonlyBitmap =
    listed === null ? (ids as ReadonlyBitmap) : new RoaringBitmap32(listed.filter(possible));
  if (markingUnread) {
    const kept: number[] = [];
    for (const id of candidates) {
      const channelId = channelOf(id);
      // Only messages the caller may read are skipped and their channel reported; the
      // rest go on to the access check below and fail exactly like nonexistent IDs.
      if (channelId !== null && !isSubscribed(state, user.id, channelId) && accessible(id, channelId)) {
        ignored.add(channelId);
      } else kept.push(id);
    }
    candidates = new RoaringBitmap32(kept);
  }
  const target = state.bitmaps.get(key.userFlag(user.id, flag));
  // `idsAreChanges`: the caller computed exactly the rows the change applies to (mark as read does).
  const rows = idsAreChanges ? candidates : ctx.received.restrictToPersonal(user.id, candidates);
  const changes = idsAreChanges
    ? RoaringBitmap32.from(candidates)
    : op === "add"
      ? RoaringBitmap32.andNot(rows, target)
      : RoaringBitmap32.and(rows, target);
  // No row: read+historical. Only a change away from that needs a (historical) row.
  const newRows: number[] = [];
  if ((op === "add") !== (flag === "read")) {
    if (anyImpossible) throw new BadRequestError("Invalid message(s)");
    for (const id of RoaringBitmap32.andNot(candidates, rows)) {
      if (!accessible(id, channelOf(id))) throw new BadRequestError("Invalid message(s)");
      newRows.push(id);
    }
    changes.addMany(newRows);
  }
  const result: FlagChangeResult = markingUnread
    ? { updatedCount: changes.size, ignoredBecauseNotSubscribedChannels: [...ignored].sort((x, y) => x - y) }
    : { updatedCount: changes.size };
  if (changes.size === 0) return new NothingToWrite(result);
  const messages = idArrayOf(changes);
  const details = markingUnread ? messageDetails(ctx, messages) : null;
  return (w) => {
    if (newRows.length > 0) {
      clearLostRowFlags(ctx, newRows);
      state.bitmaps.addMany(key.userFlag(user.id, "historical"), newRows);
      if (!markingUnread) state.bitmaps.addMany(key.userFlag(user.id, "read"), newRows);
    }
    if (op === "add") state.bitmaps.addBitmap(key.userFlag(user.id, flag), changes);
    else state.bitmaps.removeMany(key.userFlag(user.id, flag), changes);
    // Read messages a mobile notification shows: their removal goes out with this write.
    if (op === "add" && flag === "read") enqueueReadRemovals(state, w, user.id, changes);
    w.emit({ type: "update_message_flags", userId: user.id, op, flag, messages, messageDetails: details }, () =>
      userAudience(user.id),
    );
    return result;
  };
}

/** Flags a row may have carried before a move took it away (actions/move-rows.ts). */
const LOST_ROW_FLAGS = [
  "starred",
  "collapsed",
  "mentioned",
  "group_mentioned",
  "topic_wildcard_mentioned",
  "has_alert_word",
] as const;

/**
 * A new historical row starts with no flag but the ones being set (Zulip creates the
 * row): bits left by a row a move took away (`newRows` ascending) are cleared first.
 */
function clearLostRowFlags(ctx: PlanContext<StoreState>, newRows: readonly number[]): void {
  const bitmaps = ctx.state.bitmaps;
  const first = newRows[0]!;
  const last = newRows[newRows.length - 1]!;
  for (const flag of LOST_ROW_FLAGS) {
    const k = key.userFlag(ctx.user.id, flag);
    if (bitmaps.holdsAnyIn(k, first, last)) bitmaps.removeMany(k, newRows);
  }
}

/** Where each message lives, for the read-removal event (Zulip's message_details). */
function messageDetails(ctx: PlanContext<StoreState>, ids: readonly number[]): Map<number, MessageDetail> {
  const { state, user } = ctx;
  const out = new Map<number, MessageDetail>();
  // The unread summary's rule: personal and group mentions always count; wildcard
  // mentions (received at send) only outside muted channels and topics.
  const personal = [key.userFlag(user.id, "mentioned"), key.userFlag(user.id, "group_mentioned")].map((k) =>
    state.bitmaps.get(k),
  );
  const anyMention = mentionedSet(ctx);
  const muted = mutedSet(ctx, null);
  for (const id of ids) {
    const message = getMessageRecord(state.tables, id);
    if (!message) continue;
    const mentioned = personal.some((b) => b.has(id)) || (anyMention.has(id) && !muted.has(id));
    const userIds =
      message.recipient.type === "direct"
        ? state.conversations.get(message.recipient.conversationId)?.userIds
        : undefined;
    out.set(id, { recipient: message.recipient, topic: message.topic, mentioned, ...(userIds ? { userIds } : {}) });
  }
  return out;
}

/** POST /messages/flags. */
export function updateFlagsByIds(
  ctx: PlanContext<StoreState>,
  messageIds: readonly number[],
  flagName: string,
  opName: string,
): FlagChangeResult {
  return ctx.state.writePrepared(prepareFlagsByIds(ctx, messageIds, flagName, opName));
}

/** updateFlagsByIds's checks, and its write (for StoreState.writeGrouped). */
export function prepareFlagsByIds(
  ctx: PlanContext<StoreState>,
  messageIds: readonly number[],
  flagName: string,
  opName: string,
): GroupedBody<FlagChangeResult> {
  const { flag, op } = checkFlagAndOp(flagName, opName);
  return prepareFlagChange(ctx, messageIds, flag, op);
}

export interface NarrowFlagResult extends FlagChangeResult {
  readonly processedCount: number;
  readonly firstProcessedId: number | null;
  readonly lastProcessedId: number | null;
  readonly foundOldest: boolean;
  readonly foundNewest: boolean;
}

/** POST /messages/flags/narrow: the GET /messages window, clamped to 5000, then the change. */
export function updateFlagsForNarrow(
  ctx: PlanContext<StoreState>,
  input: WindowInput,
  flagName: string,
  opName: string,
): NarrowFlagResult {
  return ctx.state.writePrepared(prepareFlagsForNarrow(ctx, input, flagName, opName));
}

/** updateFlagsForNarrow's checks and window, and its write (for StoreState.writeGrouped). */
export function prepareFlagsForNarrow(
  ctx: PlanContext<StoreState>,
  input: WindowInput,
  flagName: string,
  opName: string,
): GroupedBody<NarrowFlagResult> {
  const { flag, op } = checkFlagAndOp(flagName, opName);
  const range = requireRange(input);
  if (range.anchor === "date") throw new BadRequestError("Invalid anchor");
  const numBefore = Math.min(
    range.numBefore,
    Math.max(MAX_MESSAGES_PER_UPDATE - range.numAfter, MAX_MESSAGES_PER_UPDATE / 2),
  );
  const numAfter = Math.min(range.numAfter, MAX_MESSAGES_PER_UPDATE - numBefore);
  const clamped = { ...input, numBefore, numAfter };
  checkWindow(clamped);
  const terms = normalizeNarrow(ctx.state, ctx.user, parseNarrow(input.narrow));
  const { window } = selectNarrowWindow(ctx, terms, clamped);
  return mapBody(prepareFlagChange(ctx, window.ids, flag, op), (change) => ({
    ...change,
    processedCount: window.ids.length,
    firstProcessedId: window.ids[0] ?? null,
    lastProcessedId: window.ids[window.ids.length - 1] ?? null,
    foundOldest: window.foundOldest,
    foundNewest: window.foundNewest,
  }));
}

/** POST /mark_topic_as_read (and, with topic null, mark_stream_as_read). */
export function markTopicAsRead(
  ctx: PlanContext<StoreState>,
  channelId: number,
  topicName: string | null,
): FlagChangeResult {
  return ctx.state.writePrepared(prepareMarkTopicAsRead(ctx, channelId, topicName));
}

/** markTopicAsRead's checks, and its write (for StoreState.writeGrouped). */
export function prepareMarkTopicAsRead(
  ctx: PlanContext<StoreState>,
  channelId: number,
  topicName: string | null,
): GroupedBody<FlagChangeResult> {
  const { state, user } = ctx;
  // Zulip's access_stream_by_id: an unknown or invisible channel is "Invalid channel ID" here.
  const found = state.channels.get(channelId);
  if (!found || !canSeeChannel(state, user, found)) throw new BadRequestError("Invalid channel ID");
  const channel = found;
  const realm = state.realms.get(user.realmId);
  const topic = topicName === null ? null : topicName === realm?.emptyTopicDisplayName ? "" : topicName;
  // Topics are cut to MAX_TOPIC_LENGTH when sent: a longer name is no topic (and is not folded).
  const scope =
    topic === null
      ? state.bitmaps.get(key.channel(channel.id))
      : exceedsCodePoints(topic, MAX_TOPIC_LENGTH)
        ? EMPTY
        : state.bitmaps.get(key.channelTopic(channel.id, topic));
  const mine = ctx.received.restrictToPersonal(user.id, scope);
  if (topic !== null && topic !== "" && mine.size === 0) throw new BadRequestError(`No such topic '${clip(topic)}'`);
  mine.andNotInPlace(state.bitmaps.get(key.userFlag(user.id, "read")));
  // mine is every received, unread message of the scope: exactly what changes.
  return prepareFlagChange(ctx, mine, "read", "add", true);
}

/** Messages one mark-all-as-read write marks (Zulip's batches are 2000 rows). */
export const MARK_ALL_BATCH = MAX_MESSAGES_PER_UPDATE;

/**
 * POST /mark_all_as_read (deprecated): every unread message of the user's, oldest
 * first, in writes of MARK_ALL_BATCH, at most `limit` per call. Zulip stops after 50
 * seconds and answers complete: false; here a count bounds the event loop's time and
 * `complete` says whether unread messages remain (the client calls again). Each write
 * sends its own update_message_flags event listing its messages (Zulip sends one with
 * `all: true` and no IDs).
 */
export function markAllAsRead(ctx: PlanContext<StoreState>, limit: number): { complete: boolean } {
  const { state, user } = ctx;
  let done = 0;
  while (done < limit) {
    const unread = RoaringBitmap32.andNot(
      ctx.received.personal(user.id),
      state.bitmaps.get(key.userFlag(user.id, "read")),
    );
    if (unread.size === 0) return { complete: true };
    const batch = new RoaringBitmap32(unread.rangeUint32Array(0, Math.min(MARK_ALL_BATCH, limit - done)));
    applyFlagChange(ctx, batch, "read", "add", true);
    done += batch.size;
  }
  const left = RoaringBitmap32.andNot(ctx.received.personal(user.id), state.bitmaps.get(key.userFlag(user.id, "read")));
  return { complete: left.size === 0 };
}
