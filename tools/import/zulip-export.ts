/**
 * @module tools/import/zulip-export
 * Reads a Zulip organization export (`manage.py export`: a .tar.gz, or the directory
 * it unpacks to) into typed rows. Only the tables and fields the importer uses are
 * parsed; every other table present is listed with its row count, so the import
 * report can say what was not carried over. Layout (zerver/lib/export.py):
 * realm.json holds the realm's tables (zerver_realm, zerver_userprofile,
 * zerver_stream, zerver_recipient, zerver_subscription, zerver_reaction, user groups,
 * zerver_usertopic, zerver_realmauditlog, ...); messages-000001.json,
 * messages-000002.json, ... hold zerver_message and zerver_usermessage.
 *
 * Data files are opened without following links and read only when they are regular
 * files within the size limit, so an export cannot make the reader open a file
 * outside it (and quote it in an error) or read a device forever. Tarballs are
 * unpacked by tools/import/tar.ts under the same rules.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  statSync,
  type Stats,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import type { AttachmentImage } from "../../src/engine/index.js";
import { describeBytes, ExportRefusedError, LIMIT_FLAGS, type ExportLimits } from "./limits.js";
import { unpackExportTarball, type UnpackProgress } from "./tar.js";

const id = z.number().int();
const time = z.number().nullable().optional();

const realmRow = z.looseObject({ id, string_id: z.string(), name: z.string(), date_created: time });
const userRow = z.looseObject({
  id,
  email: z.string(),
  delivery_email: z.string().nullable().optional(),
  full_name: z.string(),
  role: z.number().int().optional(),
  is_bot: z.boolean().optional(),
  bot_type: z.number().int().nullable().optional(),
  bot_owner: id.nullable().optional(),
  is_active: z.boolean().optional(),
  timezone: z.string().optional(),
});
const streamRow = z.looseObject({
  id,
  name: z.string(),
  description: z.string().optional(),
  invite_only: z.boolean().optional(),
  history_public_to_subscribers: z.boolean().optional(),
  is_web_public: z.boolean().optional(),
  deactivated: z.boolean().optional(),
  date_created: time,
  folder: id.nullable().optional(),
});
const recipientRow = z.looseObject({ id, type: z.number().int(), type_id: id });
const subscriptionRow = z.looseObject({
  user_profile: id,
  recipient: id,
  active: z.boolean().optional(),
  is_muted: z.boolean().optional(),
  color: z.string().optional(),
  pin_to_top: z.boolean().optional(),
});
const reactionRow = z.looseObject({
  user_profile: id,
  message: id,
  emoji_name: z.string(),
  emoji_code: z.string(),
  reaction_type: z.string(),
});
const groupRow = z.looseObject({
  id: id.optional(),
  usergroup_ptr: id.optional(),
  name: z.string().optional(),
  description: z.string().optional(),
  is_system_group: z.boolean().optional(),
  deactivated: z.boolean().optional(),
});
const membershipRow = z.looseObject({ user_group: id, user_profile: id });
const groupMembershipRow = z.looseObject({ supergroup: id, subgroup: id });
const userTopicRow = z.looseObject({
  user_profile: id,
  stream: id,
  topic_name: z.string(),
  visibility_policy: z.number().int().optional(),
});
const auditRow = z.looseObject({
  id: id.optional(),
  event_type: z.number().int(),
  event_time: z.number(),
  modified_user: id.nullable().optional(),
  modified_stream: id.nullable().optional(),
  event_last_message_id: id.nullable().optional(),
});
const messageRow = z.looseObject({
  id,
  sender: id,
  recipient: id,
  subject: z.string().optional(),
  topic_name: z.string().optional(),
  content: z.string(),
  date_sent: z.number(),
  sending_client: id.optional(),
  /** JSON text of the entries, newest first (tools/import/replay-history.ts parses it). */
  edit_history: z.string().nullable().optional(),
});
const userMessageRow = z.looseObject({
  user_profile: id,
  message: id,
  flags_mask: z.number().int().optional(),
  flags: z.union([z.number().int(), z.array(z.string())]).optional(),
});
const clientRow = z.looseObject({ id, name: z.string() });
const profileFieldRow = z.looseObject({
  id,
  name: z.string(),
  hint: z.string().optional(),
  order: z.number().int().optional(),
  field_type: z.number().int(),
  field_data: z.string().nullable().optional(),
  display_in_profile_summary: z.boolean().optional(),
  required: z.boolean().optional(),
  editable_by_user: z.boolean().optional(),
  use_for_user_matching: z.boolean().optional(),
});
const profileValueRow = z.looseObject({ user_profile: id, field: id, value: z.string() });
const linkifierRow = z.looseObject({
  id,
  pattern: z.string(),
  url_template: z.string().optional(),
  url_format_string: z.string().optional(),
  order: z.number().int().optional(),
});
const realmDomainRow = z.looseObject({ domain: z.string(), allow_subdomains: z.boolean().optional() });
const realmEmojiRow = z.looseObject({
  id,
  name: z.string(),
  author: id.nullable().optional(),
  file_name: z.string().nullable().optional(),
  is_animated: z.boolean().optional(),
  deactivated: z.boolean().optional(),
});
const defaultStreamRow = z.looseObject({ id, stream: id });
const channelFolderRow = z.looseObject({
  id,
  name: z.string(),
  description: z.string().optional(),
  order: z.number().int().optional(),
  is_archived: z.boolean().optional(),
});
const realmUserDefaultRow = z.looseObject({ realm: id.optional() });
const defaultStreamGroupRow = z.looseObject({
  id,
  name: z.string(),
  description: z.string().optional(),
  streams: z.array(id).optional(),
});
const playgroundRow = z.looseObject({ id, name: z.string(), pygments_language: z.string(), url_template: z.string() });
const savedSnippetRow = z.looseObject({
  user_profile: id,
  title: z.string(),
  content: z.string(),
  date_created: z.number().optional(),
});
const navigationViewRow = z.looseObject({
  user: id,
  fragment: z.string(),
  is_pinned: z.boolean().optional(),
  name: z.string().nullable().optional(),
});
const alertWordRow = z.looseObject({ user_profile: id, word: z.string() });
const mutedUserRow = z.looseObject({ user_profile: id, muted_user: id, date_muted: z.number().optional() });
const userStatusRow = z.looseObject({
  user_profile: id,
  timestamp: z.number().optional(),
  status_text: z.string().optional(),
  emoji_name: z.string().optional(),
  emoji_code: z.string().optional(),
  reaction_type: z.string().optional(),
});
const draftRow = z.looseObject({
  user_profile: id,
  recipient: id.nullable().optional(),
  topic: z.string().optional(),
  content: z.string(),
  last_edit_time: z.number().optional(),
});
const scheduledRow = z.looseObject({
  id,
  sender: id,
  recipient: id,
  subject: z.string().optional(),
  content: z.string(),
  sending_client: id.nullable().optional(),
  scheduled_timestamp: z.number(),
  read_by_sender: z.boolean().nullable().optional(),
  delivered: z.boolean().optional(),
  delivered_message: id.nullable().optional(),
  failed: z.boolean().optional(),
  failure_message: z.string().nullable().optional(),
  delivery_type: z.number().int().optional(),
  reminder_target_message_id: id.nullable().optional(),
  reminder_note: z.string().nullable().optional(),
  /** parley's own column (a reminder's links); absent from Zulip's exports. */
  reminder_realm_url: z.string().optional(),
});
const attachmentRow = z.looseObject({
  id,
  owner: id,
  path_id: z.string(),
  file_name: z.string(),
  size: z.number().int().nonnegative(),
  content_type: z.string().nullable().optional(),
  create_time: z.number().optional(),
  messages: z.array(id).optional(),
});
const serviceRow = z.looseObject({
  user_profile: id,
  name: z.string(),
  base_url: z.string(),
  interface: z.number().int().optional(),
  token: z.string(),
});
/** zerver_botconfigdata and zerver_botstoragedata: one key/value of a bot. */
const botKeyValueRow = z.looseObject({ bot_profile: id, key: z.string(), value: z.string() });
/** zerver_preregistrationuser (email invitations) and zerver_multiuseinvite (links): what parley's invitations hold. */
const inviteRow = z.looseObject({
  id,
  email: z.string().nullable().optional(),
  referred_by: id.nullable().optional(),
  invited_as: z.number().int().optional(),
  streams: z.array(id).optional(),
  groups: z.array(id).optional(),
  include_realm_default_subscriptions: z.boolean().optional(),
  notify_referrer_on_join: z.boolean().optional(),
  welcome_message_custom_text: z.string().nullable().optional(),
  invited_at: z.number().optional(),
  status: z.number().int().optional(),
  realm_creation: z.boolean().optional(),
});
/** A link key of an invitation (confirmation_confirmation, Zulip's Confirmation). */
const confirmationRow = z.looseObject({
  type: z.number().int(),
  object_id: id,
  confirmation_key: z.string(),
  date_sent: z.number().optional(),
  expiry_date: z.number().nullable().optional(),
});
const presenceRow = z.looseObject({
  user_profile: id,
  last_active_time: z.number().nullable().optional(),
  last_connected_time: z.number().nullable().optional(),
});
const avatarRecordRow = z.looseObject({ path: z.string(), user_profile_id: id });
const uploadRecordRow = z.looseObject({ path: z.string(), s3_path: z.string().optional() });
const emojiRecordRow = z.looseObject({ path: z.string(), file_name: z.string(), realm_id: id.optional() });
/** The can_*_group columns of zerver_stream (Zulip's Stream.stream_permission_group_settings). */
export const STREAM_GROUP_COLUMNS = [
  "can_add_subscribers_group",
  "can_administer_channel_group",
  "can_create_topic_group",
  "can_delete_any_message_group",
  "can_delete_own_message_group",
  "can_move_messages_out_of_channel_group",
  "can_move_messages_within_channel_group",
  "can_remove_subscribers_group",
  "can_resolve_topics_group",
  "can_send_message_group",
  "can_subscribe_group",
] as const;

