/**
 * @module storage/tables
 * The LMDB environment and every named sub-database, declared once. Values are
 * msgpack (msgpackr, via lmdb-js) unless noted; keys are ordered-binary.
 *
 * | db                | key                              | value                         |
 * |-------------------|----------------------------------|-------------------------------|
 * | meta              | string                           | counters, schema version      |
 * | realms            | realmId (uint32)                 | Realm                         |
 * | users             | userId (uint32)                  | User                          |
 * | channels          | channelId (uint32)               | Channel                       |
 * | subscriptions     | [userId, channelId]              | Subscription                  |
 * | groups            | groupId (uint32)                 | UserGroup                     |
 * | conversations     | conversationId (uint32)          | Conversation                  |
 * | conversation_members | [realmId, members key]        | conversationId (index/conversations.ts) |
 * | user_topics       | [userId, channelId, topicKey]    | UserTopic                     |
 * | messages          | messageId (uint32, ascending)    | Message, or the head of one stored in parts |
 * | message_parts     | [messageId, part]                | msgpack slices of a large Message
 * (storage/message-records.ts) |
 * | message_meta      | messageId (uint32)               | MessageMeta (no content)      |
 * | date_message      | [dateSent, messageId]            | null (time index for anchors) |
 * | bitmap_chunks     | [bitmapKey, chunk (id >>> 16)]   | portable roaring bytes (base) |
 * |                   | [bitmapKey, chunk, 1]            | uint16 LE low bits XORed onto the base
 * (index/bitmap-store.ts) |
 * | change_log        | sequence (uint32)                | ChangeLogEntry                |
 * | user_settings     | userId (uint32)                  | UserSettingsRecord (overrides) |
 * | realm_setting_defaults | realmId (uint32)            | RealmSettingDefaultsRecord    |
 * | scheduled_messages| scheduledMessageId (uint32)      | ScheduledMessage              |
 * | scheduled_due     | [deliverAt, scheduledMessageId]  | null (pending ones, by time)  |
 * | presence          | userId (uint32)                  | PresenceRecord (flushed in batches) |
 * | playgrounds       | playgroundId (uint32)            | Playground                    |
 * | linkifiers        | linkifierId (uint32)             | Linkifier                     |
 * | channel_folders   | channelFolderId (uint32)         | ChannelFolder                 |
 * | realm_domains     | realmDomainId (uint32)           | RealmDomain                   |
 * | profile_fields    | profileFieldId (uint32)          | ProfileField (values: User.profileData) |
 * | drafts            | draftId (uint32)                 | Draft                         |
 * | saved_snippets    | savedSnippetId (uint32)          | SavedSnippet                  |
 * | passwords         | userId (uint32)                  | PasswordRecord (scrypt)       |
 * | devices           | deviceId (uint32)                | Device                        |
 * | push_outbox       | itemId (uint32, ascending)       | PushOutboxItem                |
 * | missed_emails     | userId (uint32)                  | MissedEmailBatch head (waiting for its email) |
 * | missed_email_items| [userId, messageId]              | the batch's items since schema 4 (trigger, group) |
 * | edit_email_chunks | [editId, chunk]                  | EditEmailChunk: users an edit's later write still
 * looks at for missed-message emails (actions/missed-message-emails.ts) |
 * | realm_emoji       | realmEmojiId (uint32)            | RealmEmoji                    |
 * | invites           | inviteId (uint32)                | Invite (email or reusable link) |
 * | email_changes     | confirmation key (string)        | EmailChange (pending or used) |
 * | outbox            | mailId (uint32)                  | OutboxMail (durable mail queue) |
 * | webhook_outbox    | itemId (uint32, ascending)       | WebhookOutboxItem (outgoing webhook calls) |
 * | attachments       | attachmentId (uint32)            | Attachment (bytes on disk)    |
 * | user_status       | userId (uint32)                  | UserStatusRecord              |
 * | muted_users       | muter's userId (uint32)          | MutedUsersRecord              |
 * | alert_words       | userId (uint32)                  | AlertWordsRecord              |
 * | bot_storage       | [botId, key]                     | the value (string)            |
 * | legacy_push_tokens| [userId, kind, sha256(token)]    | LegacyPushToken               |
 * | navigation_views  | userId (uint32)                  | NavigationViewsRecord         |
 * | web_sessions      | [userId, sha256(secret)]         | WebSessionRecord (actions/web-sessions.ts) |
 * | topics            | topic row ID (uint32)            | TopicRow (actions/topic-registry.ts) |
 * | topic_names       | [channelId, folded name, rowId]  | the row's name                |
 */
