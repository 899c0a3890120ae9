/**
 * @module events/types
 * Every change the engine makes, as a discriminated union named after Zulip's event
 * types and ops. Payloads carry engine records (camelCase); the realtime layer turns
 * them into Zulip's wire shapes per queue (apply_markdown, client_gravatar, ...),
 * because one change reaches clients that asked for different shapes.
 *
 * Each emitted event comes with its audience: the user IDs that must receive it,
 * decided in the engine under its access rules (private channels, guests, DMs).
 */
import type { ApiFlag } from "../flags.js";
import type { MessagePolicy } from "../settings/message-policy.js";
import type {
  BotConfig,
  Channel,
  ChannelFolder,
  DefaultChannelGroup,
  Device,
  Draft,
  GroupSettingValue,
  SubscriptionNotification,
  Message,
  MessageRecipient,
  Playground,
  Linkifier,
  ProfileField,
  PresenceRecord,
  Reaction,
  Realm,
  Role,
  SavedSnippet,
  MutedUsersRecord,
  NavigationView,
  ScheduledMessage,
  Submessage,
  Subscription,
  User,
  UserGroup,
  UserTopic,
  RealmEmoji,
  RealmExport,
  Attachment,
} from "../types.js";
import type { SettingName, SettingValue } from "../settings/defaults.js";

/** Who must receive an event. Valid only during delivery (it may view live state). */
export interface Audience {
  has(userId: number): boolean;
  /** An upper bound of the members (for choosing the cheaper side of a fan-out). */
  readonly size: number;
  [Symbol.iterator](): Iterator<number>;
}

/** Where a message lives, for update_message_flags' message_details. */
export interface MessageDetail {
  readonly recipient: MessageRecipient;
  readonly topic: string;
  /** Participants of a direct message (self included). */
  readonly userIds?: readonly number[];
  readonly mentioned: boolean;
}