export type ZulipUser = z.infer<typeof userRow>;
export type ZulipStream = z.infer<typeof streamRow>;
export type ZulipMessage = z.infer<typeof messageRow>;

/** Recipient.type in Zulip. */
export const RECIPIENT = { PERSONAL: 1, STREAM: 2, DIRECT_MESSAGE_GROUP: 3 } as const;
/** AuditLogEventType values the importer replays. */
export const AUDIT = { SUBSCRIPTION_CREATED: 301, SUBSCRIPTION_ACTIVATED: 302, SUBSCRIPTION_DEACTIVATED: 303 } as const;
/** UserMessage.ALL_FLAGS, in bit order. */
export const USER_MESSAGE_FLAGS = [
  "read",
  "starred",
  "collapsed",
  "mentioned",
  "stream_wildcard_mentioned",
  "topic_wildcard_mentioned",
  "group_mentioned",
  "force_expand",
  "force_collapse",
  "has_alert_word",
  "historical",
  "is_private",
  "active_mobile_push_notification",
] as const;

export interface ZulipExport {
  readonly realm: z.infer<typeof realmRow>;
  readonly users: ZulipUser[];
  readonly crossRealmUserIds: Set<number>;
  readonly streams: ZulipStream[];
  readonly recipients: Map<number, z.infer<typeof recipientRow>>;
  readonly subscriptions: z.infer<typeof subscriptionRow>[];
  readonly reactions: z.infer<typeof reactionRow>[];
  readonly groups: {
    id: number;
    name: string;
    description: string;
    deactivated: boolean;
    /** The group's own permission settings (can_manage_group, ...) as UserGroup IDs. */
    settings: Record<string, number>;
  }[];
  readonly groupMembers: z.infer<typeof membershipRow>[];
  readonly groupSubgroups: z.infer<typeof groupMembershipRow>[];
  readonly userTopics: z.infer<typeof userTopicRow>[];
  readonly audit: z.infer<typeof auditRow>[];
  readonly clients: Map<number, string>;
  readonly messages: ZulipMessage[];
  /** Flag names per [user, message], from flags_mask (or flags). */
  readonly userMessages: { user: number; message: number; flags: Set<string> }[];
  /** System groups by ID: their names (role:members, ...). */
  readonly systemGroups: Map<number, string>;
  /** Anonymous groups (a zerver_usergroup row without a named row), by ID. */
  readonly anonymousGroups: Set<number>;
  readonly profileFields: z.infer<typeof profileFieldRow>[];
  readonly profileValues: z.infer<typeof profileValueRow>[];
  readonly linkifiers: z.infer<typeof linkifierRow>[];
  readonly realmDomains: z.infer<typeof realmDomainRow>[];
  readonly realmEmoji: z.infer<typeof realmEmojiRow>[];
  readonly channelFolders: z.infer<typeof channelFolderRow>[];
  /** zerver_defaultstream: the channels new users join. */
  readonly defaultStreams: z.infer<typeof defaultStreamRow>[];
  /** zerver_realmuserdefault's one row (settings columns under their API names), if the export has it. */
  readonly realmUserDefaults: z.infer<typeof realmUserDefaultRow> | null;
  readonly defaultStreamGroups: z.infer<typeof defaultStreamGroupRow>[];
  readonly playgrounds: z.infer<typeof playgroundRow>[];
  readonly savedSnippets: z.infer<typeof savedSnippetRow>[];
  readonly navigationViews: z.infer<typeof navigationViewRow>[];
  readonly alertWords: z.infer<typeof alertWordRow>[];
  readonly mutedUsers: z.infer<typeof mutedUserRow>[];
  readonly userStatuses: z.infer<typeof userStatusRow>[];
  readonly drafts: z.infer<typeof draftRow>[];
  readonly scheduledMessages: z.infer<typeof scheduledRow>[];
  /** Outgoing webhook bots' endpoints. */
  readonly services: z.infer<typeof serviceRow>[];
  readonly botConfigData: z.infer<typeof botKeyValueRow>[];
  readonly botStorage: z.infer<typeof botKeyValueRow>[];
  readonly emailInvites: z.infer<typeof inviteRow>[];
  readonly multiuseInvites: z.infer<typeof inviteRow>[];
  readonly confirmations: z.infer<typeof confirmationRow>[];
  readonly presence: z.infer<typeof presenceRow>[];
  /** attachment.json's zerver_attachment. */
  readonly attachments: z.infer<typeof attachmentRow>[];
  /**
   * The export's files the importer copies, by the path their record names (an upload's
   * path_id, an emoji's <realm>/emoji/images/<file>): where they were unpacked. Only files
   * listed in uploads/records.json or emoji/records.json and present as regular files.
   */
  readonly uploadFiles: Map<string, string>;
  readonly emojiFiles: Map<string, string>;
  /** Zulip user ID -> their uploaded avatar's unpacked file (avatars/records.json; the full-size .png). */
  readonly avatarFiles: Map<number, string>;
  /** Image facts of uploads (path_id -> facts), filled from the files by import/upload-images before the replay. */
  readonly uploadImages: Map<string, AttachmentImage>;
  /** Tables present that the importer does not read, with row counts. */
  readonly ignoredTables: Record<string, number>;
}