import { open, type Database, type RootDatabase } from "lmdb";
import type { ChangeKind } from "../events/change-set.js";
import { TopicRowCache } from "./topic-row-cache.js";

/**
 * 2: bitmap chunks may carry a delta entry ([key, chunk, 1]). A version-1 store has no
 * deltas and reads the same, so it is opened and marked 2 by its first write; a build
 * that reads only version 1 refuses a version-2 store instead of misreading it.
 *
 * 3: a deferred bitmap write's journal entry (meta deferredBitmapWrites:<seq>) may name
 * per-user flag keys as each flag's user IDs (`users`), and such entries last
 * (index/deferred-writes.ts). Older stores read the same; a version-2 build would miss
 * those keys, so it refuses the store.
 *
 * 4: a missed-email batch's items may be in missed_email_items (one key per message)
 * rather than in its missed_emails record. Older stores read the same; a version-3
 * build would send those emails without the items, so it refuses the store.
 */
/*
 * 5: a channel message's record may name a topic registry row (topicRef, topicFrom;
 * tables topics and topic_names) whose name is its topic and whose renames end its edit
 * history, and its message_meta then holds [channelId, topic, rowId]. Older stores read
 * the same (their records name no row until rewritten); a version-4 build would show
 * such a message's topic as it was before the renames, so it refuses the store.
 */
export const SCHEMA_VERSION = 5;
/** Oldest store format this build opens (and upgrades in place by writing). */
export const OLDEST_SCHEMA_VERSION = 1;
/** [key, chunk] holds a chunk's base bytes; [key, chunk, 1] its delta (index/bitmap-store.ts). */
export type BitmapChunkKey = [string, number] | [string, number, 1];
/** The first ID of every uint32-keyed table (0 is reserved, see openTables). */
export const FIRST_ID = 1;

export type Key = string | number | (string | number)[];

export interface Tables {
  readonly env: RootDatabase;
  readonly meta: Database<unknown, string>;
  readonly realms: Database<unknown, number>;
  readonly users: Database<unknown, number>;
  readonly channels: Database<unknown, number>;
  readonly subscriptions: Database<unknown, [number, number]>;
  readonly groups: Database<unknown, number>;
  readonly conversations: Database<unknown, number>;
  readonly conversationMembers: Database<unknown, [number, string]>;
  readonly userTopics: Database<unknown, [number, number, string]>;
  readonly messages: Database<unknown, number>;
  readonly messageParts: Database<Uint8Array, [number, number]>;
  readonly messageMeta: Database<unknown, number>;
  readonly dateMessage: Database<null, [number, number]>;
  readonly bitmapChunks: Database<Uint8Array, BitmapChunkKey>;
  readonly changeLog: Database<unknown, number>;
  readonly userSettings: Database<unknown, number>;
  readonly realmSettingDefaults: Database<unknown, number>;
  readonly scheduledMessages: Database<unknown, number>;
  readonly scheduledDue: Database<null, [number, number]>;
  readonly presence: Database<unknown, number>;
  readonly playgrounds: Database<unknown, number>;
  readonly linkifiers: Database<unknown, number>;
  readonly channelFolders: Database<unknown, number>;
  readonly realmDomains: Database<unknown, number>;
  readonly profileFields: Database<unknown, number>;
  readonly drafts: Database<unknown, number>;
  readonly savedSnippets: Database<unknown, number>;
  readonly passwords: Database<unknown, number>;
  readonly devices: Database<unknown, number>;
  readonly pushOutbox: Database<unknown, number>;
  readonly missedEmails: Database<unknown, number>;
  readonly missedEmailItems: Database<unknown, [number, number]>;
  readonly editEmailChunks: Database<unknown, [number, number]>;
  readonly realmEmoji: Database<unknown, number>;
  readonly invites: Database<unknown, number>;
  readonly emailChanges: Database<unknown, string>;
  readonly outbox: Database<unknown, number>;
  readonly webhookOutbox: Database<unknown, number>;
  readonly attachments: Database<unknown, number>;
  readonly userStatus: Database<unknown, number>;
  readonly mutedUsers: Database<unknown, number>;
  readonly alertWords: Database<unknown, number>;
  readonly botStorage: Database<unknown, [number, string]>;
  readonly legacyPushTokens: Database<unknown, [number, number, string]>;
  readonly navigationViews: Database<unknown, number>;
  readonly webSessions: Database<unknown, [number, string]>;
  readonly topics: Database<unknown, number>;
  /** Rows of `topics` as last read or written (storage/topic-rows reads through it). */
  readonly topicRowCache: TopicRowCache;
  readonly topicNames: Database<unknown, [number, string, number]>;
}

