/**
 * @module settings/realm-settings
 * The organization settings an administrator changes with PATCH /realm, besides the
 * message editing rules (settings/message-policy) and the settings with their own Realm
 * fields (name, topics policy, spectator access, the announcement channel). One table:
 * Zulip's name, the stored name, how a value is checked, Zulip's default (or parley's
 * truthful value where parley lacks the feature), and whether only owners may change it.
 * A realm stores only what was changed, so older data directories read the defaults.
 */
import { LANGUAGES } from "./validation.js";

export type RealmPropertyValue = boolean | number | string | null;

export interface RealmPropertySpec {
  /** Zulip's name: PATCH /realm's parameter, register's key without `realm_`, the event's property. */
  readonly wire: string;
  readonly type: "bool" | "int" | "str" | "channel";
  readonly byDefault: RealmPropertyValue;
  /** Zulip's check of the value; returns why it is refused, or null. */
  readonly check?: (value: RealmPropertyValue) => string | null;
  readonly ownersOnly?: boolean;
}

const MAX_DESCRIPTION_LENGTH = 1000;
const MAX_WELCOME_MESSAGE_LENGTH = 8000;
const MAX_JITSI_URL_LENGTH = 200;
/** Zulip's OrgTypeEnum values. */
const ORG_TYPES = [0, 10, 20, 30, 35, 40, 50, 60, 70, 80, 90, 100, 1000];
/** Zulip's video chat providers on a server without Zoom or BigBlueButton: none, Jitsi Meet. */
const VIDEO_CHAT_PROVIDER_IDS = [0, 1];
/** Zulip's GIPHY_RATING_OPTIONS ids (0: disabled). */
const GIF_RATINGS = [0, 1, 2, 3, 4, 5];

const oneOf =
  (name: string, allowed: readonly number[]) =>
  (value: RealmPropertyValue): string | null =>
    typeof value === "number" && allowed.includes(value) ? null : `Invalid ${name} ${String(value)}`;

const maxLength =
  (name: string, max: number) =>
  (value: RealmPropertyValue): string | null =>
    typeof value === "string" && [...value].length > max ? `${name} is too long (limit: ${max} characters)` : null;

function jitsiUrl(value: RealmPropertyValue): string | null {
  if (value === null) return null;
  if (typeof value !== "string" || value.length > MAX_JITSI_URL_LENGTH)
    return "jitsi_server_url is not an allowed_type";
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:" ? null : "jitsi_server_url is not an allowed_type";
  } catch {
    return "jitsi_server_url is not an allowed_type";
  }
}