const READ_TABLES = new Set([
  "zerver_realm",
  "zerver_userprofile",
  "zerver_userprofile_crossrealm",
  "zerver_userprofile_mirrordummy",
  "zerver_stream",
  "zerver_recipient",
  "zerver_subscription",
  "zerver_reaction",
  "zerver_usergroup",
  "zerver_namedusergroup",
  "zerver_usergroupmembership",
  "zerver_groupgroupmembership",
  "zerver_usertopic",
  "zerver_realmauditlog",
  "zerver_client",
  "zerver_huddle",
  "zerver_directmessagegroup",
  "zerver_customprofilefield",
  "zerver_customprofilefieldvalue",
  "zerver_realmfilter",
  "zerver_realmdomain",
  "zerver_realmemoji",
  "zerver_channelfolder",
  "zerver_defaultstream",
  "zerver_alertword",
  "zerver_realmuserdefault",
  "zerver_defaultstreamgroup",
  "zerver_realmplayground",
  "zerver_savedsnippet",
  "zerver_navigationview",
  "zerver_muteduser",
  "zerver_userstatus",
  "zerver_draft",
  "zerver_scheduledmessage",
  "zerver_service",
  "zerver_botconfigdata",
  "zerver_botstoragedata",
  "zerver_preregistrationuser",
  "zerver_multiuseinvite",
  "confirmation_confirmation",
  "zerver_userpresence",
]);