export type EngineEvent =
  | {
      readonly type: "message";
      readonly message: Message;
      /** The recipient's flags at send time. */
      flagsFor(userId: number): readonly ApiFlag[];
      /** A public channel: delivered also to the realm's all_public_streams queues. */
      readonly publicChannelRealmId: number | null;
      /** The sending request's queue and local ID (local_message_id echo). */
      readonly origin: MessageOrigin | null;
    }
  /**
   * Zulip's update_message (rendering_only false): a content edit, a move, or both, as
   * one event. Always false: a stored message is re-rendered only by a user's edit (no
   * link previews or background re-renders, Zulip's rendering_only true events). Its
   * audience is who Zulip sends it to; each recipient gets their own flags.
   */
  | {
      readonly type: "update_message";
      readonly realmId: number;
      /** The editor. */
      readonly userId: number;
      /** UNIX seconds. */
      readonly editTimestamp: number;
      readonly messageId: number;
      /** Every message the edit changed, ascending (the target included). */
      readonly messageIds: readonly number[];
      /** The target's channel before the edit (Zulip's stream_id); null for a direct message. */
      readonly channelId: number | null;
      readonly content: ContentEdit | null;
      readonly move: MessageMove | null;
      /** The recipient's flags for the target after the edit (read at delivery). */
      flagsFor(userId: number): readonly ApiFlag[];
    }
  /**
   * Zulip's delete_message: messages of one conversation deleted (one per channel topic,
   * Zulip's lower-cased, or per direct-message conversation). Queues without the
   * bulk_message_deletion capability get one event per message.
   */
  | {
      readonly type: "delete_message";
      readonly realmId: number;
      /** Ascending. */
      readonly messageIds: readonly number[];
      /** The channel and the lower-cased topic; null for direct messages. */
      readonly channel: { readonly channelId: number; readonly topic: string } | null;
    }
  | {
      readonly type: "update_message_flags";
      /** Whose flags changed (flags are per reader; the audience is this user). */
      readonly userId: number;
      readonly op: "add" | "remove";
      readonly flag: ApiFlag;
      readonly messages: readonly number[];
      /** For the read flag on remove: where each message lives. */
      readonly messageDetails: ReadonlyMap<number, MessageDetail> | null;
    }
  | {
      readonly type: "reaction";
      readonly op: "add" | "remove";
      readonly messageId: number;
      readonly realmId: number;
      readonly reaction: Reaction;
    }
  | {
      readonly type: "submessage";
      readonly messageId: number;
      readonly realmId: number;
      readonly submessage: Submessage;
    }
  | {
      readonly type: "subscription";
      readonly op: "add";
      readonly userId: number;
      readonly subscriptions: readonly { readonly subscription: Subscription; readonly channel: Channel }[];
    }
  | {
      readonly type: "subscription";
      readonly op: "remove";
      readonly userId: number;
      readonly channels: readonly Channel[];
    }
  | {
      readonly type: "subscription";
      readonly op: "update";
      readonly userId: number;
      readonly channelId: number;
      readonly property: SubscriptionProperty;
      readonly value: boolean | string;
    }
  | {
      readonly type: "subscription";
      readonly op: "peer_add" | "peer_remove";
      readonly channelIds: readonly number[];
      readonly userIds: readonly number[];
    }
  | {
      readonly type: "stream";
      readonly op: "create";
      readonly channels: readonly Channel[];
      /** An unarchived channel: only for queues without the archived_channels capability. */
      readonly forUnarchiving?: boolean;
    }
  | {
      readonly type: "stream";
      readonly op: "delete";
      readonly channels: readonly Channel[];
      /** An archived channel: only for queues without the archived_channels capability. */
      readonly forArchiving?: boolean;
    }
  | {
      readonly type: "stream";
      readonly op: "update";
      /** The channel as the event names it (Zulip's `name` is the old one for a rename). */
      readonly channel: Channel;
      readonly property: string;
      readonly value: StreamPropertyValue;
      /** With `description`. */
      readonly renderedDescription?: string;
      /** With `invite_only`: the other two access fields, as they now are. */
      readonly historyPublicToSubscribers?: boolean;
      readonly isWebPublic?: boolean;
    }
  | { readonly type: "default_streams"; readonly realmId: number; readonly channelIds: readonly number[] }
  /** The realm's default channel groups after a change, by name (Zulip's notify_default_stream_groups). */
  | {
      readonly type: "default_stream_groups";
      readonly realmId: number;
      readonly groups: readonly DefaultChannelGroup[];
    }
  | { readonly type: "channel_folder"; readonly op: "add"; readonly folder: ChannelFolder }
  | {
      readonly type: "channel_folder";
      readonly op: "update";
      readonly folder: ChannelFolder;
      /** The fields that changed (Zulip's `data`). */
      readonly fields: readonly ("name" | "description" | "isArchived")[];
    }
  | {
      readonly type: "channel_folder";
      readonly op: "reorder";
      readonly realmId: number;
      readonly order: readonly number[];
    }
  | { readonly type: "realm_bot"; readonly op: "add"; readonly bot: User }
  | { readonly type: "realm_bot"; readonly op: "delete"; readonly botId: number }
  /** A bot's own settings changed (Zulip's realm_bot update): the bot after the change and which ones. */
  | {
      readonly type: "realm_bot";
      readonly op: "update";
      readonly bot: User;
      readonly fields: readonly RealmBotField[];
    }
  | { readonly type: "realm_user"; readonly op: "add"; readonly person: User }
  | { readonly type: "realm_user"; readonly op: "update"; readonly userId: number; readonly changes: RealmUserChange }
  /** A limited guest lost access to the user (Zulip's remove with an "Unknown user" person). */
  | { readonly type: "realm_user"; readonly op: "remove"; readonly userId: number }
  | { readonly type: "realm"; readonly op: "deactivated"; readonly realm: Realm }
  /** Zulip's realm update of new_stream_announcements_stream_id (-1 for none on the wire). */
  | { readonly type: "realm"; readonly op: "update_announcements_channel"; readonly realm: Realm }
  /** Zulip's realm update_dict for message editing, moving and deletion settings. */
  | {
      readonly type: "realm";
      readonly op: "update_message_policy";
      readonly realm: Realm;
      readonly settings: readonly (keyof MessagePolicy<unknown>)[];
    }
  /** Zulip's realm update of one setting (name, topics_policy, a settings/realm-settings property, ...). */
  | { readonly type: "realm"; readonly op: "update_property"; readonly realm: Realm; readonly property: string }
  /** Zulip's realm update_dict of one permission group setting, by Zulip's name. */
  | { readonly type: "realm"; readonly op: "update_group_setting"; readonly realm: Realm; readonly setting: string }
  /** The realm's invitations changed; clients refetch GET /invites (Zulip sends no payload). */
  | { readonly type: "invites_changed"; readonly realmId: number }
  | { readonly type: "user_group"; readonly op: "add"; readonly group: UserGroup; readonly forReactivation: boolean }
  | { readonly type: "user_group"; readonly op: "remove"; readonly groupId: number }
  | { readonly type: "user_group"; readonly op: "update"; readonly groupId: number; readonly data: UserGroupUpdate }
  | {
      readonly type: "user_group";
      readonly op: "add_members" | "remove_members";
      readonly groupId: number;
      readonly userIds: readonly number[];
    }
  | {
      readonly type: "user_group";
      readonly op: "add_subgroups" | "remove_subgroups";
      readonly groupId: number;
      readonly subgroupIds: readonly number[];
    }
  | { readonly type: "user_topic"; readonly userTopic: UserTopic }
  /** Zulip's deprecated muted_topics: the user's whole muted list, rendered at delivery. */
  | { readonly type: "muted_topics"; readonly userId: number }
  /** Ephemeral (nothing logged): a user seen for the first time or back online. */
  | {
      readonly type: "presence";
      readonly user: User;
      readonly presence: PresenceRecord;
      readonly serverTimestamp: number;
    }
  /** The realm's complete list of custom profile fields after a change. */
  | { readonly type: "custom_profile_fields"; readonly realmId: number; readonly fields: readonly ProfileField[] }
  /** A realm email domain added, changed (allow_subdomains) or removed. */
  | {
      readonly type: "realm_domains";
      readonly op: "add" | "change" | "remove";
      readonly realmId: number;
      readonly domain: string;
      readonly allowSubdomains: boolean;
    }
  /** The realm's complete list of code playgrounds after a change. */
  | { readonly type: "realm_playgrounds"; readonly realmId: number; readonly playgrounds: readonly Playground[] }
  /** The realm's complete list of data exports after a change (to its human administrators). */
  | { readonly type: "realm_export"; readonly realmId: number; readonly exports: readonly RealmExport[] }
  /** The realm's complete list of linkifiers, in their order, after a change. */
  | { readonly type: "realm_linkifiers"; readonly realmId: number; readonly linkifiers: readonly Linkifier[] }
  /**
   * A custom emoji added or deactivated: the emoji as it now is, and every custom
   * emoji of the realm after the change (Zulip's legacy realm_emoji/update sends the
   * whole map; clients with individual_emoji_changes get add/update_one).
   */
  | {
      readonly type: "realm_emoji";
      readonly op: "add" | "update_one";
      readonly realmId: number;
      readonly emoji: RealmEmoji;
      readonly all: readonly RealmEmoji[];
    }
  | { readonly type: "scheduled_messages"; readonly op: "add" | "update"; readonly scheduled: ScheduledMessage }
  | { readonly type: "scheduled_messages"; readonly op: "remove"; readonly scheduledMessageId: number }
  | { readonly type: "reminders"; readonly op: "add"; readonly reminder: ScheduledMessage }
  | { readonly type: "reminders"; readonly op: "remove"; readonly reminderId: number }
  /**
   * One changed personal setting (timezone included, as Zulip sends it), for one user or an administrator's bulk edit.
   */
  | {
      readonly type: "user_settings";
      readonly op: "update";
      readonly userIds: readonly number[];
      readonly property: SettingName | "timezone";
      readonly value: SettingValue;
    }
  | {
      readonly type: "realm_user_settings_defaults";
      readonly op: "update";
      readonly realmId: number;
      readonly property: SettingName;
      readonly value: SettingValue;
    }
  | { readonly type: "drafts"; readonly op: "add"; readonly userId: number; readonly drafts: readonly Draft[] }
  | { readonly type: "drafts"; readonly op: "update"; readonly draft: Draft }
  | { readonly type: "drafts"; readonly op: "remove"; readonly userId: number; readonly draftId: number }
  /** A status change: only what the request set (Zulip's do_update_user_status). */
  | {
      readonly type: "user_status";
      readonly userId: number;
      readonly away?: boolean;
      readonly statusText?: string;
      readonly emoji?: { readonly name: string; readonly code: string; readonly reactionType: string };
    }
  /** The muter's whole list after a change. */
  | { readonly type: "muted_users"; readonly userId: number; readonly muted: MutedUsersRecord["muted"] }
  /** The user's whole list of alert words after a change. */
  | { readonly type: "alert_words"; readonly userId: number; readonly words: readonly string[] }
  | { readonly type: "navigation_view"; readonly op: "add"; readonly userId: number; readonly view: NavigationView }
  /** Only what the request changed (Zulip's do_update_navigation_view). */
  | {
      readonly type: "navigation_view";
      readonly op: "update";
      readonly userId: number;
      readonly fragment: string;
      readonly name?: string;
      readonly isPinned?: boolean;
    }
  | { readonly type: "navigation_view"; readonly op: "remove"; readonly userId: number; readonly fragment: string }
  | { readonly type: "saved_snippets"; readonly op: "add" | "update"; readonly snippet: SavedSnippet }
  | { readonly type: "saved_snippets"; readonly op: "remove"; readonly userId: number; readonly snippetId: number }
  | { readonly type: "device"; readonly op: "add" | "remove"; readonly userId: number; readonly deviceId: number }
  /** Only the fields that changed, as Zulip sends them. */
  | {
      readonly type: "device";
      readonly op: "update";
      readonly userId: number;
      readonly deviceId: number;
      readonly changes: DeviceChanges;
    }
  /** To the owner: an upload stored, claimed by a message, or deleted; with the realm's upload space after it. */
  | {
      readonly type: "attachment";
      readonly op: "add" | "update" | "remove";
      readonly attachment: Attachment;
      readonly uploadSpaceUsed: number;
    }
  | {
      readonly type: "typing";
      readonly op: "start" | "stop";
      readonly sender: User;
      /** Direct typing: every participant (sender included). */
      readonly recipients: readonly User[] | null;
      /** Channel typing. */
      readonly channelId: number | null;
      readonly topic: string | null;
    }
  /** Someone is editing a message (Zulip 10, feature level 351): to whoever would hear of the edit. */
  | {
      readonly type: "typing_edit_message";
      readonly op: "start" | "stop";
      readonly senderId: number;
      readonly messageId: number;
      readonly recipient:
        | { readonly type: "channel"; readonly channelId: number; readonly topic: string }
        /** The participants notified (active, receiving typing notifications). */
        | { readonly type: "direct"; readonly userIds: readonly number[] };
    };

