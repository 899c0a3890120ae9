/**
 * @module http/endpoints/register/realm-state
 * The `realm` section of POST /register: organization settings, permission group
 * settings and server limits (zerver/lib/events.py's realm block).
 *
 * Settings an administrator changes (PATCH /realm) are stored where changed and
 * otherwise Zulip's defaults (engine settings/realm-settings), except where parley lacks
 * the feature and the default says so (GIFs off, no image or URL previews). Icons and
 * logos are not uploadable; the rest below are server facts.
 * Absent (see KNOWN_GAPS in test/http/openapi-conformance.test.ts):
 * server_supported_permission_settings, realm_uuid, realm_workplace_users_group.
 */
import type { ServerConfig } from "../../../config/index.js";
import { Uploads } from "../../../uploads/index.js";
import { createHash } from "node:crypto";
import {
  DEFAULT_EXTERNAL_ACCOUNTS,
  MAX_CHANNEL_DESCRIPTION_LENGTH,
  MAX_BULK_NEW_SUBSCRIPTION_MESSAGES,
  MAX_CHANNEL_NAME_LENGTH,
  MAX_DEACTIVATED_REALM_DELETION_DAYS,
  MAX_MESSAGE_LENGTH,
  MAX_REMINDER_NOTE_LENGTH,
  MAX_TOPIC_LENGTH,
  MIN_DEACTIVATED_REALM_DELETION_DAYS,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_GUESSES,
  PASSWORD_MIN_LENGTH,
  REALM_GROUP_SETTINGS,
  REALM_PROPERTIES,
  REALM_PROPERTY_NAMES,
  type Realm,
  type Store,
} from "../../../engine/index.js";
import { emojiDataUrl } from "../../emoji-data.js";
import { groupSettingToWire } from "../../../wire/channel.js";
import { messagePolicyToWire } from "../../../wire/message-policy.js";

/** Zulip's server_generation: when this server process started (seconds). */
const SERVER_GENERATION = Math.floor(Date.now() / 1000);

/**
 * Zulip's JITSI_SERVER_URL default: Jitsi Meet is the default video call provider
 * (realm_video_chat_provider 1), and calls need a server.
 */
const JITSI_SERVER_URL = "https://meet.jit.si";

/** Zulip's video chat providers without Zoom or BigBlueButton configured. */
const VIDEO_CHAT_PROVIDERS = { disabled: { name: "None", id: 0 }, jitsi_meet: { name: "Jitsi Meet", id: 1 } };

const GIF_RATING_POLICY_OPTIONS = {
  disabled: { name: "GIPHY integration disabled", id: 0 },
  y: { name: "Allow GIFs rated Y (Very young audience)", id: 1 },
  g: { name: "Allow GIFs rated G (General audience)", id: 2 },
  pg: { name: "Allow GIFs rated PG (Parental guidance)", id: 3 },
  "pg-13": { name: "Allow GIFs rated PG-13 (Parental guidance - under 13)", id: 4 },
  r: { name: "Allow GIFs rated R (Restricted)", id: 5 },
};