function rows<T extends z.ZodType>(
  data: Record<string, unknown>,
  table: string,
  schema: T,
  file: string,
): z.infer<T>[] {
  const value = data[table];
  if (value === undefined) return [];
  const parsed = z.array(schema).safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `${file}: ${table}[${String(issue?.path[0] ?? "?")}]: ${issue?.path.slice(1).join(".") ?? ""} ${issue?.message ?? "invalid"}`,
    );
  }
  return parsed.data;
}

function fileKind(stat: Stats): string {
  if (stat.isDirectory()) return "a directory";
  if (stat.isSymbolicLink()) return "a symbolic link";
  if (stat.isFIFO()) return "a FIFO (named pipe)";
  if (stat.isCharacterDevice()) return "a character device";
  if (stat.isBlockDevice()) return "a block device";
  if (stat.isSocket()) return "a socket";
  return "not a regular file";
}

/** Whether `path` names anything, links included (existsSync follows them). */
function present(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** A data file's text: a regular file (never followed through a link), within the size limit. */
function readDataFile(path: string, maxBytes: number): string {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer before it is refused.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP")
      throw new ExportRefusedError(`${path} is a symbolic link: an export holds regular files only`);
    throw new Error(`${path} cannot be read (${code ?? String(error)})`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile())
      throw new ExportRefusedError(`${path} is ${fileKind(stat)}: an export holds regular files only`);
    if (stat.size > maxBytes) {
      throw new ExportRefusedError(
        `${path} is ${describeBytes(stat.size)}, over the limit for a data file (.json, read into memory) ` +
          `of ${describeBytes(maxBytes)}; pass ${LIMIT_FLAGS.maxJsonBytes} SIZE to raise it`,
      );
    }
    // One byte more than the size seen: a file that grows while read is caught, not read on.
    const buffer = Buffer.alloc(stat.size + 1);
    let got = 0;
    for (let n = -1; n !== 0 && got < buffer.length; got += n) n = readSync(fd, buffer, got, buffer.length - got, null);
    if (got > stat.size) throw new ExportRefusedError(`${path} grew while it was read`);
    return buffer.toString("utf8", 0, got);
  } finally {
    closeSync(fd);
  }
}

