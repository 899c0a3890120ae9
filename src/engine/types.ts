/**
 * @module types
 * The engine's records, as stored in LMDB (msgpack) and held in memory. Wire names
 * (snake_case) never appear here; src/http converts at its edge.
 */
import type { MessagePolicy } from "./settings/message-policy.js";
import type { RealmGroupSettingName, RealmProperties } from "./settings/realm-settings.js";

/** Zulip's roles. Lower is more powerful. */
export const ROLE = { OWNER: 100, ADMINISTRATOR: 200, MODERATOR: 300, MEMBER: 400, GUEST: 600 } as const;
export type Role = (typeof ROLE)[keyof typeof ROLE];
export const ROLES: readonly Role[] = [100, 200, 300, 400, 600];

/** Bot kinds: 1 generic, 2 incoming webhook, 3 outgoing webhook, 4 embedded. */
export type BotType = 1 | 2 | 3 | 4;

export interface Realm {
  readonly id: number;
  readonly subdomain: string;
  name: string;
  readonly dateCreated: number;
  deactivated: boolean;
  /** How the empty topic is shown to clients that do not understand it. */
  emptyTopicDisplayName: string;
  /** Realm-wide default for channels whose topicsPolicy is "inherit". */
  topicsPolicy: "allow_empty_topic" | "disable_empty_topic";
  /** Zulip's enable_spectator_access. */
  enableSpectatorAccess: boolean;
  /**
   * Zulip's new_stream_announcements_stream: where the notification bot announces
   * channels created with `announce`. null or absent (older records): nowhere.
   */
  newChannelAnnouncementsChannelId?: number | null;
  /** Zulip's Realm.uuid: how the push bouncer knows the realm. Absent on older records (see realmUuid). */
  uuid?: string;
  /** Zulip's can_add_custom_emoji_group; absent (older records): role:members, Zulip's default. */
  canAddCustomEmojiGroup?: GroupSettingValue;
  /** Message editing, moving and deletion rules an administrator changed (the rest are Zulip's defaults). */
  messagePolicy?: Partial<MessagePolicy<GroupSettingValue>>;
  /** Zulip's can_create_bots_group (any bot type); absent: role:members, Zulip's default. */
  canCreateBotsGroup?: GroupSettingValue;
  /** Zulip's can_create_write_only_bots_group (incoming webhooks only); absent: role:members. */
  canCreateWriteOnlyBotsGroup?: GroupSettingValue;
  /** PATCH /realm's other settings an administrator changed (settings/realm-settings; the rest are defaults). */
  properties?: Partial<RealmProperties>;
  /** Realm permission settings an administrator changed (settings/realm-settings' REALM_GROUP_SETTINGS). */
  groupSettings?: Partial<Record<RealmGroupSettingName, GroupSettingValue>>;
  /**
   * When role:fullmembers was last evaluated (access.ts fullMembersAsOf): set with
   * waiting_period_threshold and moved on by promoteNewFullMembers. Absent: never set.
   */
  fullMembersAsOf?: number;
  /** Zulip's DefaultStreamGroup rows: channel groups offered to new users at signup. Absent (older records): none. */
  defaultChannelGroups?: readonly DefaultChannelGroup[];
}

/** A default channel group (Zulip's DefaultStreamGroup), kept on its realm's record. */
export interface DefaultChannelGroup {
  /** Unique across realms (the counter nextDefaultChannelGroupId). */
  readonly id: number;
  readonly name: string;
  readonly description: string;
  /** In the order added; archiving a channel takes it out. */
  readonly channelIds: readonly number[];
}