/** Keyed by the stored (engine) name. */
export const REALM_PROPERTIES = {
  description: {
    wire: "description",
    type: "str",
    byDefault: "",
    check: maxLength("description", MAX_DESCRIPTION_LENGTH),
  },
  avatarChangesDisabled: { wire: "avatar_changes_disabled", type: "bool", byDefault: false },
  defaultCodeBlockLanguage: { wire: "default_code_block_language", type: "str", byDefault: "" },
  defaultLanguage: {
    wire: "default_language",
    type: "str",
    byDefault: "en",
    check: (v) => (typeof v === "string" && Object.hasOwn(LANGUAGES, v) ? null : `Invalid language '${String(v)}'`),
  },
  digestEmailsEnabled: { wire: "digest_emails_enabled", type: "bool", byDefault: false },
  digestWeekday: {
    wire: "digest_weekday",
    type: "int",
    byDefault: 1,
    check: oneOf("digest_weekday", [0, 1, 2, 3, 4, 5, 6]),
  },
  disallowDisposableEmailAddresses: {
    wire: "disallow_disposable_email_addresses",
    type: "bool",
    byDefault: true,
    ownersOnly: true,
  },
  emailChangesDisabled: { wire: "email_changes_disabled", type: "bool", byDefault: false },
  emailsRestrictedToDomains: { wire: "emails_restricted_to_domains", type: "bool", byDefault: false, ownersOnly: true },
  enableGuestUserDmWarning: { wire: "enable_guest_user_dm_warning", type: "bool", byDefault: true },
  enableGuestUserIndicator: { wire: "enable_guest_user_indicator", type: "bool", byDefault: true },
  enableReadReceipts: { wire: "enable_read_receipts", type: "bool", byDefault: false },
  // parley has no GIF provider keys: off unless an administrator picks a rating.
  gifRatingPolicy: {
    wire: "gif_rating_policy",
    type: "int",
    byDefault: 0,
    check: oneOf("gif_rating_policy", GIF_RATINGS),
  },
  // No previews are generated: parley reports them off until an administrator turns them on.
  inlineImagePreview: { wire: "inline_image_preview", type: "bool", byDefault: false },
  inlineUrlEmbedPreview: { wire: "inline_url_embed_preview", type: "bool", byDefault: false },
  inviteRequired: { wire: "invite_required", type: "bool", byDefault: true, ownersOnly: true },
  jitsiServerUrl: { wire: "jitsi_server_url", type: "str", byDefault: null, check: jitsiUrl },
  messageContentAllowedInEmailNotifications: {
    wire: "message_content_allowed_in_email_notifications",
    type: "bool",
    byDefault: true,
  },
  /** -1: keep forever (Zulip's "unlimited"). */
  messageRetentionDays: {
    wire: "message_retention_days",
    type: "int",
    byDefault: -1,
    ownersOnly: true,
    check: (v) => (v === -1 || (typeof v === "number" && v >= 1) ? null : "Bad value for 'message_retention_days'"),
  },
  nameChangesDisabled: { wire: "name_changes_disabled", type: "bool", byDefault: false },
  orgType: { wire: "org_type", type: "int", byDefault: 0, check: oneOf("org_type", ORG_TYPES) },
  requireE2eePushNotifications: { wire: "require_e2ee_push_notifications", type: "bool", byDefault: false },
  requireUniqueNames: { wire: "require_unique_names", type: "bool", byDefault: false },
  sendChannelEventsMessages: { wire: "send_channel_events_messages", type: "bool", byDefault: true },
  sendWelcomeEmails: { wire: "send_welcome_emails", type: "bool", byDefault: true },
  videoChatProvider: {
    wire: "video_chat_provider",
    type: "int",
    byDefault: 1,
    check: oneOf("video_chat_provider", VIDEO_CHAT_PROVIDER_IDS),
  },
  waitingPeriodThreshold: {
    wire: "waiting_period_threshold",
    type: "int",
    byDefault: 0,
    ownersOnly: true,
    check: (v) => (typeof v === "number" && v >= 0 ? null : "Invalid waiting_period_threshold"),
  },
  wantAdvertiseInCommunitiesDirectory: {
    wire: "want_advertise_in_communities_directory",
    type: "bool",
    byDefault: false,
  },
  welcomeMessageCustomText: {
    wire: "welcome_message_custom_text",
    type: "str",
    byDefault: "",
    check: maxLength("welcome_message_custom_text", MAX_WELCOME_MESSAGE_LENGTH),
  },
  /** Channel settings: a channel of the realm, -1 (stored null) for none. */
  signupAnnouncementsChannelId: { wire: "signup_announcements_stream_id", type: "channel", byDefault: null },
  zulipUpdateAnnouncementsChannelId: { wire: "zulip_update_announcements_stream_id", type: "channel", byDefault: null },
  moderationRequestChannelId: { wire: "moderation_request_channel_id", type: "channel", byDefault: null },
} as const satisfies Record<string, RealmPropertySpec>;

export type RealmPropertyName = keyof typeof REALM_PROPERTIES;
export type RealmProperties = { [K in RealmPropertyName]: RealmPropertyValue };
export const REALM_PROPERTY_NAMES = Object.keys(REALM_PROPERTIES) as RealmPropertyName[];

