/**
 * @module events/change-log
 * The change log: every committed write that changed anything gets a sequence number
 * and an entry written in the same transaction, so another process reading the same
 * LMDB environment can tail it (refresh its caches, feed its own queues) in commit
 * order. Entries name what changed, not whole records: a reader loads current records
 * itself. Each entry holds
 * - `changes`: one item per client event ([type, op, ...ids]);
 * - `set`: the write's change set (events/change-set.ts), encoded by `encodeChangeSet`
 *   and read back with `decodeChangeSet`, which is what a cache in another process
 *   needs. Entries written before change sets existed have no `set`: they decode as
 *   "everything may have changed".
 * Trimmed to the newest CHANGE_LOG_KEEP entries.
 */
import type { Tables } from "../storage/tables.js";
import type { EngineEvent } from "./types.js";
import {
  ChangeSetBuilder,
  ENTITY_KINDS,
  everythingChanged,
  MESSAGE_FIELDS,
  PAIR_KINDS,
  type ChangeSet,
  type EntityKind,
  type EntityOp,
  type MessageChange,
  type MessageField,
  type PairKind,
} from "./change-set.js";

/** Entries kept; older ones are deleted in batches of TRIM_EVERY as the log grows. */
export const CHANGE_LOG_KEEP = 100_000;
const TRIM_EVERY = 1000;

/**
 * What one event changed: [type, op, ...ids]. A long ascending ID list (marking a
 * backlog read changes 50k flags) is instead one packed form, [type, op, bytes]: the
 * gaps between IDs as unsigned LEB128 varints (packIds), read with changeLogIds().
 * As plain numbers such a list cost more to encode and write than the flag change.
 */
export type ChangeLogItem = readonly [string, string, ...number[]] | readonly [string, string, Uint8Array];

/** Lists from this long are packed when ascending. */
const PACK_FROM = 64;

/** Ascending IDs as LEB128 varints of their gaps (the first from 0). */
export function packIds(ids: readonly number[]): Uint8Array {
  const out = Buffer.allocUnsafe(ids.length * 5);
  let at = 0;
  let previous = 0;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    let gap = id - previous;
    previous = id;
    while (gap >= 0x80) {
      out[at++] = (gap & 0x7f) | 0x80;
      gap >>>= 7;
    }
    out[at++] = gap;
  }
  return out.subarray(0, at);
}

/** packIds' inverse. */
export function unpackIds(bytes: Uint8Array): number[] {
  const ids: number[] = [];
  let previous = 0;
  let i = 0;
  while (i < bytes.length) {
    let gap = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = bytes[i++]!;
      gap += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    previous += gap;
    ids.push(previous);
  }
  return ids;
}

/** The IDs an item names, whichever form it was logged in. */
export function changeLogIds(item: ChangeLogItem): number[] {
  const rest = item.slice(2);
  if (rest.length === 1 && rest[0] instanceof Uint8Array) return unpackIds(rest[0]);
  return rest.filter((x): x is number => typeof x === "number");
}

function isAscending(ids: readonly number[]): boolean {
  for (let i = 1; i < ids.length; i++) if (ids[i]! <= ids[i - 1]!) return false;
  return true;
}

export interface ChangeLogEntry {
  /** Commit time, UNIX seconds. */
  readonly at: number;
  /** One item per client event (none for a write that told clients nothing). */
  readonly changes: readonly ChangeLogItem[];
  /** The change set, as encodeChangeSet wrote it; absent in entries older than change sets. */
  readonly set?: readonly LoggedChange[];
  /** What a follower reloads (follower.ts); absent in entries older than followers. */
  readonly follow?: FollowerNotes;
}

/**
 * The exact storage keys a write changed, for a follower store to reload (follower.ts).
 * The change set says what changed in the API's terms (a realm's linkifiers, a message's
 * topic) and is what caches consume; a follower's memory mirrors tables and bitmaps, and
 * these name them. Cheap for the writer: a send writes no in-memory table, and its
 * bitmap keys are the BitmapStore's dirty keys, already at hand.
 */
export interface FollowerNotes {
  /**
   * Per in-memory table (role "entity") the write put or removed records of: [table,
   * ...keys], or [table] alone for more than MAX_LOGGED_ROWS keys (reload the table).
   */
  readonly rows?: readonly (readonly unknown[])[];
  /**
   * Bitmap keys whose chunks the transaction wrote (on its last entry): one string of
   * them separated by NUL (packBitmapKeys; no key holds one: topics and texts refuse it),
   * a list if one did, or 0 for more than MAX_LOGGED_BITMAP_KEYS (drop every cached bitmap).
   */
  readonly bitmaps?: string | readonly string[] | 0;
  /** 1 when the transaction changed the deferred bitmap-write journal (index/deferred-writes.ts). */
  readonly journal?: 1;
}

