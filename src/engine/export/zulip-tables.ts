/**
 * @module export/zulip-tables
 * A realm as the tables of a Zulip organization export (zerver/lib/export.py's
 * layout, what tools/import/zulip-export.ts reads): realm.json's tables and, per slice
 * of message IDs, a messages-NNNNNN.json's zerver_message and zerver_usermessage.
 * IDs are parley's own, so messages and users keep theirs; Zulip's Recipient rows,
 * which parley has no table for, get IDs derived from what they name (RECIPIENT_ID).
 *
 * Which messages: Zulip's export_partial_message_files. A public export holds the
 * messages of public channels. One with consent adds, for the users who allow it
 * (allow_private_data_export, active people): private channels with shared history
 * they were ever subscribed to, the messages of private channels with protected
 * history they received, and every direct message they sent or received; its
 * zerver_usermessage rows are those consenting users' only (a public export's are
 * everyone's), as in Zulip.
 *
 * Subscription histories become zerver_realmauditlog's subscription events, placed
 * between messages by event_last_message_id (parley's receive intervals are message
 * IDs, so the placement is exact); the importer replays them in that order.
 */
import { RoaringBitmap32, type Bitmap, type ReadonlyBitmap } from "../index/bitmap-store.js";
import { key } from "../index/keys.js";
import { hasRow } from "../access.js";
import { rowFlags } from "../queries/message-flags.js";
import type { ReceivedSets } from "../received.js";
import type { StoreState } from "../state.js";
import { SETTING_NAMES } from "../settings/defaults.js";
import { REALM_EXPORT_TYPE, SUBSCRIPTION_NOTIFICATIONS, type Message, type RealmExportType } from "../types.js";
import { RECIPIENT_ID, RECIPIENT_TYPE } from "./zulip-ids.js";
import { settingsTables } from "./zulip-settings-tables.js";
import { realmExtraTables } from "./zulip-realm-extras.js";
import { botProfileColumns, botTables } from "./zulip-bot-tables.js";
import { inviteTables } from "./zulip-invite-tables.js";
import { presenceTables } from "./zulip-presence-tables.js";

export type Row = Record<string, unknown>;
export type Tables = Record<string, Row[]>;

/** AuditLogEventType values for subscription changes. */
const AUDIT = { SUBSCRIPTION_CREATED: 301, SUBSCRIPTION_ACTIVATED: 302, SUBSCRIPTION_DEACTIVATED: 303 } as const;
/** UserMessage.ALL_FLAGS, in bit order (flags_mask). */
const USER_MESSAGE_FLAG_BITS: Readonly<Record<string, number>> = {
  read: 0,
  starred: 1,
  collapsed: 2,
  mentioned: 3,
  stream_wildcard_mentioned: 4,
  topic_wildcard_mentioned: 5,
  group_mentioned: 6,
  has_alert_word: 9,
  historical: 10,
  is_private: 11,
};
/** Zulip's Stream.topics_policy codes (StreamTopicsPolicyEnum). */
const TOPICS_POLICY = { inherit: 1, allow_empty_topic: 2, disable_empty_topic: 3, empty_topic_only: 4 } as const;

/** What the slices of one export share: the chosen messages and what the rows found along the way. */
export class ExportPlan {
  readonly realmId: number;
  readonly type: RealmExportType;
  /** Users whose zerver_usermessage rows are exported. */
  readonly rowUsers: readonly number[];
  readonly consented: ReadonlySet<number>;
  /** The exported message IDs, ascending (messages deleted meanwhile are skipped when read). */
  readonly messageIds: Uint32Array;
  /** Client name -> zerver_client ID. */
  readonly clients = new Map<string, number>();
  /** Group conversations (three or more people) of exported messages. */
  readonly groupConversations = new Set<number>();
  readonly reactions: Row[] = [];
  readonly rowUserSet: ReadonlySet<number>;
  /** Channel ID -> users with a subscription record of it (built at the first slice). */
  readonly channelSubscribers = new Map<number, readonly number[]>();
  /** Users with historical or granted rows (read at the first slice). */
  extraHolders: readonly number[] | undefined;
  nextUserMessageId = 1;

