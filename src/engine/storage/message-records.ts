/**
 * @module storage/message-records
 * Reading and writing message records so that no LMDB value of a message is larger
 * than a page can hold inline.
 *
 * Why: LMDB stores a value over ~2 KB (4 KB pages) on "overflow pages", which must
 * be contiguous. On an aged store (one with a free-page list, i.e. every store a
 * server has written to for a while) finding such a run makes lmdb-js load tens of
 * thousands of free-page entries into memory, which it then rewrites at every later
 * commit: after ten 10 KB messages a short send took 17 ms instead of 1 ms for the
 * next hundreds of writes (bench/aged-store.ts). Values that fit a page never need a
 * contiguous run.
 *
 * Layout: a record whose plain msgpack encoding fits MAX_INLINE_BYTES is stored in
 * `messages` as before. A larger one is stored as a head `{ id, parts }` in
 * `messages` and its msgpack bytes, cut into `parts` slices of at most PART_BYTES, in
 * `message_parts` under [id, 0..parts-1]. Old stores hold only inline records, which
 * read as before.
 */
import { Packr } from "msgpackr";
import type { Message } from "../types.js";
import { encodeAhead, encodedValue } from "./encoded-ahead.js";
import { FIRST_ID, type Tables } from "./tables.js";
import { getTopicRow, resolveRecord, storedForm } from "./topic-rows.js";

/**
 * The largest value written inline. LMDB keeps a node inline when 8 bytes of header,
 * the key and the value fit half a page less the page header (2038 bytes for 4 KB
 * pages); msgpack keys here take at most ~12 bytes, and lmdb-js's shared-structure
 * encoding of a record is no larger than plain msgpack.
 */
export const MAX_INLINE_BYTES = 1900;
export const PART_BYTES = 1900;

/**
 * Plain msgpack, self-describing: no record structures shared between values (the parts
 * must decode in any later process without state).
 */
const codec = new Packr({ useRecords: false });

/** The head of a record stored in parts. */
interface SplitHead {
  readonly id: number;
  readonly parts: number;
}

function isSplitHead(value: unknown): value is SplitHead {
  return typeof value === "object" && value !== null && "parts" in value && !("content" in value);
}

/** UTF-16 units of an edit history's strings, and entries (each with ~60 bytes of numbers and field names). */
function historySize(message: Message): { units: number; entries: number } {
  let units = 0;
  for (const e of message.editHistory ?? [])
    units +=
      (e.prevContent?.length ?? 0) +
      (e.prevRenderedContent?.length ?? 0) +
      (e.prevTopic?.length ?? 0) +
      (e.topic?.length ?? 0);
  return { units, entries: message.editHistory?.length ?? 0 };
}

/**
 * Cheap bound on the record's encoded size, so short messages skip the trial encoding
 * (moved messages too: a move gives each a history entry of two topic names).
 */
function surelySmall(message: Message): boolean {
  // UTF-8 is at most 3 bytes per UTF-16 unit; the other fields of an ordinary message take well under 300 bytes.
  const history = historySize(message);
  return (
    (message.content.length +
      message.renderedContent.length +
      message.topic.length +
      message.client.length +
      history.units) *
      3 +
      history.entries * 80 <
      MAX_INLINE_BYTES - 300 &&
    message.reactions.length === 0 &&
    message.submessages === undefined &&
    message.mentionedUserIds.length + message.mentionedGroupIds.length < 16
  );
}

/**
 * Stores (or replaces) a message record; call inside a write transaction. `previous`,
 * the version being replaced when the caller has it, spares the probe for its parts when
 * it was surely stored inline (a topic move rewrites thousands of such records).
 * `encoded`, its bytes from encodeMessageRecord: the write then only copies them.
 * `placed`: its topicRef and topicFrom were just set from its row in this write
 * (actions/topic-registry), so the row is not read again to set them.
 */
export function putMessageRecord(
  tables: Tables,
  message: Message,
  previous?: Message,
  encoded?: EncodedMessageRecord,
  placed = false,
): void {
  if (encoded !== undefined) {
    if (encoded.message !== message) throw new Error(`putMessageRecord: message ${message.id} was encoded otherwise`);
    for (let i = 0; i < encoded.previousParts; i++) tables.messageParts.removeSync([message.id, i]);
    tables.messages.putSync(message.id, encodedValue(encoded.bytes));
    return;
  }
  writeRecord(tables, placed ? message : storedForm(tables, message), previous);
}

function writeRecord(tables: Tables, message: Message, previous: Message | undefined): void {
  const previousParts = previousPartsOf(tables, message, previous);
  let parts = 0;
  if (!surelySmall(message)) {
    const bytes = codec.pack(message);
    if (bytes.length > MAX_INLINE_BYTES) {
      parts = Math.ceil(bytes.length / PART_BYTES);
      for (let i = 0; i < parts; i++)
        tables.messageParts.putSync([message.id, i], bytes.subarray(i * PART_BYTES, (i + 1) * PART_BYTES));
    }
  }
  for (let i = parts; i < previousParts; i++) tables.messageParts.removeSync([message.id, i]);
  tables.messages.putSync(message.id, parts > 0 ? ({ id: message.id, parts } satisfies SplitHead) : message);
}

