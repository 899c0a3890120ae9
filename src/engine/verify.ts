/**
 * @module verify
 * Rebuilds every index that derives from message records and compares it with what
 * is persisted on disk, reporting each difference. Derivable: realm, sender,
 * channel, topic, conversation, has:, resolved, wildcard and term bitmaps, and the
 * per-user `dm`, `mentioned` and `topic_wildcard_mentioned` sets. Not derivable (user
 * state, checked for consistency only): read, starred, collapsed, historical, granted,
 * withdrawn; group_mentioned, which depends on group membership at send time; the
 * mention flags of historical rows, set by the edits made after the row was created; and the
 * mention sets of moved messages, which keep the decision made when they were sent
 * (Zulip does not recompute mentions on a move) while their topic participants and
 * receivers are now those of their new place.
 * entry, attachment claim or channel's first message may name a message without a
 * record (a deleted one). Every user flag bitmap must be listed in its flag's holders
 * (index/user-flag-holders.ts), which may list more. Each stored chunk of an edit's
 * missed-message email candidates (edit_email_chunks) must be readable and name existing
 * users and messages; one of a message deleted since is left to the writer, which drops it.
 */
import { receivedAtSend as receivedOnly } from "./access.js";
import { RoaringBitmap32, type Bitmap } from "./index/bitmap-store.js";
import { indexMessage, writeMentionFlags, type IndexSink } from "./actions/send-message.js";
import { pendingReadPurges } from "./actions/delete-messages.js";
import { editEmailChunkProblems } from "./actions/missed-message-emails.js";
import type { StoreState } from "./state.js";
import { FIRST_ID } from "./storage/tables.js";
import { messageMetaOf, type Conversation, type Message, type ScheduledMessage, type TopicRow } from "./types.js";
import { getTopicRow, resolveMeta, type StoredMessageMeta } from "./storage/topic-rows.js";
import { membersKey } from "./index/conversations.js";
import { foldTopic, key } from "./index/keys.js";
import { isUserFlagHoldersKey, unlistedUserFlagBitmaps, userFlagBitmap } from "./index/user-flag-holders.js";
import { unlistedTopicPolicies } from "./index/topic-policy-holders.js";
import { getMessageRecord, partsOf } from "./storage/message-records.js";
import { isWithdrawnGroupKey, persistedWithdrawnGroups } from "./index/withdrawn-rows.js";

export interface IndexDifference {
  readonly key: string;
  readonly missingCount: number;
  readonly extraCount: number;
  /** Up to 10 IDs the index lacks / should not have. */
  readonly missing: readonly number[];
  readonly extra: readonly number[];
}

export interface VerifyReport {
  readonly messages: number;
  readonly keysChecked: number;
  readonly differences: readonly IndexDifference[];
  readonly problems: readonly string[];
}

const DERIVED_USER_FLAGS = /^u:\d+:(dm|mentioned|topic_wildcard_mentioned)$/;
const MENTION_FLAGS = /^u:(\d+):(mentioned|topic_wildcard_mentioned)$/;

/** Whether a move changed the message's topic or channel (its history says so). */
function wasMoved(message: Message): boolean {
  return message.editHistory?.some((e) => e.prevTopic !== undefined || e.prevStream !== undefined) ?? false;
}
const DERIVED = /^(r|s|c|ct|t|res|wc|d|dm|dmg|h|w|tr):/;

export function isDerivedKey(name: string): boolean {
  return DERIVED.test(name) || DERIVED_USER_FLAGS.test(name);
}

