/**
 * @module storage/message-meta
 * Reading message_meta, [channelId, topic] or [channelId, topic when written, rowId]
 * (storage/topic-rows StoredMessageMeta), without msgpackr for the forms it is written in.
 *
 * Why: the unread summary reads the meta of each unread conversation's oldest message
 * (439 of them a summary for bench's 100-subscription user, ~75% of its time). Through the
 * table a meta took ~540 ns, ~400 the LMDB get and the rest msgpackr's unpack; a meta naming
 * a row then took ~60 ns more for the row and a second array. Here the bytes are read by
 * hand, and the topic of one naming a row is not decoded at all: it reads as the row's name.
 *
 * Only the forms msgpackr writes for these values are read here (a fixarray of 2 or 3,
 * integers up to 32 bits, fixstr/str8/str16 strings); anything else goes to the table's own
 * decoder, as does a topic holding U+FFFD (what Buffer's UTF-8 decoder puts for bytes
 * msgpackr's encoder never writes), so a read answers exactly what the table would.
 */
import type { MessageMeta } from "../types.js";
import type { Tables } from "./tables.js";
import { getTopicRow, resolveMeta, type StoredMessageMeta } from "./topic-rows.js";

/** Where the last readInt/readString stopped; -1 when the bytes were not a form read here. */
let position = 0;

function readInt(bytes: Uint8Array, at: number): number {
  const b = bytes[at]!;
  if (b < 0x80) {
    position = at + 1;
    return b;
  }
  if (b >= 0xe0) {
    position = at + 1;
    return b - 0x100;
  }
  switch (b) {
    case 0xcc:
      position = at + 2;
      return bytes[at + 1]!;
    case 0xcd:
      position = at + 3;
      return (bytes[at + 1]! << 8) | bytes[at + 2]!;
    case 0xce:
      position = at + 5;
      return ((bytes[at + 1]! << 24) >>> 0) + ((bytes[at + 2]! << 16) | (bytes[at + 3]! << 8) | bytes[at + 4]!);
    case 0xd0:
      position = at + 2;
      return (bytes[at + 1]! << 24) >> 24;
    case 0xd1:
      position = at + 3;
      return (((bytes[at + 1]! << 8) | bytes[at + 2]!) << 16) >> 16;
    case 0xd2:
      position = at + 5;
      return (bytes[at + 1]! << 24) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 8) | bytes[at + 4]!;
    default:
      position = -1;
      return 0;
  }
}

/** Where the topic's bytes are (decodeStored); decoded only when the answer needs them. */
let topicStart = 0;
let topicEnd = 0;

/** Skips a string header and its bytes, noting where they are; position -1 when not a string form read here. */
function skipString(bytes: Uint8Array, at: number): void {
  const b = bytes[at]!;
  if (b >= 0xa0 && b <= 0xbf) {
    topicStart = at + 1;
    topicEnd = topicStart + b - 0xa0;
  } else if (b === 0xd9) {
    topicStart = at + 2;
    topicEnd = topicStart + bytes[at + 1]!;
  } else if (b === 0xda) {
    topicStart = at + 3;
    topicEnd = topicStart + ((bytes[at + 1]! << 8) | bytes[at + 2]!);
  } else {
    position = -1;
    return;
  }
  position = topicEnd <= bytes.length ? topicEnd : -1;
}

/** The topic skipString found, or null when it holds U+FFFD (ask the table). */
function topicOf(bytes: Buffer): string | null {
  for (let i = topicStart; i < topicEnd; i++)
    if (bytes[i]! >= 0x80) {
      const text = bytes.toString("utf8", topicStart, topicEnd);
      return text.includes("\uFFFD") ? null : text;
    }
  return bytes.toString("latin1", topicStart, topicEnd);
}

/** The fields decodeStored read: rowId -1 for a meta naming no row. */
let where = 0;
let rowId = -1;

/** Reads a stored meta into where/topic/rowId; false when it is not in a form read here (ask the table). */
function decodeStored(bytes: Buffer): boolean {
  const head = bytes[0]!;
  if (head !== 0x92 && head !== 0x93) return false;
  where = readInt(bytes, 1);
  if (position < 0) return false;
  skipString(bytes, position);
  if (position < 0) return false;
  rowId = -1;
  if (head === 0x93) {
    rowId = readInt(bytes, position);
    if (position < 0 || rowId < 0) return false;
  }
  return position === bytes.length;
}

/** The stored message_meta of `id` (exactly what `tables.messageMeta.get` returns), or undefined. */
export function getStoredMessageMeta(tables: Tables, id: number): StoredMessageMeta | undefined {
  const bytes = tables.messageMeta.getBinaryFast(id);
  if (bytes === undefined) return undefined;
  const topic = decodeStored(bytes) ? topicOf(bytes) : null;
  if (topic === null) return tables.messageMeta.get(id) as StoredMessageMeta | undefined;
  return rowId < 0 ? [where, topic] : [where, topic, rowId];
}

/** The meta of message `id` with its row's name (storage/topic-rows resolveMeta), or undefined. */
export function getMessageMeta(tables: Tables, id: number): MessageMeta | undefined {
  const bytes = tables.messageMeta.getBinaryFast(id);
  if (bytes === undefined) return undefined;
  if (!decodeStored(bytes)) {
    const stored = tables.messageMeta.get(id) as StoredMessageMeta | undefined;
    return stored === undefined ? undefined : resolveMeta(tables, stored);
  }
  if (rowId >= 0) {
    // Read with the row's name whatever the stored one (resolveMeta), so its bytes need no decoding.
    const channelId = where;
    const row = getTopicRow(tables, rowId);
    // getTopicRow may read LMDB, which reuses the bytes' buffer: a missing row (verify reports it) is read again.
    return row !== undefined
      ? [channelId, row.name]
      : resolveMeta(tables, tables.messageMeta.get(id) as StoredMessageMeta);
  }
  const topic = topicOf(bytes);
  return topic === null ? (tables.messageMeta.get(id) as MessageMeta) : [where, topic];
}
