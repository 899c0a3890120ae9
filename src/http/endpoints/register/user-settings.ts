/**
 * @module http/endpoints/register/user-settings
 * The `user_settings` and `realm_user_settings_defaults` sections.
 *
 * Values come from the engine's settings (src/engine/settings: Zulip's defaults
 * overlaid with what the user or the organization stored).
 */
import type { Store, User } from "../../../engine/index.js";

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

/** `user_settings`: the user's effective settings plus their time zone. */
export function userSettingsSection(store: Store, user: User): Record<string, unknown> {
  return {
    user_settings: {
      ...store.userSettings(user.id),
      emojiset_choices: EMOJISET_CHOICES,
      timezone: user.timezone,
      available_notification_sounds: AVAILABLE_NOTIFICATION_SOUNDS,
    },
  };
}

/** `realm_user_settings_defaults`: what new users of the realm start with. */
export function realmUserSettingsDefaultsSection(store: Store, user: User): Record<string, unknown> {
  return {
    realm_user_settings_defaults: {
      ...store.realmSettingDefaults(user.realmId),
      emojiset_choices: EMOJISET_CHOICES,
      available_notification_sounds: AVAILABLE_NOTIFICATION_SOUNDS,
    },
  };
}