export function verifyIndexes(state: StoreState, onProgress?: (done: number, total: number) => void): VerifyReport {
  const expected = new Map<string, Bitmap>();
  const sink: IndexSink = {
    add(k, id) {
      let bitmap = expected.get(k);
      if (!bitmap) expected.set(k, (bitmap = new RoaringBitmap32()));
      bitmap.add(id);
    },
  };
  const problems: string[] = [];
  // Verify checks the disk: topic rows are read from it, not from what memory last saw.
  state.tables.topicRowCache.clear();
  const moved = new RoaringBitmap32();
  const total = state.lastMessageId;
  let messages = 0;
  const present = new RoaringBitmap32();
  for (const { key: id } of state.tables.messages.getRange({ start: FIRST_ID })) {
    const message = readRecord(state, id, problems);
    if (!message) continue;
    present.add(id);
    if (message.id !== id) problems.push(`message record ${id} has id ${message.id}`);
    if (id > state.lastMessageId) problems.push(`message ${id} is above the allocated maximum ${state.lastMessageId}`);
    const stored = state.tables.messageMeta.get(id) as StoredMessageMeta | undefined;
    const meta = stored === undefined ? undefined : resolveMeta(state.tables, stored);
    const expectedMeta = messageMetaOf(message);
    if (
      stored !== undefined &&
      meta !== undefined &&
      (meta[0] !== expectedMeta[0] || meta[1] !== expectedMeta[1] || stored[2] !== message.topicRef)
    )
      problems.push(`message ${id} meta ${JSON.stringify(stored)} differs from its record`);
    indexMessage(state, message, sink);
    checkTopicRef(state, message, problems);
    if (message.topicRef !== undefined) sink.add(key.topicRow(message.topicRef), id);
    if (wasMoved(message)) moved.add(id);
    else writeMentionFlags(state, message, sink, { groups: false });
    messages++;
    if (onProgress && messages % 10000 === 0) onProgress(messages, total);
  }
  onProgress?.(messages, total);

  const keys = new Set<string>(expected.keys());
  const userState: string[] = [];
  for (const k of state.bitmaps.persistedKeys()) {
    if (isDerivedKey(k)) keys.add(k);
    // Holders list user IDs, not messages (checked below); so do withdrawn groups but for their messages.
    else if (!isUserFlagHoldersKey(k) && !(isWithdrawnGroupKey(k) && !k.endsWith(":m"))) userState.push(k);
  }
  const differences: IndexDifference[] = [];
  // User state cannot be rebuilt, but may hold only messages that exist (read bits also
  // those of a deletion whose read-bit purge is still under way).
  const purging = new RoaringBitmap32(pendingReadPurges(state).flatMap((p) => p.messageIds));
  for (const k of userState) {
    const extra = RoaringBitmap32.andNot(state.bitmaps.loadFromDisk(k), present);
    if (k.endsWith(":read")) extra.andNotInPlace(purging);
    if (extra.isEmpty) continue;
    differences.push({
      key: k,
      missingCount: 0,
      extraCount: extra.size,
      missing: [],
      extra: Array.from(extra.rangeUint32Array(0, 10)),
    });
  }
  for (const k of [...keys].sort()) {
    const want = expected.get(k) ?? new RoaringBitmap32();
    const have = state.bitmaps.loadFromDisk(k);
    const mention = MENTION_FLAGS.exec(k);
    if (mention) {
      if (!moved.isEmpty) have.andNotInPlace(moved);
      // A historical row's mention flags follow the edits made after it was created: not derivable.
      const historical = userFlagBitmap(state.bitmaps, Number(mention[1]), "historical");
      if (!historical.isEmpty) {
        have.andNotInPlace(historical);
        want.andNotInPlace(historical);
      }
    }
    if (want.isEqual(have)) continue;
    const missing = RoaringBitmap32.andNot(want, have);
    const extra = RoaringBitmap32.andNot(have, want);
    differences.push({
      key: k,
      missingCount: missing.size,
      extraCount: extra.size,
      missing: Array.from(missing.rangeUint32Array(0, 10)),
      extra: Array.from(extra.rangeUint32Array(0, 10)),
    });
  }
  problems.push(...unlistedUserFlagBitmaps(state.tables, state.bitmaps));
  problems.push(...unlistedTopicPolicies(state.tables, state.bitmaps));
  checkMessageParts(state, problems);
  checkTopicRegistry(state, problems);
  checkMessageReferences(state, present, problems);
  checkHistoricalRows(state, problems);
  checkMovedRows(state, problems);
  checkWithdrawnGroups(state, problems);
  checkScheduledQueue(state, problems);
  checkConversationMembers(state, problems);
  problems.push(...editEmailChunkProblems(state));
  return { messages, keysChecked: keys.size, differences, problems };
}