/** Past this many keys of one table, an entry says "the whole table" (a bulk load). */
export const MAX_LOGGED_ROWS = 1000;
/** Past this many written bitmap keys, an entry says "every bitmap" (a bulk load, a big move). */
export const MAX_LOGGED_BITMAP_KEYS = 20_000;

/**
 * One group of a logged change set, IDs last (plain, or packed as in ChangeLogItem):
 * - [entity kind, op ("a" | "c" | "r"), fields ("" for any, else comma-separated), ...ids];
 * - ["subscription" | "userTopic", userId, ...channelIds] (no channel: any of the user's);
 * - ["message", realmId, fields (comma-separated), ...messageIds];
 * - ["flags", userId, ...messageIds], or ["flags", userId, "=", i] when the IDs are those
 *   of the entry's i-th `changes` item (its update_message_flags event): a 50,000-ID list
 *   is then written once, not twice.
 */
export type LoggedChange = readonly (string | number | Uint8Array)[];

const OP_CODES: Readonly<Record<EntityOp, string>> = { added: "a", changed: "c", removed: "r" };
const OPS_BY_CODE: ReadonlyMap<string, EntityOp> = new Map(
  Object.entries(OP_CODES).map(([op, code]) => [code, op as EntityOp]),
);
const ENTITY_KIND_NAMES: ReadonlySet<string> = new Set(ENTITY_KINDS);
const PAIR_KIND_NAMES: ReadonlySet<string> = new Set(PAIR_KINDS);
const MESSAGE_FIELD_NAMES: ReadonlySet<string> = new Set(MESSAGE_FIELDS);

/** A head and its IDs: packed when long and ascending, else appended (concat: a list can be long). */
function withIds(head: readonly (string | number)[], ids: readonly number[]): LoggedChange {
  if (ids.length >= PACK_FROM && isAscending(ids)) return [...head, packIds(ids)];
  return (head as (string | number)[]).concat(ids);
}

function idsOf(item: LoggedChange, from: number): number[] {
  const rest = item.slice(from);
  if (rest.length === 1 && rest[0] instanceof Uint8Array) return unpackIds(rest[0]);
  return rest.filter((x): x is number => typeof x === "number");
}

/** A change set as the change log stores it (groups of IDs that share kind, op and fields). */
export function encodeChangeSet(set: ChangeSet, events: readonly EngineEvent[] = []): LoggedChange[] {
  const out: LoggedChange[] = [];
  for (const kind of ENTITY_KINDS) {
    if (set[kind].size === 0) continue;
    const groups = new Map<string, number[]>();
    for (const [id, change] of set[kind]) {
      const key = `${OP_CODES[change.op]}\u0000${change.fields === null ? "" : [...change.fields].join(",")}`;
      const ids = groups.get(key);
      if (ids) ids.push(id);
      else groups.set(key, [id]);
    }
    for (const [key, ids] of groups) {
      const [op, fields] = key.split("\u0000") as [string, string];
      out.push(withIds([kind, op, fields], ids));
    }
  }
  for (const kind of PAIR_KINDS) {
    for (const [userId, channels] of set[kind]) out.push([kind, userId, ...(channels ?? [])]);
  }
  // By change first: the builder shares one per realm and fields (no key string per message).
  // forEach, not for-of: no entry array per message (a move names 5,000).
  const byChange = new Map<MessageChange, number[]>();
  set.message.forEach((change, id) => {
    const ids = byChange.get(change);
    if (ids) ids.push(id);
    else byChange.set(change, [id]);
  });
  const messageGroups = new Map<string, { realmId: number; fields: string; ids: number[] }>();
  for (const [change, ids] of byChange) {
    const fields = [...change.fields].join(",");
    const key = `${change.realmId}\u0000${fields}`;
    const group = messageGroups.get(key);
    if (group) for (const id of ids) group.ids.push(id);
    else messageGroups.set(key, { realmId: change.realmId, fields, ids });
  }
  for (const { realmId, fields, ids } of messageGroups.values()) out.push(withIds(["message", realmId, fields], ids));
  // The builder keeps an event's own list when it is a user's only one: refer to it.
  const eventLists = new Map<readonly number[], number>();
  events.forEach((event, i) => {
    if (event.type === "update_message_flags") eventLists.set(event.messages, i);
  });
  for (const [userId, ids] of set.flags) {
    const item = eventLists.get(ids);
    out.push(item === undefined ? withIds(["flags", userId], ids) : ["flags", userId, "=", item]);
  }
  return out;
}

/**
 * The change set of a logged entry. Entries older than change sets, and groups of a
 * kind this build does not know (written by a newer one), read as "everything".
 */