function readJson(path: string, maxBytes: number): Record<string, unknown> {
  const raw = readDataFile(path, maxBytes);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    // V8 quotes the text around the error; the position is enough to find it.
    const reason = (error instanceof Error ? error.message : String(error)).replace(
      /, ".*"(\.\.\.)? is not valid JSON$/s,
      "",
    );
    throw new Error(`${path} is not valid JSON (${reason})`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new Error(`${path} does not hold a JSON object of tables`);
  return value as Record<string, unknown>;
}

function flagNames(row: z.infer<typeof userMessageRow>): Set<string> {
  const raw = row.flags_mask ?? row.flags ?? 0;
  if (Array.isArray(raw)) return new Set(raw);
  const names = new Set<string>();
  USER_MESSAGE_FLAGS.forEach((name, bit) => {
    if (raw & (1 << bit)) names.add(name);
  });
  return names;
}

/** The directory holding realm.json: the export itself, or its one subdirectory (tarballs hold zulip-export-XXXX/). */
function exportRoot(dir: string): string | null {
  if (present(join(dir, "realm.json"))) return dir;
  const subdirs = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory());
  if (subdirs.length === 1 && present(join(dir, subdirs[0]!.name, "realm.json"))) return join(dir, subdirs[0]!.name);
  return null;
}

/**
 * Opens `path` (a directory or a .tar.gz/.tgz/.tar) and returns where the export's
 * files are plus a cleanup for the temporary unpacked copy. Errors name the problem
 * with --from; a hostile or oversized archive is an ExportRefusedError.
 */
export async function openExport(
  path: string,
  limits: ExportLimits,
  onProgress?: UnpackProgress,
): Promise<{ root: string; cleanup: () => void }> {
  if (!present(path)) throw new Error(`--from ${path} does not exist`);
  if (statSync(path).isDirectory()) {
    const root = exportRoot(path);
    if (root === null) throw new Error(`--from ${path} is not a Zulip export: no realm.json in it`);
    return { root, cleanup: () => undefined };
  }
  if (!/\.(tar\.gz|tgz|tar)$/.test(path)) throw new Error(`--from ${path} is neither a directory nor a .tar.gz export`);
  const tmp = mkdtempSync(join(tmpdir(), "parley-import-"));
  const cleanup = () => rmSync(tmp, { recursive: true, force: true });
  try {
    await unpackExportTarball(path, tmp, limits, onProgress);
  } catch (error) {
    cleanup();
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof ExportRefusedError)
      throw new ExportRefusedError(`--from ${path} is refused: ${message}; nothing was imported`);
    throw new Error(`--from ${path} could not be unpacked: ${message}`);
  }
  const root = exportRoot(tmp);
  if (root === null) {
    cleanup();
    throw new Error(`--from ${path} is not a Zulip export: no realm.json in it`);
  }
  return { root, cleanup };
}

