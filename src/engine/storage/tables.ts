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
 * | user_topics       | [userId, channelId, topicKey]    | UserTopic                     |
 * | messages          | messageId (uint32, ascending)    | Message                       |
 * | message_meta      | messageId (uint32)               | MessageMeta (no content)      |
 * | date_message      | [dateSent, messageId]            | null (time index for anchors) |
 * | bitmap_chunks     | [bitmapKey, chunk (id >>> 16)]   | portable roaring bytes        |
 */
import { open, type Database, type RootDatabase } from "lmdb";

export const SCHEMA_VERSION = 1;
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
  readonly userTopics: Database<unknown, [number, number, string]>;
  readonly messages: Database<unknown, number>;
  readonly messageMeta: Database<unknown, number>;
  readonly dateMessage: Database<null, [number, number]>;
  readonly bitmapChunks: Database<Uint8Array, [string, number]>;
}

export interface OpenTablesOptions {
  /** Skip fsync at commit: survives a process crash, not a power loss. */
  readonly noSync?: boolean;
}

/** Opens (creating if needed) the environment in `dir`. */
export function openTables(dir: string, options: OpenTablesOptions = {}): Tables {
  // noSubdir: false explicitly: lmdb-js otherwise takes a directory name with a dot for a file name.
  const env = open({ path: dir, noSubdir: false, maxDbs: 32, noSync: options.noSync ?? false, compression: false });
  const msgpack = (name: string) => env.openDB<unknown, never>({ name, encoding: "msgpack" });
  // Key 0 of each uint32-keyed table holds msgpackr's shared structures: IDs start at 1,
  // so scans of these tables start at FIRST_ID.
  const byId = (name: string) => env.openDB<unknown, number>({ name, keyEncoding: "uint32", encoding: "msgpack", sharedStructuresKey: 0 });
  return {
    env,
    meta: msgpack("meta") as unknown as Database<unknown, string>,
    realms: byId("realms"),
    users: byId("users"),
    channels: byId("channels"),
    subscriptions: msgpack("subscriptions") as unknown as Database<unknown, [number, number]>,
    groups: byId("groups"),
    conversations: byId("conversations"),
    userTopics: msgpack("user_topics") as unknown as Database<unknown, [number, number, string]>,
    messages: byId("messages"),
    messageMeta: env.openDB<unknown, number>({ name: "message_meta", keyEncoding: "uint32", encoding: "msgpack" }),
    dateMessage: env.openDB<null, [number, number]>({ name: "date_message", encoding: "msgpack" }),
    bitmapChunks: env.openDB<Uint8Array, [string, number]>({ name: "bitmap_chunks", encoding: "binary" }),
  };
}