export interface User {
  readonly id: number;
  readonly realmId: number;
  /** The API email: what Basic auth and the API use. */
  email: string;
  deliveryEmail: string;
  fullName: string;
  role: Role;
  readonly isBot: boolean;
  readonly botType: BotType | null;
  botOwnerId: number | null;
  isActive: boolean;
  apiKey: string;
  readonly dateJoined: number;
  timezone: string;
  avatarVersion: number;
  /** The uploaded avatar's file (a name under DATA/uploads/avatars/{realm}/); absent: Gravatar. */
  avatarFile?: string;
  isImportedStub: boolean;
  /** Custom profile field ID -> value. */
  profileData: Record<string, string | number[]>;
  /** Custom profile field ID -> the value rendered as Markdown (text fields only; absent on older records). */
  profileRendered?: Record<string, string>;
  /**
   * Zulip's can_change_user_emails special permission (granted by the server operator,
   * never through the API): with the owner role, changing other users' emails. Absent
   * on older records: false.
   */
  canChangeUserEmails?: boolean;
  /**
   * Zulip's can_create_users special permission (operator-granted, like
   * canChangeUserEmails): with the administrator role, POST /users. Absent: false.
   */
  canCreateUsers?: boolean;
  /** A bot's own settings (Zulip's Bot object); absent on people and on older bot records (defaults). */
  botConfig?: BotConfig;
}

/** Zulip's Service.GENERIC and Service.SLACK: how an outgoing webhook's payload is shaped. */
export type ServiceInterface = 1 | 2;

/** An outgoing webhook bot's endpoint (Zulip's Service row). */
export interface BotService {
  readonly name: string;
  readonly baseUrl: string;
  readonly interface: ServiceInterface;
  /** Sent with each payload so the receiver can tell the request came from this server. */
  readonly token: string;
}

/** What Zulip keeps on a bot's UserProfile and its Service and BotConfigData rows. */
export interface BotConfig {
  defaultSendingChannelId: number | null;
  defaultEventsRegisterChannelId: number | null;
  defaultAllPublicChannels: boolean;
  /** Outgoing webhook bots only. */
  service: BotService | null;
  /** Zulip's BotConfigData: key/value settings (an incoming webhook's integration_id, ...). */
  configData: Readonly<Record<string, string>>;
}

/** A group-setting value: a group ID, or an anonymous group of users and subgroups. */
export type GroupSettingValue =
  number | { readonly directMembers: readonly number[]; readonly directSubgroups: readonly number[] };

/** A change of a group setting, with the value the client last saw (Zulip's {new, old}). */
export interface GroupSettingChange {
  readonly new: GroupSettingValue;
  readonly old?: GroupSettingValue;
}

export type ChannelTopicsPolicy = "inherit" | "allow_empty_topic" | "disable_empty_topic" | "empty_topic_only";

export interface ChannelPermissions {
  canAddSubscribersGroup: GroupSettingValue;
  canRemoveSubscribersGroup: GroupSettingValue;
  canAdministerChannelGroup: GroupSettingValue;
  canDeleteAnyMessageGroup: GroupSettingValue;
  canDeleteOwnMessageGroup: GroupSettingValue;
  canMoveMessagesOutOfChannelGroup: GroupSettingValue;
  canSendMessageGroup: GroupSettingValue;
  canSubscribeGroup: GroupSettingValue;
  /**
   * Settings added after the first data directories were written: absent on older
   * records, where they mean their defaults (channelPermission in actions/channels.ts).
   */
  canMoveMessagesWithinChannelGroup?: GroupSettingValue;
  canResolveTopicsGroup?: GroupSettingValue;
  canCreateTopicGroup?: GroupSettingValue;
}

export interface Channel extends ChannelPermissions {
  readonly id: number;
  readonly realmId: number;
  name: string;
  description: string;
  renderedDescription: string;
  inviteOnly: boolean;
  isWebPublic: boolean;
  historyPublicToSubscribers: boolean;
  topicsPolicy: ChannelTopicsPolicy;
  /** null: realm default; -1: unlimited. */
  messageRetentionDays: number | null;
  readonly dateCreated: number;
  readonly creatorId: number | null;
  isArchived: boolean;
  isDefault: boolean;
  /** ID of the first message sent to it, or null. */
  firstMessageId: number | null;
  /** The channel folder it is in; absent (older records) or null: none. */
  folderId?: number | null;
}

