/**
 * @module http/endpoints/register/user-settings
 * The `user_settings` and `realm_user_settings_defaults` sections.
 *
 * Deviation: personal settings are not stored yet (a later issue adds them), so
 * every user gets Zulip's defaults (UserBaseSettings in zerver/models/users.py)
 * and the organization's defaults are Zulip's too. Only `timezone` is the user's own.
 */
import type { User } from "../../../engine/index.js";

/** Zulip's default value for every personal setting PATCH /settings knows. */
export const ZULIP_SETTING_DEFAULTS = {
  // Display (legacy group).
  color_scheme: 1,
  default_language: "en",
  web_home_view: "inbox",
  demote_inactive_streams: 1,
  dense_mode: false,
  emojiset: "google",
  enable_drafts_synchronization: true,
  enter_sends: false,
  fluid_layout_width: false,
  high_contrast_mode: false,
  left_side_userlist: false,
  starred_message_counts: true,
  translate_emoticons: false,
  twenty_four_hour_time: false,
  // Notifications (legacy group).
  desktop_icon_count_display: 1,
  email_notifications_batching_period_seconds: 120,
  enable_desktop_notifications: true,
  enable_digest_emails: true,
  enable_login_emails: true,
  enable_marketing_emails: true,
  enable_offline_email_notifications: true,
  enable_offline_push_notifications: true,
  enable_online_push_notifications: true,
  enable_sounds: true,
  enable_stream_audible_notifications: false,
  enable_stream_desktop_notifications: false,
  enable_stream_email_notifications: false,
  enable_stream_push_notifications: false,
  message_content_in_email_notifications: true,
  notification_sound: "zulip",
  pm_content_in_desktop_notifications: true,
  presence_enabled: true,
  realm_name_in_email_notifications_policy: 1,
  wildcard_mentions_notify: true,
  // Notifications (modern group).
  enable_followed_topic_desktop_notifications: true,
  enable_followed_topic_email_notifications: true,
  enable_followed_topic_push_notifications: true,
  enable_followed_topic_audible_notifications: true,
  enable_followed_topic_wildcard_mentions_notify: true,
  automatically_follow_topics_policy: 3,
  automatically_unmute_topics_in_muted_streams_policy: 2,
  automatically_follow_topics_where_mentioned: true,
  // General (modern group).
  display_emoji_reaction_users: true,
  email_address_visibility: 1,
  web_escape_navigates_to_home_view: true,
  receives_typing_notifications: true,
  send_private_typing_notifications: true,
  send_read_receipts: true,
  send_stream_typing_notifications: true,
  allow_private_data_export: false,
  web_mark_read_on_scroll_policy: 1,
  web_channel_default_view: 1,
  user_list_style: 3,
  web_animate_image_previews: "on_hover",
  web_stream_unreads_count_display_policy: 2,
  web_font_size_px: 16,
  web_line_height_percent: 140,
  web_navigate_to_sent_message: true,
  web_suggest_update_timezone: true,
} as const;

/** Zulip's emojiset choices, in its order. */
const EMOJISET_CHOICES = [
  { key: "google", text: "Google" },
  { key: "twitter", text: "Twitter" },
  { key: "text", text: "Plain text" },
  { key: "google-blob", text: "Google blobs" },
];

/**
 * Notification sounds a client may pick. We serve no sound files, so only the
 * default name is offered (Zulip lists the files it ships).
 */
const AVAILABLE_NOTIFICATION_SOUNDS = ["zulip"];

/** `user_settings`: Zulip's defaults plus the user's time zone (see the module note). */
export function userSettingsSection(user: User): Record<string, unknown> {
  return {
    user_settings: {
      ...ZULIP_SETTING_DEFAULTS,
      emojiset_choices: EMOJISET_CHOICES,
      timezone: user.timezone,
      available_notification_sounds: AVAILABLE_NOTIFICATION_SOUNDS,
    },
  };
}

/** `realm_user_settings_defaults`: what new users start with (Zulip's defaults). */
export function realmUserSettingsDefaultsSection(): Record<string, unknown> {
  return {
    realm_user_settings_defaults: {
      ...ZULIP_SETTING_DEFAULTS,
      emojiset_choices: EMOJISET_CHOICES,
      available_notification_sounds: AVAILABLE_NOTIFICATION_SOUNDS,
    },
  };
}