/** Reads and checks every file the importer needs. */
export function readExport(root: string, limits: Pick<ExportLimits, "maxJsonBytes">): ZulipExport {
  const realmFile = join(root, "realm.json");
  const attachmentFile = join(root, "attachment.json");
  const data = readJson(realmFile, limits.maxJsonBytes);
  const realms = rows(data, "zerver_realm", realmRow, realmFile);
  if (realms.length !== 1)
    throw new Error(`${realmFile}: zerver_realm must hold exactly one realm (it holds ${realms.length})`);
  const ignoredTables: Record<string, number> = {};
  for (const [table, value] of Object.entries(data))
    if (!READ_TABLES.has(table) && Array.isArray(value) && value.length > 0) ignoredTables[table] = value.length;

  // Named groups: zerver_namedusergroup (Zulip 10+, keyed by usergroup_ptr) or the older zerver_usergroup with names.
  const named = rows(data, "zerver_namedusergroup", groupRow, realmFile);
  const allGroups = rows(data, "zerver_usergroup", groupRow, realmFile);
  const namedGroups = (named.length > 0 ? named : allGroups).filter((g) => g.name !== undefined);
  const namedIds = new Set(namedGroups.map((g) => (g.usergroup_ptr ?? g.id)!));
  const systemGroups = new Map(
    namedGroups.filter((g) => g.is_system_group === true).map((g) => [(g.usergroup_ptr ?? g.id)!, g.name!]),
  );
  const anonymousGroups = new Set(
    allGroups.map((g) => g.id).filter((g): g is number => g !== undefined && !namedIds.has(g)),
  );
  const groups = namedGroups
    .filter((g) => g.is_system_group !== true)
    .map((g) => ({
      id: (g.usergroup_ptr ?? g.id)!,
      name: g.name!,
      description: g.description ?? "",
      deactivated: g.deactivated === true,
      settings: Object.fromEntries(
        Object.entries(g).filter(([k, v]) => /^can_[a-z_]+_group$/.test(k) && typeof v === "number"),
      ) as Record<string, number>,
    }));

  const messages: ZulipMessage[] = [];
  const userMessages: ZulipExport["userMessages"] = [];
  for (let n = 1; ; n++) {
    const file = join(root, `messages-${String(n).padStart(6, "0")}.json`);
    if (!present(file)) break;
    const chunk = readJson(file, limits.maxJsonBytes);
    messages.push(...rows(chunk, "zerver_message", messageRow, file));
    for (const row of rows(chunk, "zerver_usermessage", userMessageRow, file))
      userMessages.push({ user: row.user_profile, message: row.message, flags: flagNames(row) });
  }
  messages.sort((a, b) => a.id - b.id);

  return {
    realm: realms[0]!,
    users: rows(data, "zerver_userprofile", userRow, realmFile).sort((a, b) => a.id - b.id),
    crossRealmUserIds: new Set(
      rows(data, "zerver_userprofile_crossrealm", z.looseObject({ id }), realmFile).map((u) => u.id),
    ),
    streams: rows(data, "zerver_stream", streamRow, realmFile).sort((a, b) => a.id - b.id),
    recipients: new Map(rows(data, "zerver_recipient", recipientRow, realmFile).map((r) => [r.id, r])),
    subscriptions: rows(data, "zerver_subscription", subscriptionRow, realmFile),
    reactions: rows(data, "zerver_reaction", reactionRow, realmFile),
    groups: groups.sort((a, b) => a.id - b.id),
    groupMembers: rows(data, "zerver_usergroupmembership", membershipRow, realmFile),
    groupSubgroups: rows(data, "zerver_groupgroupmembership", groupMembershipRow, realmFile),
    userTopics: rows(data, "zerver_usertopic", userTopicRow, realmFile),
    audit: rows(data, "zerver_realmauditlog", auditRow, realmFile),
    clients: new Map(rows(data, "zerver_client", clientRow, realmFile).map((c) => [c.id, c.name])),
    messages,
    userMessages,
    systemGroups,
    anonymousGroups,
    profileFields: rows(data, "zerver_customprofilefield", profileFieldRow, realmFile),
    profileValues: rows(data, "zerver_customprofilefieldvalue", profileValueRow, realmFile),
    linkifiers: rows(data, "zerver_realmfilter", linkifierRow, realmFile),
    realmDomains: rows(data, "zerver_realmdomain", realmDomainRow, realmFile),
    realmEmoji: rows(data, "zerver_realmemoji", realmEmojiRow, realmFile),
    channelFolders: rows(data, "zerver_channelfolder", channelFolderRow, realmFile),
    defaultStreams: rows(data, "zerver_defaultstream", defaultStreamRow, realmFile),
    realmUserDefaults: rows(data, "zerver_realmuserdefault", realmUserDefaultRow, realmFile)[0] ?? null,
    defaultStreamGroups: rows(data, "zerver_defaultstreamgroup", defaultStreamGroupRow, realmFile),
    playgrounds: rows(data, "zerver_realmplayground", playgroundRow, realmFile),
    savedSnippets: rows(data, "zerver_savedsnippet", savedSnippetRow, realmFile),
    navigationViews: rows(data, "zerver_navigationview", navigationViewRow, realmFile),
    alertWords: rows(data, "zerver_alertword", alertWordRow, realmFile),
    mutedUsers: rows(data, "zerver_muteduser", mutedUserRow, realmFile),
    userStatuses: rows(data, "zerver_userstatus", userStatusRow, realmFile),
    drafts: rows(data, "zerver_draft", draftRow, realmFile),
    scheduledMessages: rows(data, "zerver_scheduledmessage", scheduledRow, realmFile),
    services: rows(data, "zerver_service", serviceRow, realmFile),
    botConfigData: rows(data, "zerver_botconfigdata", botKeyValueRow, realmFile),
    botStorage: rows(data, "zerver_botstoragedata", botKeyValueRow, realmFile),
    emailInvites: rows(data, "zerver_preregistrationuser", inviteRow, realmFile),
    multiuseInvites: rows(data, "zerver_multiuseinvite", inviteRow, realmFile),
    confirmations: rows(data, "confirmation_confirmation", confirmationRow, realmFile),
    presence: rows(data, "zerver_userpresence", presenceRow, realmFile),
    attachments: present(attachmentFile)
      ? rows(readJson(attachmentFile, limits.maxJsonBytes), "zerver_attachment", attachmentRow, attachmentFile)
      : [],
    uploadFiles: listedFiles(root, "uploads", uploadRecordRow, limits),
    emojiFiles: listedFiles(root, "emoji", emojiRecordRow, limits),
    avatarFiles: avatarFiles(root, limits),
    uploadImages: new Map(),
    ignoredTables,
  };
}