/** A realm's channel folder (Zulip's ChannelFolder). */
export interface ChannelFolder {
  readonly id: number;
  readonly realmId: number;
  name: string;
  description: string;
  renderedDescription: string;
  /** Position in the realm's list (Zulip's `order`), from 0. */
  order: number;
  readonly dateCreated: number;
  readonly creatorId: number | null;
  isArchived: boolean;
}

/**
 * A period during which a user received a channel's messages: message IDs in
 * [from, to). `to` is null while it lasts. IDs, not times, so "received" is exact.
 */
export interface ReceiveInterval {
  readonly from: number;
  readonly to: number | null;
}

/** Zulip's per-subscription notification toggles. */
export type SubscriptionNotification =
  | "desktop_notifications"
  | "audible_notifications"
  | "push_notifications"
  | "email_notifications"
  | "wildcard_mentions_notify";
export const SUBSCRIPTION_NOTIFICATIONS: readonly SubscriptionNotification[] = [
  "desktop_notifications",
  "audible_notifications",
  "push_notifications",
  "email_notifications",
  "wildcard_mentions_notify",
];

export interface Subscription {
  readonly userId: number;
  readonly channelId: number;
  active: boolean;
  isMuted: boolean;
  color: string;
  pinToTop: boolean;
  /**
   * Per-channel notification overrides (null or absent: the user's global setting).
   * Absent on records written before they existed.
   */
  notifications?: Partial<Record<SubscriptionNotification, boolean | null>>;
  /** Every period the user received the channel's messages, oldest first. */
  intervals: ReceiveInterval[];
}

export interface UserGroup {
  readonly id: number;
  readonly realmId: number;
  name: string;
  description: string;
  /** System groups (role:members, ...) have membership derived from roles. */
  readonly systemRole: string | null;
  members: number[];
  subgroups: number[];
  deactivated: boolean;
  canManageGroup: GroupSettingValue;
  canMentionGroup: GroupSettingValue;
  /**
   * Settings added after the first data directories were written: absent on older
   * records, where they mean their defaults (groupSetting in actions/groups.ts).
   */
  canAddMembersGroup?: GroupSettingValue;
  canJoinGroup?: GroupSettingValue;
  canLeaveGroup?: GroupSettingValue;
  canRemoveMembersGroup?: GroupSettingValue;
  readonly dateCreated: number;
  readonly creatorId: number | null;
}

/** A direct-message conversation: its participants, sender included. */
export interface Conversation {
  readonly id: number;
  readonly realmId: number;
  /** Sorted ascending. One user: a conversation with oneself. */
  readonly userIds: readonly number[];
}

export interface Reaction {
  readonly emojiName: string;
  readonly emojiCode: string;
  readonly reactionType: "unicode_emoji" | "realm_emoji" | "zulip_extra_emoji";
  readonly userId: number;
}

/** One of a message's submessages (Zulip's SubMessage): a widget, or an event acting on it. */
export interface Submessage {
  readonly id: number;
  readonly senderId: number;
  /** "widget" for polls and todo lists; Zulip stores whatever a client sends. */
  readonly msgType: string;
  /** JSON text, stored as sent. */
  readonly content: string;
}

export interface EditHistoryEntry {
  readonly userId: number | null;
  readonly timestamp: number;
  readonly prevContent?: string;
  readonly prevRenderedContent?: string;
  readonly prevStream?: number;
  readonly prevTopic?: string;
  readonly stream?: number;
  readonly topic?: string;
}

export type MessageRecipient =
  | { readonly type: "channel"; readonly channelId: number }
  | { readonly type: "direct"; readonly conversationId: number };