export type TableName = Exclude<keyof Tables, "env" | "topicRowCache">;

/**
 * What a table holds, which decides who must iterate it:
 * - entity: source records loaded into memory at open and reload (state.ts loaders);
 * - record: source records read on demand (messages);
 * - derived: rebuilt from records and compared by verify;
 * - state: engine bookkeeping (counters, schema version);
 * - log: the trimmed change log (sequence -> what a write changed).
 * The fingerprint of tests iterates every table.
 */
export type TableRole = "entity" | "record" | "derived" | "state" | "log";

export interface TableSpec {
  /** LMDB sub-database name. */
  readonly db: string;
  readonly role: TableRole;
  /** uint32 keys with msgpackr shared structures at key 0; msgpack keys otherwise. */
  readonly keys: "id" | "id-plain" | "msgpack";
  readonly values: "msgpack" | "binary";
  /**
   * The change-set kind a write to this table must declare (events/change-set.ts); null
   * for bookkeeping and for bitmaps (derived from changes named otherwise: flags,
   * messages, subscriptions). Checked on every write with PARLEY_CHECK_CHANGES=1.
   */
  readonly change: ChangeKind | null;
}

/**
 * The one table registry. Record<TableName, ...> is exhaustive: a table added to
 * Tables without an entry here does not compile, so open, reload, verify and the test
 * fingerprint (which all iterate this) cannot miss it.
 */