  constructor(
    realmId: number,
    type: RealmExportType,
    consented: ReadonlySet<number>,
    rowUsers: readonly number[],
    ids: Uint32Array,
  ) {
    this.realmId = realmId;
    this.type = type;
    this.consented = consented;
    this.rowUsers = rowUsers;
    this.rowUserSet = new Set(rowUsers);
    this.messageIds = ids;
  }
}

function orInto(target: Bitmap, part: ReadonlyBitmap): void {
  if (!part.isEmpty) target.orInPlace(part);
}

/**
 * Every message of the realm and every person's rows and private data, as if all consented:
 * the operator's copy of a whole realm (`parley realm move`), which no API request can ask for.
 */
export function planWholeExport(state: StoreState, realmId: number): ExportPlan {
  const everyone = [...state.usersOfRealm(realmId)].sort((x, y) => x - y);
  const ids = new RoaringBitmap32();
  orInto(ids, state.bitmaps.get(key.realm(realmId)));
  return new ExportPlan(realmId, REALM_EXPORT_TYPE.FULL_WITH_CONSENT, new Set(everyone), everyone, ids.toUint32Array());
}

/** Chooses the messages (see the module comment); `consented` as consentedUserIds gives it. */
export function planExport(
  state: StoreState,
  received: ReceivedSets,
  realmId: number,
  type: RealmExportType,
  consented: ReadonlySet<number>,
): ExportPlan {
  const b = state.bitmaps;
  const ids = new RoaringBitmap32();
  const withConsent = type === REALM_EXPORT_TYPE.FULL_WITH_CONSENT;
  for (const channel of state.channels.values()) {
    if (channel.realmId !== realmId) continue;
    const messages = b.get(key.channel(channel.id));
    if (!channel.inviteOnly) {
      orInto(ids, messages);
      continue;
    }
    if (!withConsent) continue;
    const subscribed = [...consented].filter((u) => state.subsByUser.get(u)?.has(channel.id) === true);
    if (subscribed.length === 0) continue;
    if (channel.historyPublicToSubscribers) orInto(ids, messages);
    else for (const user of subscribed) orInto(ids, received.restrictToPersonal(user, messages));
  }
  if (withConsent) {
    const direct = b.get(key.allDirect(realmId));
    for (const user of consented) {
      orInto(ids, b.get(key.userFlag(user, "dm")));
      orInto(ids, RoaringBitmap32.and(direct, b.get(key.sender(user))));
    }
  }
  const rowUsers = withConsent
    ? [...consented].sort((x, y) => x - y)
    : [...state.usersOfRealm(realmId)].sort((x, y) => x - y);
  return new ExportPlan(realmId, type, consented, rowUsers, ids.toUint32Array());
}

function recipientOf(state: StoreState, plan: ExportPlan, message: Message): number {
  if (message.recipient.type === "channel") return RECIPIENT_ID.stream(message.recipient.channelId);
  const conversation = state.conversations.get(message.recipient.conversationId);
  const members = conversation?.userIds ?? [message.senderId];
  if (members.length <= 2) {
    // Zulip addresses a one-to-one message to the other person's personal recipient (oneself: one's own).
    const other = members.find((u) => u !== message.senderId) ?? message.senderId;
    return RECIPIENT_ID.personal(other);
  }
  plan.groupConversations.add(message.recipient.conversationId);
  return RECIPIENT_ID.group(message.recipient.conversationId);
}

/** The largest ID (0 for none), without spreading a realm's worth of IDs into arguments. */
function maxKey(ids: Iterable<number>): number {
  let max = 0;
  for (const id of ids) if (id > max) max = id;
  return max;
}