export interface Message {
  readonly id: number;
  readonly realmId: number;
  readonly senderId: number;
  recipient: MessageRecipient;
  /** Topic as sent; "" for direct messages and for the empty ("general chat") topic. */
  topic: string;
  /** Raw Markdown. */
  content: string;
  renderedContent: string;
  readonly dateSent: number;
  readonly client: string;
  isMeMessage: boolean;
  hasLink: boolean;
  hasImage: boolean;
  hasAttachment: boolean;
  /** Users mentioned personally at send time (for the mentions: operator and verify). */
  mentionedUserIds: number[];
  mentionedGroupIds: number[];
  wildcard: "stream" | "topic" | null;
  reactions: Reaction[];
  /** Oldest first; absent when there are none (ordinary messages, and records older than widgets). */
  submessages?: Submessage[];
  editHistory: EditHistoryEntry[] | null;
  lastEditTimestamp: number | null;
  lastMovedTimestamp: number | null;
  /** Who deleted the earlier versions of its content (DELETE /messages/{id}/history); absent if nobody. */
  historyDeletedBy?: number;
  /**
   * The topic registry row (TopicRow) of a channel message stored since schema 5: its
   * topic is the row's name, and the row's renames from `topicFrom` on are the newest
   * entries of its history (storage/message-records resolves them; see actions/topic-registry).
   */
  topicRef?: number;
  /** How many of its row's renames existed when this record was last written. */
  topicFrom?: number;
}

/** A rename of a whole topic written once to its registry row (actions/topic-registry). */
export interface TopicRename {
  readonly userId: number | null;
  readonly timestamp: number;
  readonly prevTopic: string;
  readonly topic: string;
  /** Whether it counts for last_moved_timestamp (a resolve or unresolve does not). */
  readonly moved: boolean;
}

/** A topic of a channel as the messages that reference it see it: its name and how it got it. */
export interface TopicRow {
  readonly channelId: number;
  readonly name: string;
  /** Oldest first. */
  readonly renames: readonly TopicRename[];
}

/**
 * Where a message lives, without its content: what grouping queries (the unread
 * summary) need, at a fraction of a record's decode cost. Derived from Message.
 * [channelId, topic] for channel messages; [-conversationId, ""] for direct ones.
 */
export type MessageMeta = readonly [number, string];

export function messageMetaOf(message: Message): MessageMeta {
  return message.recipient.type === "channel"
    ? [message.recipient.channelId, message.topic]
    : [-message.recipient.conversationId, ""];
}

/** Per-user topic visibility policy: 0 none, 1 muted, 2 unmuted, 3 followed. */
export type VisibilityPolicy = 0 | 1 | 2 | 3;

export interface UserTopic {
  readonly userId: number;
  readonly channelId: number;
  /** Topic as last set (display form). */
  topic: string;
  policy: VisibilityPolicy;
  lastUpdated: number;
}

/** Where a scheduled message goes: a channel and topic, or users (IDs as given, sorted). */
export type ScheduledRecipient =
  | { readonly type: "channel"; readonly channelId: number; readonly topic: string }
  | { readonly type: "direct"; readonly userIds: readonly number[] };

/** A message to send later (Zulip's ScheduledMessage, delivery type "send later", or a reminder). */
export interface ScheduledMessage {
  readonly id: number;
  readonly realmId: number;
  readonly senderId: number;
  recipient: ScheduledRecipient;
  content: string;
  renderedContent: string;
  /** UNIX seconds. */
  deliverAt: number;
  readBySender: boolean;
  /** The client it was scheduled from; the delivered message is sent as it. */
  readonly client: string;
  failed: boolean;
  failureMessage: string | null;
  delivered: boolean;
  deliveredMessageId: number | null;
  /** Present on a reminder (Zulip's delivery type "remind"): a direct message to oneself Notification Bot sends. */
  readonly reminder?: ReminderTarget;
}

/** What a reminder is about (Zulip's reminder_target_message_id and reminder_note). */
export interface ReminderTarget {
  readonly messageId: number;
  /** The note as given; "" for none. */
  readonly note: string;
  /** The realm's URL when the reminder was made: its text links the message absolutely. */
  readonly realmUrl: string;
}