/** A message's record, or undefined with a problem noted when its parts cannot be read. */
function readRecord(state: StoreState, id: number, problems: string[]): Message | undefined {
  try {
    return getMessageRecord(state.tables, id);
  } catch (error) {
    problems.push(`message record ${id} is unreadable: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

/** A record naming a topic registry row names one of its channel, and no rename it has not seen. */
function checkTopicRef(state: StoreState, message: Message, problems: string[]): void {
  const ref = message.topicRef;
  if (ref === undefined) return;
  const row = getTopicRow(state.tables, ref);
  const channelId = message.recipient.type === "channel" ? message.recipient.channelId : null;
  if (row === undefined) problems.push(`message ${message.id} names topic row ${ref}, which does not exist`);
  else if (row.channelId !== channelId)
    problems.push(`message ${message.id} names topic row ${ref} of channel ${row.channelId}, not of its own`);
  else if ((message.topicFrom ?? 0) > row.renames.length)
    problems.push(`message ${message.id} starts at rename ${message.topicFrom} of topic row ${ref}, which has fewer`);
}

/** topic_names lists every topic row under its channel and folded name, and nothing else. */
function checkTopicRegistry(state: StoreState, problems: string[]): void {
  const rows = new Map<number, TopicRow>();
  for (const { key: id, value } of state.tables.topics.getRange({ start: FIRST_ID })) {
    const row = value as TopicRow;
    rows.set(id, row);
    if (state.tables.topicNames.get([row.channelId, foldTopic(row.name), id]) !== row.name)
      problems.push(`topic row ${id} (${JSON.stringify(row.name)}) is not in topic_names under its name`);
  }
  for (const { key: k, value } of state.tables.topicNames.getRange()) {
    const [channelId, folded, id] = k;
    const row = rows.get(id);
    if (row === undefined || row.channelId !== channelId || foldTopic(row.name) !== folded || row.name !== value)
      problems.push(`topic_names entry ${JSON.stringify(k)} does not match topic row ${id}`);
  }
}

/** Every slice in message_parts belongs to a record stored in parts, within its part count. */
function checkMessageParts(state: StoreState, problems: string[]): void {
  for (const [id, part] of state.tables.messageParts.getKeys()) {
    const parts = partsOf(state.tables, id);
    if (part >= parts)
      problems.push(`message_parts has part ${part} of message ${id}, whose record has ${parts} parts`);
  }
}

/**
 * Every entry keyed by a message ID, and every record naming one, names a stored message:
 * message_meta and date_message entries, attachment claims, a channel's first message.
 */
function checkMessageReferences(state: StoreState, present: Bitmap, problems: string[]): void {
  for (const id of state.tables.messageMeta.getKeys({ start: FIRST_ID }))
    if (!present.has(id)) problems.push(`message_meta has message ${id}, which has no record`);
  for (const [, id] of state.tables.dateMessage.getKeys())
    if (!present.has(id)) problems.push(`date_message has message ${id}, which has no record`);
  for (const attachment of state.attachments.values())
    for (const id of attachment.messageIds)
      if (!present.has(id))
        problems.push(`attachment ${attachment.id} is claimed by message ${id}, which has no record`);
  for (const channel of state.channels.values())
    if (channel.firstMessageId !== null && !present.has(channel.firstMessageId))
      problems.push(`channel ${channel.id} names message ${channel.firstMessageId} as its first, which has no record`);
}

/** A historical row is only for a message the user did not receive. */
function checkHistoricalRows(state: StoreState, problems: string[]): void {
  for (const k of state.bitmaps.persistedKeys()) {
    const match = /^u:(\d+):historical$/.exec(k);
    if (!match) continue;
    const userId = Number(match[1]);
    for (const id of state.bitmaps.loadFromDisk(k)) {
      const message = getMessageRecord(state.tables, id);
      if (!message) problems.push(`user ${userId} has a historical row for missing message ${id}`);
      else if (receivedOnly(state, userId, message))
        problems.push(`user ${userId} has a historical row for message ${id}, which they received`);
    }
  }
}

/**
 * The rows moves between channels wrote: a withdrawn row only where the user would
 * otherwise derive one (their intervals in the message's channel cover it, or they sent
 * it), a granted row only where they would not; neither for a direct message, and not
 * both; a granted row is never also historical (a withdrawn one may be: the historical
 * row stands in for it).
 */
function checkMovedRows(state: StoreState, problems: string[]): void {
  for (const k of state.bitmaps.persistedKeys()) {
    const match = /^u:(\d+):(withdrawn|granted)$/.exec(k);
    if (!match) continue;
    const userId = Number(match[1]);
    const kind = match[2]!;
    const historical =
      kind === "granted" ? state.bitmaps.loadFromDisk(key.userFlag(userId, "historical")) : new RoaringBitmap32();
    const other = state.bitmaps.loadFromDisk(key.userFlag(userId, kind === "granted" ? "withdrawn" : "granted"));
    for (const id of state.bitmaps.loadFromDisk(k)) {
      const message = getMessageRecord(state.tables, id);
      if (!message || message.recipient.type !== "channel") {
        problems.push(`user ${userId} has a ${kind} row for ${message ? "direct" : "missing"} message ${id}`);
        continue;
      }
      const sub = state.subsByUser.get(userId)?.get(message.recipient.channelId);
      const derived =
        message.senderId === userId ||
        (sub?.intervals.some((iv) => id >= iv.from && (iv.to === null || id < iv.to)) ?? false);
      if (derived !== (kind === "withdrawn"))
        problems.push(
          `user ${userId} has a ${kind} row for message ${id}, which they ${derived ? "" : "never "}received`,
        );
      if (historical.has(id) || other.has(id))
        problems.push(`user ${userId} has a ${kind} row for message ${id} and another kind of row for it`);
    }
  }
}

/**
 * Withdrawn groups (index/withdrawn-rows.ts): each names messages and users, every one
 * of those messages a channel message each of those users would otherwise derive a row
 * for (subscription intervals or being the sender), none of them granted to them; no key
 * of a group the list does not name.
 */
function checkWithdrawnGroups(state: StoreState, problems: string[]): void {
  const groups = persistedWithdrawnGroups(state.bitmaps);
  const listed = new Set(groups.map((g) => `wg:${g.id}:`));
  for (const k of state.bitmaps.persistedKeys())
    if (isWithdrawnGroupKey(k) && k !== "wg" && !listed.has(k.slice(0, k.lastIndexOf(":") + 1)))
      problems.push(`withdrawn group key ${k} belongs to no listed group`);
  for (const g of groups) {
    if (g.messages.isEmpty || g.users.isEmpty) problems.push(`withdrawn group ${g.id} has no messages or no users`);
    const byChannel = new Map<number, Bitmap>();
    for (const id of g.messages) {
      const message = getMessageRecord(state.tables, id);
      if (!message || message.recipient.type !== "channel") {
        problems.push(`withdrawn group ${g.id} names ${message ? "direct" : "missing"} message ${id}`);
        continue;
      }
      const channelId = message.recipient.channelId;
      let ids = byChannel.get(channelId);
      if (ids === undefined) byChannel.set(channelId, (ids = new RoaringBitmap32()));
      ids.add(id);
    }
    for (const userId of g.users) {
      const granted = state.bitmaps.loadFromDisk(key.userFlag(userId, "granted"));
      for (const [channelId, ids] of byChannel) {
        const underived = RoaringBitmap32.andNot(ids, state.bitmaps.get(key.sender(userId)));
        for (const iv of state.subsByUser.get(userId)?.get(channelId)?.intervals ?? [])
          underived.removeRange(iv.from, iv.to ?? 2 ** 32);
        if (!underived.isEmpty)
          problems.push(
            `withdrawn group ${g.id} withdraws message ${underived.minimum()} from user ${userId}, who never received it`,
          );
        if (granted.intersects(ids))
          problems.push(`withdrawn group ${g.id} withdraws a message granted to user ${userId}`);
      }
    }
  }
}

/**
 * The scheduler's queue holds exactly the pending scheduled messages, each at its
 * time, and a delivered one points at a stored message from its sender (a reminder's, at one).
 */
function checkScheduledQueue(state: StoreState, problems: string[]): void {
  const keys = new Set<string>();
  for (const [at, id] of state.tables.scheduledDue.getKeys()) {
    keys.add(`${at}:${id}`);
    const record = state.tables.scheduledMessages.get(id) as ScheduledMessage | undefined;
    if (!record || record.delivered || record.failed || record.deliverAt !== at)
      problems.push(`scheduled_due has [${at}, ${id}] without a pending scheduled message at that time`);
  }
  for (const { value } of state.tables.scheduledMessages.getRange({ start: FIRST_ID })) {
    const record = value as ScheduledMessage;
    const pending = !record.delivered && !record.failed;
    if (pending && !keys.has(`${record.deliverAt}:${record.id}`))
      problems.push(`scheduled message ${record.id} is pending but not in scheduled_due`);
    if (record.delivered) {
      const message =
        record.deliveredMessageId === null ? undefined : getMessageRecord(state.tables, record.deliveredMessageId);
      // A reminder's message is Notification Bot's, to the reminder's owner.
      const fromRightSender = record.reminder !== undefined || message?.senderId === record.senderId;
      if (!message || !fromRightSender)
        problems.push(`scheduled message ${record.id} is marked delivered without its message`);
    }
  }
}

/** conversation_members holds exactly one key per conversation, its members', naming it. */
function checkConversationMembers(state: StoreState, problems: string[]): void {
  const expected = new Map<string, number>();
  for (const { value } of state.tables.conversations.getRange({ start: FIRST_ID })) {
    const conversation = value as Conversation;
    expected.set(JSON.stringify(membersKey(conversation.realmId, conversation.userIds)), conversation.id);
  }
  let found = 0;
  for (const { key, value } of state.tables.conversationMembers.getRange()) {
    const want = expected.get(JSON.stringify(key));
    if (want === undefined)
      problems.push(`conversation_members has ${JSON.stringify(key)} without a conversation of those members`);
    else if (want !== value) problems.push(`conversation_members names ${String(value)} for conversation ${want}`);
    else found++;
  }
  if (found !== expected.size)
    problems.push(`conversation_members lacks ${expected.size - found} of ${expected.size} conversations`);
}