/** The recipient of a direct conversation of `userId` with `others` (drafts, scheduled messages), or null. */
function directRecipient(
  state: StoreState,
  plan: ExportPlan,
  userId: number,
  others: readonly number[],
): number | null {
  const members = [...new Set([userId, ...others])].sort((x, y) => x - y);
  if (members.length <= 2) return RECIPIENT_ID.personal(members.find((u) => u !== userId) ?? userId);
  const conversationId = state.conversations.idOf(plan.realmId, members);
  if (conversationId === undefined) return null;
  plan.groupConversations.add(conversationId);
  return RECIPIENT_ID.group(conversationId);
}

function clientId(plan: ExportPlan, name: string): number {
  let id = plan.clients.get(name);
  if (id === undefined) plan.clients.set(name, (id = plan.clients.size + 1));
  return id;
}

function editHistoryJson(message: Message): string | null {
  if (message.editHistory === null) return null;
  return JSON.stringify(
    message.editHistory.map((e) => ({
      user_id: e.userId,
      timestamp: e.timestamp,
      ...(e.prevContent !== undefined ? { prev_content: e.prevContent } : {}),
      ...(e.prevRenderedContent !== undefined ? { prev_rendered_content: e.prevRenderedContent } : {}),
      ...(e.prevStream !== undefined ? { prev_stream: e.prevStream, stream: e.stream } : {}),
      ...(e.prevTopic !== undefined ? { prev_topic: e.prevTopic, topic: e.topic } : {}),
    })),
  );
}

/** Users who may hold a row of a channel message: everyone with a subscription record of it (any interval). */
function channelCandidates(state: StoreState, plan: ExportPlan, channelId: number): readonly number[] {
  if (plan.channelSubscribers.size === 0) {
    // One pass over every subscription record (a few per user), bucketed by channel.
    const byChannel = plan.channelSubscribers as Map<number, number[]>;
    for (const [userId, subs] of state.subsByUser)
      for (const channel of subs.keys()) {
        const list = byChannel.get(channel);
        if (list === undefined) byChannel.set(channel, [userId]);
        else list.push(userId);
      }
  }
  return plan.channelSubscribers.get(channelId) ?? [];
}

/** Users holding a stored row flag that adds rows beyond the intervals (historical, granted by a move). */
function extraRowHolders(state: StoreState): number[] {
  const out = new Set<number>();
  for (const flag of ["historical", "granted"] as const)
    for (const id of state.bitmaps.get(key.userFlagHolders(flag)).toArray()) out.add(id);
  return [...out];
}

/**
 * One step of a messages-NNNNNN.json: the messages of `ids` (ascending) that still
 * exist, read until their flag rows reach `maxRows` (at least one message), with
 * those rows. Rows are found per message from who could hold one (the channel's
 * subscribers, the sender, holders of stored rows; a direct message's members) and
 * checked exactly as the API's access rules check a row, so the cost follows the
 * rows written, not the realm's users. `consumed`: how many of `ids` were read.
 */
export function messageSlice(
  state: StoreState,
  plan: ExportPlan,
  ids: ArrayLike<number>,
  maxRows = Number.POSITIVE_INFINITY,
): { zerver_message: Row[]; zerver_usermessage: Row[]; consumed: number } {
  const messages: Row[] = [];
  const rows: Row[] = [];
  const rowUsers = plan.rowUserSet;
  plan.extraHolders ??= extraRowHolders(state);
  let consumed = 0;
  while (consumed < ids.length && (consumed === 0 || rows.length < maxRows)) {
    const message = state.messageRecord(ids[consumed++]!);
    if (!message || message.realmId !== plan.realmId) continue;
    messages.push(messageRow(state, plan, message));
    const recipient = message.recipient;
    const direct = recipient.type === "direct";
    const candidates =
      recipient.type === "direct"
        ? (state.conversations.get(recipient.conversationId)?.userIds ?? [message.senderId])
        : new Set([...channelCandidates(state, plan, recipient.channelId), message.senderId, ...plan.extraHolders]);
    const streamWildcard = message.wildcard === "stream";
    const mine: number[] = [];
    for (const user of candidates) if (rowUsers.has(user) && hasRow(state, user, message)) mine.push(user);
    mine.sort((x, y) => x - y);
    for (const user of mine) {
      let mask = direct ? 1 << USER_MESSAGE_FLAG_BITS["is_private"]! : 0;
      for (const flag of rowFlags(state, user, plan.realmId, message.id, { streamWildcard })) {
        const bit = USER_MESSAGE_FLAG_BITS[flag];
        if (bit !== undefined) mask |= 1 << bit;
      }
      rows.push({ id: plan.nextUserMessageId++, user_profile: user, message: message.id, flags_mask: mask });
    }
  }
  return { zerver_message: messages, zerver_usermessage: rows, consumed };
}