/** Zulip's allow_nobody_group / allow_everyone_group / allowed_system_groups for a realm permission setting. */
export interface RealmGroupSettingSpec {
  readonly wire: string;
  readonly byDefault: string;
  readonly allowNobody: boolean;
  readonly allowEveryone: boolean;
  /** Only these system groups (Zulip's require_system_group with allowed_system_groups). */
  readonly systemGroupsOnly?: readonly string[];
  readonly ownersOnly?: boolean;
}

const group = (
  wire: string,
  byDefault: string,
  allowNobody: boolean,
  allowEveryone: boolean,
  extra: Partial<RealmGroupSettingSpec> = {},
): RealmGroupSettingSpec => ({ wire, byDefault, allowNobody, allowEveryone, ...extra });

/**
 * Realm permission settings stored in Realm.groupSettings (the custom emoji, bot and
 * message-policy ones keep their own fields). Defaults are Zulip's, except
 * can_create_web_public_channel_group: the engine lets moderators create web-public
 * channels (Zulip's default is owners).
 */
export const REALM_GROUP_SETTINGS = {
  createMultiuseInviteGroup: group("create_multiuse_invite_group", "role:administrators", true, false, {
    ownersOnly: true,
  }),
  canAccessAllUsersGroup: group("can_access_all_users_group", "role:everyone", false, true, {
    systemGroupsOnly: ["role:everyone", "role:members"],
  }),
  canAddSubscribersGroup: group("can_add_subscribers_group", "role:members", true, false),
  canCreateGroups: group("can_create_groups", "role:members", true, false, { ownersOnly: true }),
  canCreatePublicChannelGroup: group("can_create_public_channel_group", "role:members", true, false),
  canCreatePrivateChannelGroup: group("can_create_private_channel_group", "role:members", true, false),
  canCreateWebPublicChannelGroup: group("can_create_web_public_channel_group", "role:moderators", true, false, {
    systemGroupsOnly: ["role:moderators", "role:administrators", "role:owners", "role:nobody"],
  }),
  canInviteUsersGroup: group("can_invite_users_group", "role:members", true, false, { ownersOnly: true }),
  canManageAllGroups: group("can_manage_all_groups", "role:owners", false, false, { ownersOnly: true }),
  canManageBillingGroup: group("can_manage_billing_group", "role:administrators", false, false),
  canMentionManyUsersGroup: group("can_mention_many_users_group", "role:administrators", true, true),
  canSetDeleteMessagePolicyGroup: group("can_set_delete_message_policy_group", "role:moderators", true, false),
  canSetTopicsPolicyGroup: group("can_set_topics_policy_group", "role:members", true, true),
  canSummarizeTopicsGroup: group("can_summarize_topics_group", "role:everyone", true, true),
  directMessageInitiatorGroup: group("direct_message_initiator_group", "role:everyone", true, true),
  directMessagePermissionGroup: group("direct_message_permission_group", "role:everyone", true, true),
} as const satisfies Record<string, RealmGroupSettingSpec>;

export type RealmGroupSettingName = keyof typeof REALM_GROUP_SETTINGS;
export const REALM_GROUP_SETTING_NAMES = Object.keys(REALM_GROUP_SETTINGS) as RealmGroupSettingName[];

/** The group settings with their own Realm fields or in the message policy (Zulip's rules for them). */
export const OTHER_REALM_GROUP_SETTINGS: Readonly<Record<string, RealmGroupSettingSpec>> = {
  can_add_custom_emoji_group: group("can_add_custom_emoji_group", "role:members", true, false),
  can_create_bots_group: group("can_create_bots_group", "role:members", true, false),
  can_create_write_only_bots_group: group("can_create_write_only_bots_group", "role:members", true, false),
  can_delete_any_message_group: group("can_delete_any_message_group", "role:administrators", true, false),
  can_delete_own_message_group: group("can_delete_own_message_group", "role:everyone", true, true),
  can_move_messages_between_channels_group: group(
    "can_move_messages_between_channels_group",
    "role:members",
    true,
    false,
  ),
  can_move_messages_between_topics_group: group("can_move_messages_between_topics_group", "role:everyone", true, true),
  can_resolve_topics_group: group("can_resolve_topics_group", "role:everyone", true, true),
};