/**
 * A user's presence (Zulip's UserPresence): when they were last active and last
 * connected (UNIX seconds; lastActive null if they were only ever idle), and the
 * presence sequence number of the last change (Zulip's last_update_id).
 */
export interface PresenceRecord {
  readonly userId: number;
  readonly realmId: number;
  lastActive: number | null;
  lastConnected: number;
  lastUpdateId: number;
}

/**
 * A realm's custom emoji (Zulip's RealmEmoji). Deactivating keeps the record: old
 * messages and reactions still show it, and its name becomes free for a new one.
 */
export interface RealmEmoji {
  readonly id: number;
  readonly realmId: number;
  /** Zulip's emoji name rules: a-z, 0-9, `-` and `_`, ending in a letter or digit. */
  readonly name: string;
  readonly authorId: number | null;
  /** The image's file name under the realm's emoji directory (unguessable, with the format's extension). */
  readonly fileName: string;
  /** An animated GIF/WebP: a still PNG of its first frame sits beside it. */
  readonly isAnimated: boolean;
  readonly deactivated: boolean;
  /** Seconds since the epoch. */
  readonly dateCreated: number;
}

/** A realm's code playground (Zulip's RealmPlayground). */
export interface Playground {
  readonly id: number;
  readonly realmId: number;
  readonly name: string;
  readonly pygmentsLanguage: string;
  readonly urlTemplate: string;
}

/** Zulip's custom profile field types (CustomProfileField.SHORT_TEXT ... PRONOUNS). */
export const PROFILE_FIELD_TYPE = {
  SHORT_TEXT: 1,
  LONG_TEXT: 2,
  SELECT: 3,
  DATE: 4,
  URL: 5,
  USER: 6,
  EXTERNAL_ACCOUNT: 7,
  PRONOUNS: 8,
} as const;

/** A realm's custom profile field (Zulip's CustomProfileField); users' values are in User.profileData. */
export interface ProfileField {
  readonly id: number;
  readonly realmId: number;
  name: string;
  hint: string;
  /** One of PROFILE_FIELD_TYPE. */
  readonly type: number;
  /** JSON text of the options (select) or the account type (external account); "" for the other types. */
  fieldData: string;
  /** Position in the realm's list (Zulip's `order`). */
  order: number;
  displayInProfileSummary: boolean;
  required: boolean;
  editableByUser: boolean;
  useForUserMatching: boolean;
}

/** A domain whose addresses may join the realm (Zulip's RealmDomain), unique per realm. */
export interface RealmDomain {
  readonly id: number;
  readonly realmId: number;
  /** Lower case. */
  readonly domain: string;
  allowSubdomains: boolean;
}

/** A realm's linkifier (Zulip's RealmFilter): a pattern whose matches link to its URL template. */
export interface Linkifier {
  readonly id: number;
  readonly realmId: number;
  /** An RE2 pattern whose named groups are the template's variables. */
  readonly pattern: string;
  /** An RFC 6570 URL template. */
  readonly urlTemplate: string;
  /** Position in the realm's list (Zulip's `order`): earlier linkifiers win where matches overlap. */
  readonly order: number;
}

/** A draft's addressee kind, in Zulip's wire spelling: "" for an unaddressed draft. */
export type DraftType = "" | "stream" | "private";

/** A message being composed, kept for the user's other clients (Zulip's Draft). */
export interface Draft {
  readonly id: number;
  readonly userId: number;
  type: DraftType;
  /**
   * A channel draft: its channel ID; a direct one: the other participants (self alone for a note to self); otherwise
   * empty.
   */
  to: readonly number[];
  /** "" for direct and unaddressed drafts. */
  topic: string;
  content: string;
  /** UNIX seconds, microsecond precision. */
  lastEditTime: number;
}

