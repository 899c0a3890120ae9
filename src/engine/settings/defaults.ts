/**
 * @module settings/defaults
 * Zulip's personal settings and their defaults (UserBaseSettings in Zulip's
 * zerver/models/users.py). Setting names are Zulip's own (snake_case): they are the
 * settings' identities across PATCH /settings, register and events, like event type
 * names, so the engine keeps them rather than translating seventy names back and forth.
 * `timezone` and `full_name` live on the User record.
 */
export const SETTING_DEFAULTS = {
  // Display (legacy group).
  color_scheme: 1,
  default_language: "en",
  web_home_view: "inbox",
  demote_inactive_streams: 1,
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
  hide_ai_features: false,
  web_inbox_show_channel_folders: true,
  web_left_sidebar_show_channel_folders: true,
  web_left_sidebar_unreads_count_summary: true,
  resolved_topic_notice_auto_read_policy: "except_followed",
} as const;

export type SettingName = keyof typeof SETTING_DEFAULTS;
export type SettingValue = boolean | number | string;
export type Settings = {
  readonly [K in SettingName]: (typeof SETTING_DEFAULTS)[K] extends boolean
    ? boolean
    : (typeof SETTING_DEFAULTS)[K] extends number
      ? number
      : string;
};

export const SETTING_NAMES = Object.keys(SETTING_DEFAULTS) as SettingName[];

export function isSettingName(name: string): name is SettingName {
  return Object.hasOwn(SETTING_DEFAULTS, name);
}

/** A user's stored settings: only what differs from Zulip's defaults, and what they set themselves. */
export interface UserSettingsRecord {
  readonly userId: number;
  readonly values: Readonly<Partial<Record<SettingName, SettingValue>>>;
  /** Settings the user changed themselves (for target_users' skip_if_already_edited). */
  readonly editedByUser: readonly SettingName[];
}

/** An organization's defaults for new users: only what differs from Zulip's defaults. */
export interface RealmSettingDefaultsRecord {
  readonly realmId: number;
  readonly values: Readonly<Partial<Record<SettingName, SettingValue>>>;
}

/**
 * Zulip's defaults overlaid with stored values. A clone of the defaults whose values are
 * then replaced keeps one hidden class for every user's settings: Object.assign onto `{}`
 * built each of them in dictionary mode with a map of its own, and a loop reading one
 * setting of 10,000 users (a resolve notice's readers) was deoptimized ("wrong map") by
 * every new one, and ran in the interpreter at ~5 ms instead of ~0.2 ms.
 */
export function mergedSettings(
  ...layers: readonly (Readonly<Partial<Record<SettingName, SettingValue>>> | undefined)[]
): Settings {
  const merged: Record<string, unknown> = { ...SETTING_DEFAULTS };
  for (const layer of layers) {
    if (layer === undefined) continue;
    for (const name of Object.keys(layer)) merged[name] = layer[name as SettingName];
  }
  return merged as Settings;
}