/**
 * The files a records.json lists (Zulip's uploads/ and emoji/ folders): record path ->
 * unpacked file, for regular files inside the folder only (no link is followed, no
 * path leaves it).
 */
function listedFiles(
  root: string,
  folder: "uploads" | "emoji" | "avatars",
  schema: z.ZodType<{ path: string }>,
  limits: Pick<ExportLimits, "maxJsonBytes">,
): Map<string, string> {
  const out = new Map<string, string>();
  const recordsFile = join(root, folder, "records.json");
  if (!present(recordsFile)) return out;
  const raw = readDataFile(recordsFile, limits.maxJsonBytes);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new Error(`${recordsFile} is not valid JSON`);
  }
  const parsed = z.array(schema).safeParse(value);
  if (!parsed.success) throw new Error(`${recordsFile} is not a list of file records with a path`);
  for (const record of parsed.data) {
    const parts = record.path.split("/");
    if (parts.some((p) => p === "" || p === "." || p === "..")) continue;
    const file = join(root, folder, ...parts);
    try {
      if (lstatSync(file).isFile()) out.set(record.path, file);
    } catch {
      // Listed but absent: the record's file was not exported; the replay reports it.
    }
  }
  return out;
}

/**
 * Each user's uploaded avatar: Zulip lists <hash>.original, <hash>.png and
 * <hash>-medium.png per user; the .png is the full-size one parley keeps (100×100).
 */
function avatarFiles(root: string, limits: Pick<ExportLimits, "maxJsonBytes">): Map<number, string> {
  const out = new Map<number, string>();
  const files = listedFiles(root, "avatars", avatarRecordRow, limits);
  if (files.size === 0) return out;
  const raw = JSON.parse(readDataFile(join(root, "avatars", "records.json"), limits.maxJsonBytes)) as unknown;
  for (const record of z.array(avatarRecordRow).parse(raw)) {
    const file = files.get(record.path);
    if (file !== undefined && record.path.endsWith(".png") && !record.path.endsWith("-medium.png"))
      out.set(record.user_profile_id, file);
  }
  return out;
}