/**
 * A user's status (Zulip's UserStatus): text and emoji. Zulip's deprecated `away` is
 * not stored here: it is the inverse of the presence_enabled setting.
 */
export interface UserStatusRecord {
  readonly userId: number;
  /** "" when none. */
  readonly statusText: string;
  /** "" when none (then emojiCode is "" and reactionType unicode_emoji). */
  readonly emojiName: string;
  readonly emojiCode: string;
  readonly reactionType: Reaction["reactionType"];
  /** UNIX seconds of the last change. */
  readonly timestamp: number;
}

/** A view in a user's left sidebar (Zulip's NavigationView): a built-in one's pinning, or a custom one. */
export interface NavigationView {
  /** The URL hash the view opens ("inbox", "narrow/is/starred", ...); unique per user. */
  readonly fragment: string;
  readonly isPinned: boolean;
  /** Custom views' name; null for built-in views. */
  readonly name: string | null;
}

/** One user's navigation views, in the order they were added. */
export interface NavigationViewsRecord {
  readonly userId: number;
  readonly views: readonly NavigationView[];
}

/** One user's alert words (Zulip's AlertWord rows of one user), lower-cased, in the order added. */
export interface AlertWordsRecord {
  readonly userId: number;
  readonly realmId: number;
  readonly words: readonly string[];
}

/** The users one user muted (Zulip's MutedUser rows of one muter), oldest first. */
export interface MutedUsersRecord {
  readonly userId: number;
  readonly muted: readonly { readonly id: number; /** UNIX seconds. */ readonly dateMuted: number }[];
}

/** A reusable piece of message text (Zulip's SavedSnippet). */
export interface SavedSnippet {
  readonly id: number;
  readonly userId: number;
  title: string;
  content: string;
  /** UNIX seconds. */
  readonly dateCreated: number;
}

/** Zulip's Device.PushTokenKind: which provider the bouncer delivers through. */
export type PushTokenKind = "fcm" | "apns";

/**
 * A logged-in client device (Zulip's Device, feature level 468). A mobile client
 * registers one, then configures E2EE push on it: a symmetric key the server encrypts
 * notifications with, and a provider token the bouncer knows by its token ID.
 */
export interface Device {
  readonly id: number;
  readonly userId: number;
  readonly realmId: number;
  /** Standard base64 of the cryptosystem byte (0x31, secretbox) and the 32-byte key; null before registration. */
  pushKey: string | null;
  /** The client's uint32 name for pushKey, sent with every notification. */
  pushKeyId: number | null;
  pushTokenKind: PushTokenKind | null;
  /** Base64 of 8 bytes: the token the bouncer has confirmed. */
  pushTokenId: string | null;
  /** Base64 of 8 bytes: the token sent to the bouncer and not yet confirmed. */
  pendingPushTokenId: string | null;
  /** UNIX seconds of the last token registration or rotation. */
  pushTokenLastUpdatedTimestamp: number | null;
  /** Zulip's error code when the bouncer refused the last registration. */
  pushRegistrationErrorCode: string | null;
}

/** Why a message notifies a user (Zulip's NotificationTriggers), in its order of precedence. */
export type PushTrigger =
  | "direct_message"
  | "mentioned"
  | "topic_wildcard_mentioned_in_followed_topic"
  | "stream_wildcard_mentioned_in_followed_topic"
  | "topic_wildcard_mentioned"
  | "stream_wildcard_mentioned"
  | "followed_topic_push_notify"
  | "stream_push_notify"
  /** One of the user's alert words (not a Zulip trigger: its server notifies alert words on desktops only). */
  | "alert_word";

/** Why a missed message is in a user's email (Zulip's NotificationTriggers for email, and alert words). */
export type EmailTrigger =
  Exclude<PushTrigger, "followed_topic_push_notify" | "stream_push_notify"> | "followed_topic_email_notify";