/** The fields of a device update event (a subset of Device). */
export type DeviceChanges = Partial<
  Pick<
    Device,
    "pushKeyId" | "pushTokenId" | "pendingPushTokenId" | "pushTokenLastUpdatedTimestamp" | "pushRegistrationErrorCode"
  >
>;

/** One realm_user update carries one property group, as in Zulip. */
export type RealmUserChange =
  | { readonly fullName: string }
  | { readonly role: Role }
  | { readonly isActive: boolean }
  | { readonly timezone: string }
  /** One custom profile field's value (null: removed); renderedValue for text fields. */
  | {
      readonly customProfileField: {
        readonly id: number;
        readonly value: string | null;
        readonly renderedValue: string | null;
      };
    }
  /** The real (delivery) email changed (Zulip sends it to those who may see it). */
  | { readonly deliveryEmail: string }
  /** The API email changed (Zulip's `new_email`). */
  | { readonly newEmail: string }
  /** The avatar URL changed (a Gravatar follows the email): the user after the change. */
  | { readonly avatarOf: User }
  /** A bot's owner changed (Zulip's `bot_owner_id`). */
  | { readonly botOwnerId: number };

/**
 * The bot settings a realm_bot update carries (Zulip's do_change_default_* and
 * outgoing webhook service updates); configData changes are not announced.
 */