export function decodeChangeSet(seq: number, entry: ChangeLogEntry): ChangeSet {
  if (entry.set === undefined) return everythingChanged(seq);
  const out = new ChangeSetBuilder();
  for (const item of entry.set) {
    const kind = item[0];
    if (typeof kind !== "string") return everythingChanged(seq);
    if (ENTITY_KIND_NAMES.has(kind)) {
      const op = OPS_BY_CODE.get(String(item[1]));
      if (op === undefined) return everythingChanged(seq);
      const fields = item[2] === "" ? null : String(item[2]).split(",");
      // Field names are the writer's record keys; a reader only compares them.
      for (const id of idsOf(item, 3)) out.entity(kind as EntityKind, id, op, fields as never[] | null);
    } else if (PAIR_KIND_NAMES.has(kind)) {
      const channels = idsOf(item, 2);
      if (channels.length === 0) out.pair(kind as PairKind, Number(item[1]), null);
      for (const channelId of channels) out.pair(kind as PairKind, Number(item[1]), channelId);
    } else if (kind === "message") {
      const fields = String(item[2]).split(",");
      if (!fields.every((f) => MESSAGE_FIELD_NAMES.has(f))) return everythingChanged(seq);
      const realmId = Number(item[1]);
      for (const id of idsOf(item, 3)) for (const field of fields) out.message(id, realmId, field as MessageField);
    } else if (kind === "flags") {
      const shared = item[2] === "=" ? entry.changes[Number(item[3])] : undefined;
      if (item[2] === "=" && shared === undefined) return everythingChanged(seq);
      out.flags(Number(item[1]), shared === undefined ? idsOf(item, 2) : changeLogIds(shared));
    } else {
      return everythingChanged(seq);
    }
  }
  return out.build(seq);
}

export function logEntryOf(event: EngineEvent): ChangeLogItem {
  switch (event.type) {
    case "message":
      return ["message", "add", event.message.id];
    case "update_message_flags":
      if (event.messages.length >= PACK_FROM && isAscending(event.messages))
        return ["update_message_flags", `${event.op}:${event.flag}`, packIds(event.messages)];
      // concat, not spread: an unordered list can be long too.
      return (["update_message_flags", `${event.op}:${event.flag}`] as (string | number)[]).concat(
        event.messages,
      ) as unknown as ChangeLogItem;
    case "delete_message":
      if (event.messageIds.length >= PACK_FROM) return ["delete_message", "delete", packIds(event.messageIds)];
      return ["delete_message", "delete", ...event.messageIds];
    case "reaction":
      return ["reaction", event.op, event.messageId, event.reaction.userId];
    case "submessage":
      return ["submessage", "add", event.messageId, event.submessage.id];
    case "update_message": {
      const what = `${event.content !== null ? "content" : ""}${event.move !== null ? "+move" : ""}`;
      if (event.messageIds.length >= PACK_FROM && isAscending(event.messageIds))
        return ["update_message", what, packIds(event.messageIds)];
      return (["update_message", what] as (string | number)[]).concat(event.messageIds) as unknown as ChangeLogItem;
    }
    case "subscription":
      switch (event.op) {
        case "add":
          return ["subscription", "add", event.userId, ...event.subscriptions.map((s) => s.channel.id)];
        case "remove":
          return ["subscription", "remove", event.userId, ...event.channels.map((c) => c.id)];
        case "update":
          return ["subscription", `update:${event.property}`, event.userId, event.channelId];
        default:
          return ["subscription", event.op, ...event.channelIds, 0, ...event.userIds];
      }
    case "stream":
      if (event.op === "update") return ["stream", `update:${event.property}`, event.channel.id];
      return ["stream", event.op, ...event.channels.map((c) => c.id)];
    case "default_streams":
      return ["default_streams", "update", ...event.channelIds];
    case "default_stream_groups":
      return ["default_stream_groups", "update", ...event.groups.map((g) => g.id)];
    case "channel_folder":
      if (event.op === "reorder") return ["channel_folder", "reorder", ...event.order];
      return ["channel_folder", event.op, event.folder.id];
    case "realm_bot":
      if (event.op === "add") return ["realm_bot", "add", event.bot.id];
      if (event.op === "update") return ["realm_bot", `update:${event.fields.join(",")}`, event.bot.id];
      return ["realm_bot", "delete", event.botId];
    case "realm_user":
      if (event.op === "add") return ["realm_user", "add", event.person.id];
      if (event.op === "remove") return ["realm_user", "remove", event.userId];
      return ["realm_user", `update:${Object.keys(event.changes).join(",")}`, event.userId];
    case "realm":
      return ["realm", event.op, event.realm.id];
    case "user_group":
      switch (event.op) {
        case "add":
          return ["user_group", "add", event.group.id];
        case "update":
          return ["user_group", "update", event.groupId];
        case "remove":
          return ["user_group", "remove", event.groupId];
        case "add_members":
        case "remove_members":
          return ["user_group", event.op, event.groupId, ...event.userIds];
        default:
          return ["user_group", event.op, event.groupId, ...event.subgroupIds];
      }
    case "user_topic":
      return ["user_topic", String(event.userTopic.policy), event.userTopic.userId, event.userTopic.channelId];
    case "typing":
      return ["typing", event.op, event.sender.id];
    case "typing_edit_message":
      return ["typing_edit_message", event.op, event.senderId, event.messageId];
    case "muted_topics":
      return ["muted_topics", "update", event.userId];
    case "presence":
      return ["presence", "update", event.user.id];
    case "realm_emoji":
      return ["realm_emoji", event.op, event.realmId, event.emoji.id];
    case "realm_domains":
      return ["realm_domains", event.op, event.realmId];
    case "custom_profile_fields":
      return ["custom_profile_fields", "update", event.realmId, ...event.fields.map((f) => f.id)];
    case "realm_playgrounds":
      return ["realm_playgrounds", "update", event.realmId, ...event.playgrounds.map((p) => p.id)];
    case "realm_export":
      return ["realm_export", "update", event.realmId, ...event.exports.map((e) => e.id)];
    case "realm_linkifiers":
      return ["realm_linkifiers", "update", event.realmId, ...event.linkifiers.map((l) => l.id)];
    case "scheduled_messages":
      return ["scheduled_messages", event.op, event.op === "remove" ? event.scheduledMessageId : event.scheduled.id];
    case "reminders":
      return ["reminders", event.op, event.op === "remove" ? event.reminderId : event.reminder.id];
    case "user_settings":
      return ["user_settings", `update:${event.property}`, ...event.userIds];
    case "realm_user_settings_defaults":
      return ["realm_user_settings_defaults", `update:${event.property}`, event.realmId];
    case "drafts":
      if (event.op === "add") return ["drafts", "add", event.userId, ...event.drafts.map((d) => d.id)];
      if (event.op === "update") return ["drafts", "update", event.draft.userId, event.draft.id];
      return ["drafts", "remove", event.userId, event.draftId];
    case "invites_changed":
      return ["invites_changed", "update", event.realmId];
    case "attachment":
      return ["attachment", event.op, event.attachment.ownerId, event.attachment.id];
    case "saved_snippets":
      return event.op === "remove"
        ? ["saved_snippets", "remove", event.userId, event.snippetId]
        : ["saved_snippets", event.op, event.snippet.userId, event.snippet.id];
    case "device":
      return ["device", event.op, event.userId, event.deviceId];
    case "user_status":
      return ["user_status", "update", event.userId];
    case "muted_users":
      return ["muted_users", "update", event.userId];
    case "alert_words":
      return ["alert_words", "update", event.userId];
    case "navigation_view":
      return ["navigation_view", event.op, event.userId];
  }
}