export const TABLE_SPECS = {
  meta: { db: "meta", role: "state", keys: "msgpack", values: "msgpack", change: null },
  realms: { db: "realms", role: "entity", keys: "id", values: "msgpack", change: "realm" },
  users: { db: "users", role: "entity", keys: "id", values: "msgpack", change: "user" },
  channels: { db: "channels", role: "entity", keys: "id", values: "msgpack", change: "channel" },
  subscriptions: { db: "subscriptions", role: "entity", keys: "msgpack", values: "msgpack", change: "subscription" },
  groups: { db: "groups", role: "entity", keys: "id", values: "msgpack", change: "group" },
  // Read on demand (index/conversations.ts): they grow with the history.
  conversations: { db: "conversations", role: "record", keys: "id", values: "msgpack", change: "conversation" },
  // Members -> conversation ID, written with each conversation; built once for older stores.
  conversationMembers: {
    db: "conversation_members",
    role: "derived",
    keys: "msgpack",
    values: "msgpack",
    change: "conversation",
  },
  // Read per user on demand (index/user-topics.ts): automatic follows grow with the history.
  userTopics: { db: "user_topics", role: "record", keys: "msgpack", values: "msgpack", change: "userTopic" },
  messages: { db: "messages", role: "record", keys: "id", values: "msgpack", change: "message" },
  // Large message records cut into slices that each fit a page (storage/message-records.ts).
  messageParts: { db: "message_parts", role: "record", keys: "msgpack", values: "binary", change: "message" },
  messageMeta: { db: "message_meta", role: "derived", keys: "id-plain", values: "msgpack", change: "message" },
  dateMessage: { db: "date_message", role: "derived", keys: "msgpack", values: "msgpack", change: "message" },
  bitmapChunks: { db: "bitmap_chunks", role: "derived", keys: "msgpack", values: "binary", change: null },
  changeLog: { db: "change_log", role: "log", keys: "id-plain", values: "msgpack", change: null },
  userSettings: { db: "user_settings", role: "entity", keys: "id", values: "msgpack", change: "userSettings" },
  realmSettingDefaults: {
    db: "realm_setting_defaults",
    role: "entity",
    keys: "id",
    values: "msgpack",
    change: "realmDefaults",
  },
  scheduledMessages: {
    db: "scheduled_messages",
    role: "entity",
    keys: "id",
    values: "msgpack",
    change: "scheduledMessage",
  },
  // The scheduler's queue: one key per pending message, written with the record.
  scheduledDue: {
    db: "scheduled_due",
    role: "derived",
    keys: "msgpack",
    values: "msgpack",
    change: "scheduledMessage",
  },
  // Written by flushPresence every few seconds, not per ping (actions/presence.ts).
  presence: { db: "presence", role: "entity", keys: "id", values: "msgpack", change: "presence" },
  playgrounds: { db: "playgrounds", role: "entity", keys: "id", values: "msgpack", change: "playgrounds" },
  linkifiers: { db: "linkifiers", role: "entity", keys: "id", values: "msgpack", change: "linkifiers" },
  channelFolders: { db: "channel_folders", role: "entity", keys: "id", values: "msgpack", change: "channelFolder" },
  realmDomains: { db: "realm_domains", role: "entity", keys: "id", values: "msgpack", change: "realmDomains" },
  profileFields: { db: "profile_fields", role: "entity", keys: "id", values: "msgpack", change: "profileFields" },
  drafts: { db: "drafts", role: "entity", keys: "id", values: "msgpack", change: "draft" },
  savedSnippets: { db: "saved_snippets", role: "entity", keys: "id", values: "msgpack", change: "savedSnippet" },
  // Apart from users so that no code path that renders a User can carry a hash; read on login only.
  passwords: { db: "passwords", role: "record", keys: "id", values: "msgpack", change: "password" },
  devices: { db: "devices", role: "entity", keys: "id", values: "msgpack", change: "device" },
  // Work for the push bouncer, written with its cause and deleted once delivered (src/push).
  pushOutbox: { db: "push_outbox", role: "record", keys: "id", values: "msgpack", change: "pushItem" },
  // Missed messages waiting for their user's batched email (actions/missed-message-emails.ts).
  missedEmails: { db: "missed_emails", role: "record", keys: "id", values: "msgpack", change: "missedEmail" },
  // One key per missed message of a batch, so adding one costs the same whatever the batch holds.
  missedEmailItems: {
    db: "missed_email_items",
    role: "record",
    keys: "msgpack",
    values: "msgpack",
    change: "missedEmail",
  },
  // Work an edit left to later writes (a wildcard added in a large channel), written in the edit's
  // transaction and removed by the write that does it; the writer resumes what a crash left at open.
  editEmailChunks: { db: "edit_email_chunks", role: "state", keys: "msgpack", values: "msgpack", change: null },
  // Custom emoji records; their images are files under DATA/uploads/avatars (http layer).
  realmEmoji: { db: "realm_emoji", role: "entity", keys: "id", values: "msgpack", change: "realmEmoji" },
  invites: { db: "invites", role: "entity", keys: "id", values: "msgpack", change: "invites" },
  emailChanges: { db: "email_changes", role: "entity", keys: "msgpack", values: "msgpack", change: "emailChange" },
  // Mail waiting for the sender (src/mail): written in the transaction of what caused it, removed once delivered.
  outbox: { db: "outbox", role: "entity", keys: "id", values: "msgpack", change: "mail" },
  // Calls to outgoing webhook bots (src/outgoing-webhooks): written with the message that triggers them.
  webhookOutbox: { db: "webhook_outbox", role: "record", keys: "id", values: "msgpack", change: "webhookItem" },
  // Uploaded files' records; the bytes are files under DATA/uploads (src/uploads).
  attachments: { db: "attachments", role: "entity", keys: "id", values: "msgpack", change: "attachment" },
  userStatus: { db: "user_status", role: "entity", keys: "id", values: "msgpack", change: "userStatus" },
  mutedUsers: { db: "muted_users", role: "entity", keys: "id", values: "msgpack", change: "mutedUsers" },
  alertWords: { db: "alert_words", role: "entity", keys: "id", values: "msgpack", change: "alertWords" },
  // Bots' key-value storage (/bot_storage), read per bot on demand: up to 10 million characters each.
  botStorage: { db: "bot_storage", role: "record", keys: "msgpack", values: "msgpack", change: "botStorage" },
  // Tokens of Zulip's legacy push endpoints: stored so that they can be removed, never sent to (src/push).
  legacyPushTokens: {
    db: "legacy_push_tokens",
    role: "record",
    keys: "msgpack",
    values: "msgpack",
    change: "legacyPushTokens",
  },
  navigationViews: {
    db: "navigation_views",
    role: "entity",
    keys: "id",
    values: "msgpack",
    change: "navigationViews",
  },
  // The web client's browser sessions, read per request that carries the cookie.
  webSessions: { db: "web_sessions", role: "record", keys: "msgpack", values: "msgpack", change: "webSession" },
  // The topic registry's rows (actions/topic-registry.ts), read on demand with the records that name them.
  topics: { db: "topics", role: "record", keys: "id", values: "msgpack", change: "topic" },
  // Channel and folded name -> the rows so named, written with each row.
  topicNames: { db: "topic_names", role: "derived", keys: "msgpack", values: "msgpack", change: "topic" },
} as const satisfies Readonly<Record<TableName, TableSpec>>;

