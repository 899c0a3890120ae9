/**
 * @module storage/topic-rows
 * Reading a message record that names a topic registry row (schema 5, actions/topic-registry):
 * its topic is the row's name, and the row's renames since the record was written
 * (`topicFrom` on) are the newest entries of its edit history, newest first as Zulip
 * keeps it. Any write of the record copies those entries into it and moves `topicFrom`
 * to the row's end (putMessageRecord), so every entry of its own is older than every
 * rename the row adds later: the two lists concatenate, no timestamps are compared.
 */
import type { EditHistoryEntry, Message, MessageMeta, TopicRename, TopicRow } from "../types.js";
import type { Tables } from "./tables.js";

/**
 * Row `rowId`, from the cache when it holds one with at least `minRenames` renames (a
 * record's topicFrom: a follower's records may be newer than the rows it last heard of).
 */
export function getTopicRow(tables: Tables, rowId: number, minRenames = 0): TopicRow | undefined {
  const cached = tables.topicRowCache.get(rowId, minRenames);
  if (cached !== undefined) return cached;
  const row = tables.topics.get(rowId) as TopicRow | undefined;
  return row === undefined ? undefined : tables.topicRowCache.set(rowId, row);
}

/** Writes row `rowId` (inside a write: a failed one forgets the cache, StoreState.forgetUncommitted). */
export function putTopicRow(tables: Tables, rowId: number, row: TopicRow): void {
  tables.topics.putSync(rowId, row);
  tables.topicRowCache.set(rowId, row);
}

function historyEntryOf(rename: TopicRename): EditHistoryEntry {
  return { userId: rename.userId, timestamp: rename.timestamp, prevTopic: rename.prevTopic, topic: rename.topic };
}

/**
 * The message a stored record stands for. `row` is its row when the caller already read it
 * (a scan of one topic reads it once). A record naming a missing row reads as stored (verify
 * reports it).
 */
export function resolveRecord(tables: Tables, stored: Message, row?: TopicRow): Message {
  const ref = stored.topicRef;
  if (ref === undefined) return stored;
  const from = stored.topicFrom ?? 0;
  const topicRow = row !== undefined && row.renames.length >= from ? row : getTopicRow(tables, ref, from);
  if (topicRow === undefined) return stored;
  const renames = topicRow.renames;
  if (renames.length <= from && topicRow.name === stored.topic) return stored;
  const added: EditHistoryEntry[] = [];
  let lastMoved = stored.lastMovedTimestamp;
  for (let i = renames.length - 1; i >= from; i--) {
    const rename = renames[i]!;
    added.push(historyEntryOf(rename));
    if (rename.moved && (lastMoved === null || rename.timestamp > lastMoved)) lastMoved = rename.timestamp;
  }
  return {
    ...stored,
    topic: topicRow.name,
    editHistory: added.length === 0 ? stored.editHistory : [...added, ...(stored.editHistory ?? [])],
    lastMovedTimestamp: lastMoved,
  };
}

/**
 * A record as it is to be stored: one naming a row starts after the row's current renames
 * (the message as given already holds them, read through resolveRecord in this write).
 */
export function storedForm(tables: Tables, message: Message): Message {
  if (message.topicRef === undefined) return message;
  const row = getTopicRow(tables, message.topicRef);
  const from = row?.renames.length ?? 0;
  const name = row?.name ?? message.topic;
  return from === message.topicFrom && name === message.topic ? message : { ...message, topicFrom: from, topic: name };
}

/**
 * message_meta as stored: [channelId, topic] or, for a record naming a row,
 * [channelId, topic when written, rowId]. The meta a reader gets has the row's name.
 */
export type StoredMessageMeta = MessageMeta | readonly [number, string, number];

export function resolveMeta(tables: Tables, stored: StoredMessageMeta): MessageMeta {
  if (stored.length !== 3) return stored;
  const row = getTopicRow(tables, stored[2]);
  return row === undefined || row.name === stored[1] ? [stored[0], stored[1]] : [stored[0], row.name];
}

/** The meta to store for a message (its row's, when it names one). */
export function storedMetaOf(message: Message): StoredMessageMeta {
  if (message.recipient.type !== "channel") return [-message.recipient.conversationId, ""];
  const place: MessageMeta = [message.recipient.channelId, message.topic];
  return message.topicRef === undefined ? place : [place[0], place[1], message.topicRef];
}