/** Deletes entries older than the newest CHANGE_LOG_KEEP, every TRIM_EVERY sequence numbers. */
export function trimChangeLog(tables: Tables, seq: number): void {
  if (seq % TRIM_EVERY !== 0 || seq <= CHANGE_LOG_KEEP) return;
  const end = seq - CHANGE_LOG_KEEP;
  for (const key of tables.changeLog.getKeys({ start: Math.max(1, end - TRIM_EVERY), end }))
    tables.changeLog.removeSync(key);
}

/** Entries after `afterSeq`, ascending (for a reader tailing the log). */
export function* changesSince(tables: Tables, afterSeq: number): Generator<{ seq: number; entry: ChangeLogEntry }> {
  for (const { key, value } of tables.changeLog.getRange({ start: afterSeq + 1 }))
    yield { seq: key, entry: value as ChangeLogEntry };
}

/**
 * Bitmap keys as one NUL-separated string: msgpack writes one string about as fast as
 * a number, and a send's ~15 keys as a list doubled the cost of encoding its entry.
 */
export function packBitmapKeys(keys: readonly string[]): string | readonly string[] {
  for (const key of keys) if (key.includes("\0")) return keys;
  return keys.join("\0");
}

/** packBitmapKeys' inverse. */
export function unpackBitmapKeys(packed: string | readonly string[]): readonly string[] {
  if (typeof packed !== "string") return packed;
  return packed === "" ? [] : packed.split("\0");
}

/** The newest logged sequence number (0 when the log is empty): one cursor step, for a follower's poll. */
export function lastLoggedSeq(tables: Tables): number {
  for (const key of tables.changeLog.getKeys({ reverse: true, limit: 1 })) return key;
  return 0;
}

/** The change sets logged after `afterSeq`, ascending: what a cache in another process replays. */
export function* changeSetsSince(tables: Tables, afterSeq: number): Generator<ChangeSet> {
  for (const { seq, entry } of changesSince(tables, afterSeq)) yield decodeChangeSet(seq, entry);
}