export const TABLE_NAMES = Object.keys(TABLE_SPECS) as TableName[];

/**
 * The tables loaded into memory (role "entity"): each has an in-memory index in the
 * entity registry (index/entities/registry.ts), whose type is keyed by this.
 */
export type EntityTableName = {
  [T in TableName]: (typeof TABLE_SPECS)[T]["role"] extends "entity" ? T : never;
}[TableName];

/**
 * lmdb-js options (read by its native open, absent from its typings) bounding how many
 * free-page entries LMDB holds in memory. To place a value that needs several
 * contiguous pages (any value over ~2 KB), LMDB loads free-page records until it finds
 * a run, up to maxFreeSpaceToLoad entries (default 50,000), keeps the list in memory
 * while it is under maxFreeSpaceToRetain (default 75,000), and rewrites the part of it
 * that changed at every commit. On an aged store (the 1M dataset has ~23,000 free
 * pages) one 5,000-message flag update or 10 KB message made every later short send
 * cost 10-35 ms instead of ~1 ms, for hundreds of commits (bench/aged-store.ts).
 * Measured on that store (short-send median after a mix of bulk flag updates, large
 * messages and drafts): 5,000 entries 7.4 ms, 2,000 1.1 ms, 1,000 0.8 ms, 500 0.8 ms,
 * and the file grew by the same ~0.5 MB as with the defaults: LMDB still reuses free
 * single pages, and appends a run it does not find among those loaded.
 */
interface FreeSpaceOptions {
  readonly maxFreeSpaceToLoad: number;
  readonly maxFreeSpaceToRetain: number;
}
const MAX_FREE_SPACE_TO_LOAD = 1000;
const MAX_FREE_SPACE_TO_RETAIN = 1500;