/**
 * A user's missed messages waiting for their email (Zulip's ScheduledMessageNotificationEmail
 * rows): sent together at `dueAt`, which the first of them set to its time plus the user's
 * batching period. Stored as a head in missed_emails (items empty since schema 4) and one
 * missed_email_items key per message (actions/missed-message-emails.ts).
 */
export interface MissedEmailBatch {
  readonly userId: number;
  /** UNIX seconds. */
  readonly dueAt: number;
  readonly items: readonly {
    readonly messageId: number;
    readonly trigger: EmailTrigger;
    /** The group whose mention triggered it (never for a personal mention). */
    readonly mentionedGroupId: number | null;
  }[];
}

/**
 * Work for the push bouncer, written in the same transaction as its cause (a message,
 * a flag change, a device registration) and removed once the bouncer has it.
 */
export type PushOutboxItem =
  | {
      readonly id: number;
      readonly kind: "message";
      readonly userId: number;
      readonly messageId: number;
      readonly trigger: PushTrigger;
      /** The group whose mention triggered it (never for a personal mention). */
      readonly mentionedGroupId: number | null;
      /** UNIX seconds. */
      readonly createdAt: number;
    }
  | {
      readonly id: number;
      readonly kind: "remove";
      readonly userId: number;
      readonly messageIds: readonly number[];
      readonly createdAt: number;
    }
  | {
      readonly id: number;
      readonly kind: "register";
      readonly userId: number;
      readonly deviceId: number;
      readonly tokenId: string;
      readonly tokenKind: PushTokenKind;
      readonly bouncerPublicKey: string;
      readonly encryptedPushRegistration: string;
      readonly createdAt: number;
    };

/**
 * An invitation (Zulip's PreregistrationUser for one address, MultiuseInvite for a
 * reusable link). The confirmation key is the secret in the link; it is never shown
 * by the API except as a reusable invitation's link.
 */
export interface Invite {
  readonly id: number;
  readonly realmId: number;
  /** "email": one address, used once; "multiuse": a link anyone holding it may use until it expires or is revoked. */
  readonly kind: "email" | "multiuse";
  /** The invited address (email invitations only). */
  readonly email: string | null;
  readonly invitedById: number;
  readonly invitedAs: Role;
  readonly channelIds: readonly number[];
  readonly groupIds: readonly number[];
  readonly includeRealmDefaultSubscriptions: boolean;
  readonly notifyReferrerOnJoin: boolean;
  /** null: the organization's default welcome text; "": no custom welcome message. */
  readonly welcomeMessageCustomText: string | null;
  /** UNIX seconds of creation (and of the last resend, for email invitations). */
  readonly invitedAt: number;
  /** UNIX seconds; null never expires. */
  readonly expiresAt: number | null;
  readonly key: string;
  /**
   * "used": an account was created from it (email invitations only); "revoked": withdrawn, or another invitation to the
   * address was used.
   */
  readonly status: "pending" | "used" | "revoked";
}

/** A requested change of a user's email address, applied when the link mailed to the new address is opened. */
export interface EmailChange {
  readonly key: string;
  readonly userId: number;
  readonly realmId: number;
  readonly oldEmail: string;
  readonly newEmail: string;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly usedAt: number | null;
}

/** A mail waiting in the outbox (the sender adds From and delivers it). */
export interface OutboxMail {
  readonly id: number;
  readonly to: readonly string[];
  readonly subject: string;
  /** The plain-text body. */
  readonly text: string;
  /** An HTML alternative of the body (missed-message emails); absent in mail queued before it existed. */
  readonly html?: string | null;
  /** Display name of the sender ("Alice (via parley)"); the address is the server's noreply one. */
  readonly fromName: string | null;
  readonly createdAt: number;
  readonly attempts: number;
  /** UNIX milliseconds of the next delivery attempt. */
  readonly nextAttemptAt: number;
  readonly lastError: string | null;
  /** "failed": gave up after too many attempts (kept for the operator, never retried). */
  readonly state: "pending" | "failed";
}

