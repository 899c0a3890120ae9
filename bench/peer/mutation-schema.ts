/**
 * @module bench/peer/mutation-schema
 * What the peer needs beyond the read benchmarks' tables for Zulip's edit, move and
 * delete SQL (issue #28's rows), added after the load:
 *
 * - the archive tables move_messages_to_archive writes (zerver_archivetransaction,
 *   zerver_archivedmessage, zerver_archivedusermessage and the reaction, submessage and
 *   attachment tables and their archives), with the indexes Django creates for them
 *   (primary keys, one per foreign key and per db_index field, unique_together);
 * - the live reaction, submessage and attachment tables (empty: the dataset has none,
 *   but Zulip queries and deletes from them on these paths);
 * - the columns these paths filter on that the read schema left out
 *   (zerver_subscription.is_user_active, zerver_userprofile.role), at their defaults;
 * - zerver_usertopic's unique (user_profile_id, stream_id, lower(topic_name)) index,
 *   which bulk_set_user_topic_visibility_policy_in_database's ON CONFLICT names, and
 *   identity defaults for the small tables these paths insert into.
 */
import type pg from "pg";

const ARCHIVE_TABLES = [
  `CREATE TABLE zerver_archivetransaction (id serial PRIMARY KEY, timestamp timestamptz NOT NULL DEFAULT now(),
     restored boolean NOT NULL DEFAULT false, restored_timestamp timestamptz, protect_from_deletion boolean NOT NULL DEFAULT false,
     type smallint NOT NULL, realm_id integer)`,
  `CREATE INDEX zerver_archivetransaction_timestamp ON zerver_archivetransaction (timestamp)`,
  `CREATE INDEX zerver_archivetransaction_restored ON zerver_archivetransaction (restored)`,
  `CREATE INDEX zerver_archivetransaction_restored_timestamp ON zerver_archivetransaction (restored_timestamp)`,
  `CREATE INDEX zerver_archivetransaction_protect ON zerver_archivetransaction (protect_from_deletion)`,
  `CREATE INDEX zerver_archivetransaction_type ON zerver_archivetransaction (type)`,
  `CREATE INDEX zerver_archivetransaction_realm_id ON zerver_archivetransaction (realm_id)`,
  // AbstractMessage's columns (search_tsvector is Message's own) plus the transaction.
  `CREATE TABLE zerver_archivedmessage (id integer PRIMARY KEY, sender_id integer NOT NULL, recipient_id integer NOT NULL,
     realm_id integer NOT NULL, type smallint NOT NULL DEFAULT 1, subject varchar(60) NOT NULL, content text NOT NULL,
     rendered_content text, rendered_content_version integer, date_sent timestamptz NOT NULL, sending_client_id integer NOT NULL,
     last_edit_time timestamptz, edit_history text, has_attachment boolean NOT NULL, has_image boolean NOT NULL,
     has_link boolean NOT NULL, is_channel_message boolean NOT NULL DEFAULT true, archive_transaction_id integer NOT NULL)`,
  ...[
    "sender_id",
    "recipient_id",
    "realm_id",
    "sending_client_id",
    "archive_transaction_id",
    "subject",
    "date_sent",
    "has_attachment",
    "has_image",
    "has_link",
    "is_channel_message",
  ].map((c) => `CREATE INDEX zerver_archivedmessage_${c} ON zerver_archivedmessage (${c})`),
  `CREATE INDEX zerver_archivedmessage_subject_like ON zerver_archivedmessage (subject varchar_pattern_ops)`,
  `CREATE TABLE zerver_archivedusermessage (id bigint PRIMARY KEY, user_profile_id integer NOT NULL, message_id integer NOT NULL,
     flags bigint NOT NULL)`,
  `CREATE UNIQUE INDEX zerver_archivedusermessage_user_message ON zerver_archivedusermessage (user_profile_id, message_id)`,
  `CREATE INDEX zerver_archivedusermessage_user_profile_id ON zerver_archivedusermessage (user_profile_id)`,
  `CREATE INDEX zerver_archivedusermessage_message_id ON zerver_archivedusermessage (message_id)`,
];