/** A record's bytes, encoded before its write transaction by the table's own encoder; stored inline. */
export interface EncodedMessageRecord {
  readonly message: Message;
  readonly bytes: Uint8Array;
  /** The parts the version it replaces has in message_parts (probed when encoding, when not surely inline). */
  readonly previousParts: number;
}

/**
 * Encodes a record ahead of the write that stores it (`placed` as putMessageRecord's), exactly as the write would
 * (storage/encoded-ahead). Null for a record surelySmall does not accept (putMessageRecord
 * then decides its layout in the write): an encoded record is always inline, as
 * putMessageRecord and removeMessageRecord assume of such a record.
 */
export function encodeMessageRecord(
  tables: Tables,
  message: Message,
  previous: Message,
  placed = false,
): EncodedMessageRecord | null {
  if (!surelySmall(message)) return null;
  const bytes = encodeAhead(tables.messages, placed ? message : storedForm(tables, message));
  if (bytes.length > MAX_INLINE_BYTES) return null;
  return { message, bytes, previousParts: previousPartsOf(tables, message, previous) };
}

/** How many parts the stored version of `message` has: `previous`, when the caller has it. */
function previousPartsOf(tables: Tables, message: Message, previous: Message | undefined): number {
  // A record in parts always has part 0: an inline one (nearly all) is not decoded to find out.
  // surelySmall depends on the record alone, so a version it accepts was written inline.
  const inlineBefore = previous !== undefined && previous.id === message.id && surelySmall(previous);
  return !inlineBefore && tables.messageParts.doesExist([message.id, 0]) ? partsOf(tables, message.id) : 0;
}

/**
 * Removes a message record whatever its layout; call inside a write transaction.
 * `stored` is the record as read: one surelySmall accepts was written inline, so its
 * parts need no probe (a topic deletion removes a thousand records, and reading each
 * head again to learn its layout decoded every one twice).
 */
export function removeMessageRecord(tables: Tables, stored: Message): void {
  const parts = surelySmall(stored) ? 0 : partsOf(tables, stored.id);
  for (let i = 0; i < parts; i++) tables.messageParts.removeSync([stored.id, i]);
  tables.messages.removeSync(stored.id);
}

/** Message `id` whatever its layout, its topic and history resolved through its topic row (if any), or undefined. */
export function getMessageRecord(tables: Tables, id: number): Message | undefined {
  const stored = getStoredMessageRecord(tables, id);
  if (stored === undefined) return undefined;
  // Most records were written after their row's last rename and read as stored (resolveRecord's first answer).
  const ref = stored.topicRef;
  if (ref === undefined || tables.topicRowCache.current(ref, stored.topicFrom ?? 0, stored.topic)) return stored;
  return resolveRecord(tables, stored);
}

/**
 * The record of message `id` as stored: a topic row's name and renames not applied
 * (verify, and readers of fields a rename does not change).
 */
export function getStoredMessageRecord(tables: Tables, id: number): Message | undefined {
  const value = tables.messages.get(id);
  if (value === undefined) return undefined;
  return isSplitHead(value) ? joinParts(tables, value) : (value as Message);
}

/**
 * The messages of `ids` that exist, in that order, resolved as getMessageRecord does; a
 * topic row is read once for a run of its messages (a move reads thousands of one topic).
 */
export function getMessageRecords(tables: Tables, ids: Iterable<number>): Message[] {
  const out: Message[] = [];
  let rowId = -1;
  let row = undefined as ReturnType<typeof getTopicRow>;
  for (const id of ids) {
    const stored = getStoredMessageRecord(tables, id);
    if (stored === undefined) continue;
    if (stored.topicRef !== undefined && stored.topicRef !== rowId) {
      rowId = stored.topicRef;
      row = getTopicRow(tables, rowId, stored.topicFrom);
    }
    out.push(stored.topicRef === undefined ? stored : resolveRecord(tables, stored, row));
  }
  return out;
}

/** Every message from `start` in ID order, resolved as getMessageRecord does (verify, tools and tests scan with it). */
export function* messageRecords(tables: Tables, start = FIRST_ID): Generator<Message> {
  // Consecutive messages mostly share a topic: its row is read once for them.
  let rowId = -1;
  let row = undefined as ReturnType<typeof getTopicRow>;
  for (const { value } of tables.messages.getRange({ start })) {
    const stored = isSplitHead(value) ? joinParts(tables, value) : (value as Message);
    if (stored.topicRef !== undefined && stored.topicRef !== rowId) {
      rowId = stored.topicRef;
      row = getTopicRow(tables, rowId, stored.topicFrom);
    }
    yield stored.topicRef === undefined ? stored : resolveRecord(tables, stored, row);
  }
}

function joinParts(tables: Tables, head: SplitHead): Message {
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < head.parts; i++) {
    const part = tables.messageParts.get([head.id, i]);
    if (part === undefined) throw new Error(`message ${head.id}: part ${i} of ${head.parts} is missing`);
    chunks.push(Buffer.from(part));
  }
  return codec.unpack(Buffer.concat(chunks)) as Message;
}

/**
 * How many parts the record of `id` has in message_parts (0 when inline or absent); verify compares it with the table.
 */
export function partsOf(tables: Tables, id: number): number {
  const value = tables.messages.get(id);
  return isSplitHead(value) ? value.parts : 0;
}