function messageRow(state: StoreState, plan: ExportPlan, message: Message): Row {
  for (const r of message.reactions)
    plan.reactions.push({
      id: plan.reactions.length + 1,
      user_profile: r.userId,
      message: message.id,
      emoji_name: r.emojiName,
      emoji_code: r.emojiCode,
      reaction_type: r.reactionType,
    });
  return {
    id: message.id,
    realm: message.realmId,
    sender: message.senderId,
    recipient: recipientOf(state, plan, message),
    subject: message.topic,
    is_channel_message: message.recipient.type === "channel",
    content: message.content,
    rendered_content: message.renderedContent,
    rendered_content_version: 1,
    date_sent: message.dateSent,
    // Zulip's column: the last change of any kind (its API's two timestamps follow from edit_history).
    last_edit_time: message.editHistory?.[0]?.timestamp ?? null,
    edit_history: editHistoryJson(message),
    sending_client: clientId(plan, message.client),
    has_attachment: message.hasAttachment,
    has_image: message.hasImage,
    has_link: message.hasLink,
    type: 1,
  };
}

/** realm.json's tables, once every message slice is written (they add clients, group conversations and reactions). */
export function realmTables(state: StoreState, plan: ExportPlan): Tables {
  const realm = state.realms.get(plan.realmId)!;
  const userIds = [...state.usersOfRealm(plan.realmId)].sort((x, y) => x - y);
  const users = userIds.map((id) => state.users.get(id)!);
  const channels = [...state.channels.values()].filter((c) => c.realmId === plan.realmId).sort((x, y) => x.id - y.id);
  const timeOfMessage = (id: number) => (id > 0 ? state.messageRecord(id)?.dateSent : undefined);

  const settings = settingsTables(state, {
    realmId: plan.realmId,
    type: plan.type,
    consented: plan.consented,
    clientId: (name) => clientId(plan, name),
    directRecipient: (userId, others) => directRecipient(state, plan, userId, others),
    maxGroupId: maxKey(state.groups.keys()),
  });
  const recipients: Row[] = [
    ...users.map((u) => ({ id: RECIPIENT_ID.personal(u.id), type: RECIPIENT_TYPE.PERSONAL, type_id: u.id })),
    ...channels.map((c) => ({ id: RECIPIENT_ID.stream(c.id), type: RECIPIENT_TYPE.STREAM, type_id: c.id })),
  ];
  const subscriptions: Row[] = [];
  const audit: Row[] = [];
  const subscribe = (row: Omit<Row, "id">) => subscriptions.push({ id: subscriptions.length + 1, ...row });
  for (const u of users) subscribe({ user_profile: u.id, recipient: RECIPIENT_ID.personal(u.id), active: u.isActive });
  const huddles: Row[] = [];
  for (const conversationId of [...plan.groupConversations].sort((x, y) => x - y)) {
    const conversation = state.conversations.get(conversationId);
    if (!conversation) continue;
    huddles.push({
      id: conversationId,
      huddle_hash: conversation.userIds.join(","),
      group_size: conversation.userIds.length,
    });
    recipients.push({
      id: RECIPIENT_ID.group(conversationId),
      type: RECIPIENT_TYPE.DIRECT_MESSAGE_GROUP,
      type_id: conversationId,
    });
    for (const member of conversation.userIds)
      subscribe({ user_profile: member, recipient: RECIPIENT_ID.group(conversationId), active: true });
  }
  for (const u of users) {
    for (const sub of [...(state.subsByUser.get(u.id)?.values() ?? [])].sort((x, y) => x.channelId - y.channelId)) {
      const channel = state.channels.get(sub.channelId);
      if (!channel) continue;
      subscribe({
        user_profile: u.id,
        recipient: RECIPIENT_ID.stream(sub.channelId),
        active: sub.active,
        is_muted: sub.isMuted,
        color: sub.color,
        pin_to_top: sub.pinToTop,
        ...Object.fromEntries(SUBSCRIPTION_NOTIFICATIONS.map((n) => [n, sub.notifications?.[n] ?? null])),
      });
      sub.intervals.forEach((interval, i) => {
        const opened = interval.from - 1;
        audit.push({
          event_type: i === 0 ? AUDIT.SUBSCRIPTION_CREATED : AUDIT.SUBSCRIPTION_ACTIVATED,
          event_time: timeOfMessage(opened) ?? channel.dateCreated,
          modified_user: u.id,
          modified_stream: sub.channelId,
          event_last_message_id: opened,
        });
        if (interval.to !== null) {
          const closed = interval.to - 1;
          audit.push({
            event_type: AUDIT.SUBSCRIPTION_DEACTIVATED,
            event_time: timeOfMessage(closed) ?? channel.dateCreated,
            modified_user: u.id,
            modified_stream: sub.channelId,
            event_last_message_id: closed,
          });
        }
      });
    }
  }
  audit.sort((x, y) => (x["event_last_message_id"] as number) - (y["event_last_message_id"] as number));
  audit.forEach((row, i) => (row["id"] = i + 1));

  const groups = [...state.groups.values()].filter((g) => g.realmId === plan.realmId).sort((x, y) => x.id - y.id);
  const memberships: Row[] = [];
  const subgroupRows: Row[] = [];
  for (const g of groups) {
    if (g.systemRole !== null) continue;
    for (const member of g.members)
      memberships.push({ id: memberships.length + 1, user_group: g.id, user_profile: member });
    for (const sub of g.subgroups) subgroupRows.push({ id: subgroupRows.length + 1, supergroup: g.id, subgroup: sub });
  }
  for (const m of settings.anonymousMembers) memberships.push({ id: memberships.length + 1, ...m });
  for (const m of settings.anonymousSubgroups) subgroupRows.push({ id: subgroupRows.length + 1, ...m });

  const userTopics: Row[] = [];
  for (const u of users)
    for (const t of state.userTopics.of(u.id).values()) {
      if (!state.channels.has(t.channelId)) continue;
      userTopics.push({
        id: userTopics.length + 1,
        user_profile: u.id,
        stream: t.channelId,
        recipient: RECIPIENT_ID.stream(t.channelId),
        topic_name: t.topic,
        last_updated: t.lastUpdated,
        visibility_policy: t.policy,
      });
    }

  return {
    zerver_realm: [
      {
        id: realm.id,
        string_id: realm.subdomain,
        name: realm.name,
        date_created: realm.dateCreated,
        deactivated: realm.deactivated,
        uuid: realm.uuid ?? null,
        topics_policy: TOPICS_POLICY[realm.topicsPolicy],
        ...settings.realmColumns,
      },
    ],
    zerver_userprofile: users.map((u) => {
      const settings = state.settingsOf(u.id);
      // An address no administrator may see stays out unless its owner consents (Zulip scrubs it too).
      const hidden = settings.email_address_visibility === 4 && !plan.consented.has(u.id);
      return {
        id: u.id,
        realm: u.realmId,
        email: u.email,
        delivery_email: hidden ? u.email : u.deliveryEmail,
        full_name: u.fullName,
        role: u.role,
        is_bot: u.isBot,
        bot_type: u.botType,
        bot_owner: u.botOwnerId,
        is_active: u.isActive,
        is_mirror_dummy: false,
        date_joined: u.dateJoined,
        timezone: u.timezone,
        recipient: RECIPIENT_ID.personal(u.id),
        ...botProfileColumns(u),
        // Zulip's avatar columns: "U" an uploaded image (avatar_hash: its file's name here), "G" Gravatar.
        avatar_source: u.avatarFile === undefined ? "G" : "U",
        avatar_version: u.avatarVersion,
        avatar_hash: u.avatarFile === undefined ? null : u.avatarFile.replace(/\.png$/, ""),
        // Zulip's UserProfile columns carry the personal settings under their API names.
        ...Object.fromEntries(SETTING_NAMES.map((name) => [name, settings[name]])),
      };
    }),
    zerver_userprofile_crossrealm: [],
    zerver_userprofile_mirrordummy: [],
    zerver_stream: channels.map((c) => ({
      id: c.id,
      realm: c.realmId,
      name: c.name,
      description: c.description,
      rendered_description: c.renderedDescription,
      invite_only: c.inviteOnly,
      history_public_to_subscribers: c.historyPublicToSubscribers,
      is_web_public: c.isWebPublic,
      deactivated: c.isArchived,
      date_created: c.dateCreated,
      creator: c.creatorId,
      recipient: RECIPIENT_ID.stream(c.id),
      message_retention_days: c.messageRetentionDays,
      topics_policy: TOPICS_POLICY[c.topicsPolicy],
      first_message_id: c.firstMessageId,
      folder: c.folderId ?? null,
      ...settings.streamColumns.get(c.id),
    })),
    zerver_defaultstream: channels
      .filter((c) => c.isDefault)
      .map((c, i) => ({ id: i + 1, realm: c.realmId, stream: c.id })),
    zerver_recipient: recipients,
    zerver_subscription: subscriptions,
    zerver_huddle: huddles,
    zerver_realmauditlog: audit,
    zerver_usergroup: [...groups.map((g) => ({ id: g.id, realm: g.realmId })), ...settings.anonymousGroups],
    zerver_namedusergroup: groups.map((g) => ({
      usergroup_ptr: g.id,
      realm_for_sharding: g.realmId,
      name: g.name,
      description: g.description,
      is_system_group: g.systemRole !== null,
      deactivated: g.deactivated,
      date_created: g.dateCreated,
      creator: g.creatorId,
      ...settings.groupColumns.get(g.id),
    })),
    zerver_usergroupmembership: memberships,
    zerver_groupgroupmembership: subgroupRows,
    zerver_usertopic: userTopics,
    zerver_reaction: plan.reactions,
    zerver_client: [...plan.clients].map(([name, id]) => ({ id, name })),
    ...settings.tables,
    ...realmExtraTables(state, plan.realmId, plan),
    ...botTables(state, userIds),
    ...inviteTables(state, plan.realmId),
    ...presenceTables(state, userIds),
  };
}

/** attachment.json's zerver_attachment, and the uploads to copy (path_id, size). */
export function attachmentTable(state: StoreState, plan: ExportPlan): Row[] {
  const exported = RoaringBitmap32.from(plan.messageIds);
  const rows: Row[] = [];
  for (const a of state.attachments.values()) {
    if (a.realmId !== plan.realmId) continue;
    const messages = a.messageIds.filter((id) => exported.has(id));
    // Zulip exports the uploads of exported messages (and, with consent, consenting owners' others).
    if (messages.length === 0 && !(plan.type === REALM_EXPORT_TYPE.FULL_WITH_CONSENT && plan.consented.has(a.ownerId)))
      continue;
    rows.push({
      id: a.id,
      realm: a.realmId,
      owner: a.ownerId,
      path_id: a.pathId,
      file_name: a.name,
      size: a.size,
      content_type: a.contentType,
      create_time: a.createTime,
      messages,
      scheduled_messages: [],
      is_realm_public: null,
      is_web_public: null,
    });
  }
  return rows.sort((x, y) => (x["id"] as number) - (y["id"] as number));
}