/** A reaction or submessage table and its archive: same columns, keyed by message. */
function messageKeyed(name: string, columns: string): string[] {
  return [false, true].flatMap((archived) => {
    const table = archived ? `zerver_archived${name}` : `zerver_${name}`;
    return [
      `CREATE TABLE ${table} (id ${archived ? "integer PRIMARY KEY" : "serial PRIMARY KEY"}, message_id integer NOT NULL, ${columns})`,
      `CREATE INDEX ${table}_message_id ON ${table} (message_id)`,
    ];
  });
}

const MESSAGE_KEYED = [
  ...messageKeyed(
    "reaction",
    "user_profile_id integer NOT NULL, emoji_name text NOT NULL, reaction_type varchar(30) NOT NULL, emoji_code text NOT NULL",
  ),
  ...messageKeyed("submessage", "sender_id integer NOT NULL, msg_type text NOT NULL, content text NOT NULL"),
];

const ATTACHMENTS = [false, true].flatMap((archived) => {
  const table = archived ? "zerver_archivedattachment" : "zerver_attachment";
  const through = `${table}_messages`;
  const [a, m] = archived ? ["archivedattachment_id", "archivedmessage_id"] : ["attachment_id", "message_id"];
  return [
    `CREATE TABLE ${table} (id ${archived ? "integer PRIMARY KEY" : "serial PRIMARY KEY"}, file_name text NOT NULL,
       path_id text NOT NULL, owner_id integer NOT NULL, realm_id integer NOT NULL, create_time timestamptz NOT NULL,
       size integer NOT NULL, is_realm_public boolean, is_web_public boolean, content_type text)`,
    `CREATE UNIQUE INDEX ${table}_path_id ON ${table} (path_id)`,
    `CREATE INDEX ${table}_owner_id ON ${table} (owner_id)`,
    `CREATE INDEX ${table}_realm_id ON ${table} (realm_id)`,
    `CREATE TABLE ${through} (id ${archived ? "integer PRIMARY KEY" : "serial PRIMARY KEY"}, ${a} integer NOT NULL, ${m} integer NOT NULL)`,
    `CREATE UNIQUE INDEX ${through}_pair ON ${through} (${a}, ${m})`,
    `CREATE INDEX ${through}_${m} ON ${through} (${m})`,
  ];
});

const SMALL_TABLE_CHANGES = [
  `ALTER TABLE zerver_subscription ADD COLUMN is_user_active boolean NOT NULL DEFAULT true`,
  // Zulip's UserProfile.ROLE_MEMBER (400); the owner is made ROLE_REALM_OWNER (100) below.
  `ALTER TABLE zerver_userprofile ADD COLUMN role smallint NOT NULL DEFAULT 400`,
  `CREATE UNIQUE INDEX zerver_usertopic_uniq ON zerver_usertopic (user_profile_id, stream_id, lower(topic_name::text))`,
  `CREATE INDEX zerver_usertopic_stream_topic ON zerver_usertopic (stream_id, upper(topic_name::text))`,
];

/** The identity default a table needs once this run inserts rows into it (IDs above the loaded ones). */
async function addIdentity(db: pg.Client, table: string): Promise<void> {
  const max = (await db.query<{ m: number | null }>(`SELECT max(id) AS m FROM ${table}`)).rows[0]?.m ?? 0;
  await db.query(`ALTER TABLE ${table} ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (START WITH ${max + 1})`);
}

/** Creates the tables and columns above; `ownerId` gets the realm owner's role. */
export async function prepareMutationTables(db: pg.Client, ownerId: number): Promise<void> {
  await db.query("BEGIN");
  for (const sql of [...ARCHIVE_TABLES, ...MESSAGE_KEYED, ...ATTACHMENTS, ...SMALL_TABLE_CHANGES]) await db.query(sql);
  await db.query(`UPDATE zerver_userprofile SET role = 100 WHERE id = ${ownerId}`);
  for (const table of ["zerver_usertopic", "zerver_subscription"]) await addIdentity(db, table);
  await db.query("COMMIT");
  await db.query("ANALYZE zerver_subscription, zerver_userprofile, zerver_usertopic");
}