/** Zulip's icon for an organization without an uploaded one: a Gravatar identicon of its subdomain. */
function realmIconUrl(realm: Realm): string {
  const hash = createHash("md5").update(realm.subdomain.toLowerCase()).digest("hex");
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon`;
}

/** `realm`: organization settings, permission groups, server limits and timings. */
export function realmSection(
  store: Store,
  realm: Realm,
  baseUrl: string,
  config: ServerConfig,
): Record<string, unknown> {
  const groups: Record<string, unknown> = {};
  for (const { wire } of Object.values(REALM_GROUP_SETTINGS))
    groups[`realm_${wire}`] = groupSettingToWire(store.realmGroupSetting(realm.id, wire));
  // Stored (role:members unless changed).
  groups["realm_can_add_custom_emoji_group"] = groupSettingToWire(store.canAddCustomEmojiGroup(realm.id));
  const bots = store.botCreationGroups(realm.id);
  groups["realm_can_create_bots_group"] = groupSettingToWire(bots.all);
  groups["realm_can_create_write_only_bots_group"] = groupSettingToWire(bots.writeOnly);
  // Stored, enforced by the engine's edit, move and delete rules.
  for (const [name, value] of Object.entries(messagePolicyToWire(store.realmMessagePolicy(realm.id))))
    groups[`realm_${name}`] = value;
  const props = store.realmProperties(realm.id);
  const properties: Record<string, unknown> = {};
  for (const name of REALM_PROPERTY_NAMES) {
    const { wire, type } = REALM_PROPERTIES[name];
    properties[`realm_${wire}`] = type === "channel" ? (props[name] ?? -1) : props[name];
  }
  return {
    // Stored settings.
    realm_name: realm.name,
    realm_date_created: realm.dateCreated,
    realm_empty_topic_display_name: realm.emptyTopicDisplayName,
    realm_topics_policy: realm.topicsPolicy,
    realm_mandatory_topics: realm.topicsPolicy === "disable_empty_topic",
    realm_enable_spectator_access: realm.enableSpectatorAccess,
    realm_new_stream_announcements_stream_id: realm.newChannelAnnouncementsChannelId ?? -1,
    realm_uri: baseUrl,
    realm_url: baseUrl,
    // Stored where an administrator changed them (PATCH /realm), Zulip's defaults otherwise.
    ...properties,
    // Zulip's legacy form of message_edit_history_visibility_policy.
    realm_allow_edit_history: store.realmMessagePolicy(realm.id).messageEditHistoryVisibilityPolicy !== "none",
    realm_push_notifications_enabled: false,
    realm_push_notifications_enabled_end_timestamp: null,
    // Legacy policy that clients still read; 5 = administrators, as can_mention_many_users_group.
    realm_wildcard_mention_policy: 5,
    // Deprecated policies (feature levels 264-280), from the group settings below:
    // 1 = members, 4 = administrators and moderators.
    realm_create_public_stream_policy: 1,
    realm_create_private_stream_policy: 1,
    realm_create_web_public_stream_policy: 4,
    realm_media_preview_size: 100,
    realm_default_avatar_source: "G",
    realm_owner_full_content_access: false,
    ...groups,
    // Settings outside property_types.
    realm_authentication_methods: {},
    realm_presence_disabled: false,
    realm_email_auth_enabled: true,
    realm_password_auth_enabled: true,
    realm_icon_url: realmIconUrl(realm),
    realm_icon_source: "G",
    realm_logo_url: "",
    realm_logo_source: "D",
    realm_night_logo_url: "",
    realm_night_logo_source: "D",
    realm_bot_domain: new URL(baseUrl).hostname,
    realm_available_video_chat_providers: VIDEO_CHAT_PROVIDERS,
    realm_plan_type: 1,
    realm_upload_quota_mib: config.REALM_UPLOAD_QUOTA_MIB,
    realm_default_external_accounts: DEFAULT_EXTERNAL_ACCOUNTS,
    zulip_plan_is_not_limited: true,
    upgrade_text_for_wide_organization_logo: "",
    settings_send_digest_emails: true,
    development_environment: false,
    gif_rating_policy_options: GIF_RATING_POLICY_OPTIONS,
    // Zulip's deprecated alias of realm_jitsi_server_url || server_jitsi_server_url.
    jitsi_server_url: props.jitsiServerUrl ?? JITSI_SERVER_URL,
    // Server limits.
    max_message_length: MAX_MESSAGE_LENGTH,
    max_topic_length: MAX_TOPIC_LENGTH,
    max_stream_name_length: MAX_CHANNEL_NAME_LENGTH,
    max_stream_description_length: MAX_CHANNEL_DESCRIPTION_LENGTH,
    max_channel_folder_name_length: 60,
    max_channel_folder_description_length: 1024,
    max_reminder_note_length: MAX_REMINDER_NOTE_LENGTH,
    max_file_upload_size_mib: config.MAX_FILE_UPLOAD_SIZE,
    max_avatar_file_size_mib: 5,
    max_icon_file_size_mib: 5,
    max_logo_file_size_mib: 5,
    max_bulk_new_subscription_messages: MAX_BULK_NEW_SUBSCRIPTION_MESSAGES,
    password_min_length: PASSWORD_MIN_LENGTH,
    password_max_length: PASSWORD_MAX_LENGTH,
    password_min_guesses: PASSWORD_MIN_GUESSES,
    event_queue_longpoll_timeout_seconds: 90,
    // Server settings and timings.
    server_generation: SERVER_GENERATION,
    server_presence_ping_interval_seconds: 60,
    server_presence_offline_threshold_seconds: 140,
    server_typing_started_wait_period_milliseconds: 10000,
    server_typing_stopped_wait_period_milliseconds: 5000,
    // The window POST /realm/deactivate checks; parley keeps the data whatever is chosen.
    server_min_deactivated_realm_deletion_days: MIN_DEACTIVATED_REALM_DELETION_DAYS,
    server_max_deactivated_realm_deletion_days: MAX_DEACTIVATED_REALM_DELETION_DAYS,
    server_typing_started_expiry_period_milliseconds: 15000,
    server_web_public_streams_enabled: false,
    server_avatar_changes_disabled: true,
    server_name_changes_disabled: false,
    server_needs_upgrade: false,
    server_inline_image_preview: false,
    server_inline_url_embed_preview: false,
    server_emoji_data_url: emojiDataUrl(baseUrl),
    server_jitsi_server_url: JITSI_SERVER_URL,
    server_can_summarize_topics: false,
    server_thumbnail_formats: Uploads.thumbnailFormats(),
    server_report_message_types: [],
  };
}