/**
 * lmdb-js's MDB_NORDAHEAD (also absent from its typings): the map is advised random,
 * so a page fault reads that page, not the kernel's read-around window. Every read
 * here is a B-tree descent or a short range, and pages a store rewrote over its life
 * are scattered over the file, so the neighbours read around a fault are rarely the
 * next ones needed. On this bench machine (read_ahead_kb 8192) opening the 10M store
 * with a cold page cache took 1.5 s and its first channel window 1.2 s; without
 * read-around 0.42 s and 0.05 s. A 4 KB random read there costs ~50 µs.
 */
interface ReadAheadOptions {
  readonly noReadAhead: boolean;
}

export interface OpenTablesOptions {
  /** Skip fsync at commit: survives a process crash, not a power loss. */
  readonly noSync?: boolean;
  /**
   * Flush the data pages at commit but not the meta page (LMDB's MDB_NOMETASYNC: one disk
   * flush per commit instead of two). The store stays consistent; a system crash may undo
   * the last commit, which only a store that can get it back may accept: a cluster node's,
   * which applies it again from the replicated log (docs/cluster.md §6).
   */
  readonly noMetaSync?: boolean;
  /**
   * Open read-only (a follower store): LMDB refuses every write, lmdb-js defines no write
   * method, and no table is created (its writer, opened first, created them).
   */
  readonly readOnly?: boolean;
}

/**
 * LMDB's limit on named databases per environment, read at each open (not stored in
 * the file), so raising it needs no migration. Tables take 48 of it; the rest is room.
 */
export const MAX_DBS = 64;

/** Opens (creating if needed) the environment in `dir` and every table of the registry. */
export function openTables(dir: string, options: OpenTablesOptions = {}): Tables {
  // noSubdir: false explicitly: lmdb-js otherwise takes a directory name with a dot for a file name.
  const freeSpace: FreeSpaceOptions = {
    maxFreeSpaceToLoad: MAX_FREE_SPACE_TO_LOAD,
    maxFreeSpaceToRetain: MAX_FREE_SPACE_TO_RETAIN,
  };
  const readAhead: ReadAheadOptions = { noReadAhead: true };
  const env = open({
    path: dir,
    noSubdir: false,
    maxDbs: MAX_DBS,
    noSync: options.noSync ?? false,
    noMetaSync: options.noMetaSync ?? false,
    readOnly: options.readOnly ?? false,
    compression: false,
    ...freeSpace,
    ...readAhead,
  });
  const dbs: Record<string, Database<unknown, never>> = {};
  for (const name of TABLE_NAMES) {
    const spec = TABLE_SPECS[name];
    // Key 0 of each "id" table holds msgpackr's shared structures: IDs start at 1,
    // so scans of these tables start at FIRST_ID.
    dbs[name] = env.openDB<unknown, never>({
      name: spec.db,
      encoding: spec.values,
      ...(spec.keys === "msgpack" ? {} : { keyEncoding: "uint32" }),
      ...(spec.keys === "id" ? { sharedStructuresKey: 0 } : {}),
    });
  }
  return { env, ...dbs, topicRowCache: new TopicRowCache() } as unknown as Tables;
}

/** The msgpackr state lmdb-js keeps per table with shared structures (not in its typings). */
interface SharedStructuresCodec {
  structures?: unknown;
}

/**
 * After an aborted write transaction. msgpackr mints a record structure for each new
 * object shape and saves it at key 0 inside the running transaction; the abort rolls
 * that save back, but msgpackr still holds the structure in memory and later records
 * would reference it unsaved: committed, yet undecodable after a restart (the store
 * no longer opens). Marking the structures uninitialized makes msgpackr reload the
 * durable ones on the next encode or decode (its own recovery path for a declined save).
 */
export function forgetUncommittedStructures(tables: Tables): void {
  for (const name of TABLE_NAMES) {
    if (TABLE_SPECS[name].keys !== "id") continue;
    const codec = (tables[name] as unknown as { encoder?: SharedStructuresCodec }).encoder;
    if (!codec || !Array.isArray(codec.structures))
      throw new Error(`lmdb-js changed: no shared structures on table ${name}`);
    codec.structures = Object.assign([], { uninitialized: true, sharedLength: 0 });
  }
}