/** Why a message calls an outgoing webhook bot (Zulip's service event trigger). */
export type WebhookTrigger = "mention" | "direct_message";

/** A call to an outgoing webhook bot's service, waiting in the webhook outbox. */
export interface WebhookOutboxItem {
  readonly id: number;
  readonly botId: number;
  readonly messageId: number;
  readonly trigger: WebhookTrigger;
  /** UNIX seconds. */
  readonly createdAt: number;
  /** Failed attempts so far that are retried (timeouts, connection errors). */
  readonly attempts: number;
  /** UNIX milliseconds of the next attempt. */
  readonly nextAttemptAt: number;
  readonly lastError: string | null;
}

/** What the engine knows of an uploaded image (Zulip's ImageAttachment), read from its header at upload. */
export interface AttachmentImage {
  readonly width: number;
  readonly height: number;
  /** More than one frame (animated GIF, WebP, PNG). */
  readonly animated: boolean;
}

/**
 * An uploaded file (Zulip's Attachment). The bytes live outside LMDB, under the data
 * directory; this record is what access, listing, claiming and cleanup work from.
 */
export interface Attachment {
  readonly id: number;
  readonly realmId: number;
  readonly ownerId: number;
  /** `<realmId>/<2 hex>/<24 random>/<sanitized name>`: the URL path after /user_uploads/. */
  readonly pathId: string;
  /** The name as uploaded (URL-unquoted, NUL bytes removed). */
  readonly name: string;
  /** Bytes. */
  readonly size: number;
  readonly contentType: string;
  /** UNIX seconds. */
  readonly createTime: number;
  /** Messages that link the file (claimed on send), ascending. */
  readonly messageIds: readonly number[];
  /** Set for images the thumbnailer accepts; null otherwise. */
  readonly image: AttachmentImage | null;
  /**
   * UNIX seconds when a message claiming the file was last deleted: Zulip keeps a deleted
   * message's uploads with its archive for ARCHIVED_DATA_VACUUMING_DELAY_DAYS, so the
   * unclaimed-upload cleanup leaves the file alone until then.
   */
  readonly claimDeletedAt?: number;
}

/** A direct-message conversation of a user's recent_private_conversations. */
export interface RecentConversation {
  readonly maxMessageId: number;
  /** The other participants, ascending; empty for the conversation with oneself. */
  readonly userIds: readonly number[];
}

/** Zulip's RealmExport.type: what an export holds (EXPORT_FULL_WITHOUT_CONSENT is the command line's only). */
export const REALM_EXPORT_TYPE = { PUBLIC: 1, FULL_WITH_CONSENT: 2 } as const;
export type RealmExportType = (typeof REALM_EXPORT_TYPE)[keyof typeof REALM_EXPORT_TYPE];

/** Zulip's RealmExport.status. */
export const REALM_EXPORT_STATUS = { REQUESTED: 1, STARTED: 2, SUCCEEDED: 3, FAILED: 4, DELETED: 5 } as const;
export type RealmExportStatus = (typeof REALM_EXPORT_STATUS)[keyof typeof REALM_EXPORT_STATUS];

/** A data export of an organization (Zulip's RealmExport row); the tarball is a file outside LMDB. */
export interface RealmExport {
  readonly id: number;
  readonly realmId: number;
  readonly actingUserId: number;
  readonly type: RealmExportType;
  readonly status: RealmExportStatus;
  /** UNIX seconds. */
  readonly dateRequested: number;
  readonly dateStarted: number | null;
  readonly dateSucceeded: number | null;
  readonly dateFailed: number | null;
  readonly dateDeleted: number | null;
  /** The tarball, relative to the exports directory, once written. */
  readonly exportPath: string | null;
  /** Where it is downloaded (absolute, the realm's URL), once written. */
  readonly exportUrl: string | null;
  readonly sha256: string | null;
  readonly sizeBytes: number | null;
}