export type RealmBotField = Exclude<keyof BotConfig, "configData">;

export interface UserGroupUpdate {
  readonly name?: string;
  readonly description?: string;
  readonly deactivated?: boolean;
  readonly canManageGroup?: GroupSettingValue;
  readonly canMentionGroup?: GroupSettingValue;
  readonly canAddMembersGroup?: GroupSettingValue;
  readonly canJoinGroup?: GroupSettingValue;
  readonly canLeaveGroup?: GroupSettingValue;
  readonly canRemoveMembersGroup?: GroupSettingValue;
}

/** The content part of an update_message event. */
export interface ContentEdit {
  readonly origContent: string;
  readonly origRenderedContent: string;
  readonly content: string;
  readonly renderedContent: string;
  readonly isMeMessage: boolean;
}

/** The move part of an update_message event (Zulip's orig_subject, subject, new_stream_id, propagate_mode). */
export interface MessageMove {
  readonly origTopic: string;
  /** Absent when the topic did not change. */
  readonly newTopic?: string;
  /** Absent when the channel did not change. */
  readonly newChannelId?: number;
  readonly propagateMode: "change_one" | "change_later" | "change_all";
}

export interface MessageOrigin {
  readonly queueId: string;
  readonly localId: string;
}

export type EngineEventType = EngineEvent["type"];

/** An event with its audience, as listeners receive it. */
export interface Delivery {
  readonly event: EngineEvent;
  readonly audience: Audience;
}

/**
 * What one committed write produced. `seq` is the write's change-log sequence number
 * (0 for ephemeral events such as typing, which change nothing).
 */
export interface EventBatch {
  readonly seq: number;
  readonly deliveries: readonly Delivery[];
}

/** The new value a `stream update` event carries (a group setting for the can_*_group properties). */
export type StreamPropertyValue = string | number | boolean | null | GroupSettingValue;

/** A subscription property a `subscription update` event names (Zulip's names). */
export type SubscriptionProperty = "is_muted" | "in_home_view" | "pin_to_top" | "color" | SubscriptionNotification;
