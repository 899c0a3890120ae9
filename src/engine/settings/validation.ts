/**
 * @module settings/validation
 * Which personal settings PATCH /settings and PATCH /realm/user_settings_defaults
 * accept, and Zulip's checks of their values (zerver/views/user_settings.py,
 * zerver/views/realm.py, UserBaseSettings' choices in zerver/models/users.py).
 * The HTTP layer parses each value by its wire kind (boolean, integer, string); the
 * checks below (allowed values, the batching period, languages, sounds, time zones)
 * are the engine's, so every caller gets them.
 */
import { BadRequestError, clip } from "../errors.js";
import { SETTING_DEFAULTS, SETTING_NAMES, type SettingName, type SettingValue } from "./defaults.js";

export type SettingKind = "bool" | "int" | "string";

/** The wire kind of each setting, from its default's type. */
export function settingKind(name: SettingName): SettingKind {
  const value: SettingValue = SETTING_DEFAULTS[name];
  return typeof value === "boolean" ? "bool" : typeof value === "number" ? "int" : "string";
}

/** Settings each user sets alone: an organization's defaults cannot name them (Zulip's realm.py). */
const USER_ONLY: readonly SettingName[] = [
  "default_language",
  "enable_login_emails",
  "enable_marketing_emails",
  "allow_private_data_export",
];

/**
 * What an administrator may not change for others with target_users
 * (UserBaseSettings.SECURITY_SENSITIVE_USER_SETTINGS).
 */
export const SECURITY_SENSITIVE_SETTINGS: ReadonlySet<SettingName> = new Set<SettingName>([
  "allow_private_data_export",
  "email_address_visibility",
  "enable_digest_emails",
  "enable_login_emails",
  "enable_marketing_emails",
  "presence_enabled",
  "send_private_typing_notifications",
  "send_read_receipts",
  "send_stream_typing_notifications",
]);

/** Settings PATCH /settings accepts. */
export const PERSONAL_SETTING_NAMES: readonly SettingName[] = SETTING_NAMES;
/** Settings PATCH /realm/user_settings_defaults accepts. */
export const REALM_DEFAULT_SETTING_NAMES: readonly SettingName[] = PERSONAL_SETTING_NAMES.filter(
  (n) => !USER_ONLY.includes(n),
);

/** Allowed integer values (Zulip's *_CHOICES). Integers not listed here are unrestricted (font size, line height). */
const INT_CHOICES: Partial<Record<SettingName, readonly number[]>> = {
  color_scheme: [1, 2, 3],
  demote_inactive_streams: [1, 2, 3],
  web_mark_read_on_scroll_policy: [1, 2, 3],
  web_channel_default_view: [1, 2, 3, 4],
  user_list_style: [1, 2, 3],
  web_stream_unreads_count_display_policy: [1, 2, 3],
  desktop_icon_count_display: [1, 2, 3, 4],
  realm_name_in_email_notifications_policy: [1, 2, 3],
  automatically_follow_topics_policy: [1, 2, 3, 4],
  automatically_unmute_topics_in_muted_streams_policy: [1, 2, 3, 4],
  email_address_visibility: [1, 2, 3, 4, 5],
};

const STRING_CHOICES: Partial<Record<SettingName, readonly string[]>> = {
  web_home_view: ["recent", "inbox", "all_messages"],
  web_animate_image_previews: ["always", "on_hover", "never"],
  emojiset: ["google", "google-blob", "twitter", "text"],
  resolved_topic_notice_auto_read_policy: ["always", "except_followed", "never"],
};

/** Old spellings still accepted, stored under their current name (web_home_view "recent_topics" before FL 454). */
const LEGACY_VALUES: Partial<Record<SettingName, Readonly<Record<string, string>>>> = {
  web_home_view: { recent_topics: "recent" },
};

/** Longest email batching period: one week (Zulip's check_settings_values). */
const MAX_EMAIL_BATCHING_SECONDS = 7 * 24 * 60 * 60;

/**
 * Notification sounds. Zulip offers the sound files it ships; this server ships none,
 * so it offers (and accepts) the default name and "none", as register's
 * available_notification_sounds says.
 */
export const NOTIFICATION_SOUNDS: readonly string[] = ["zulip"];

/**
 * Languages with translations (Zulip's static/locale/language_name_map.json), code ->
 * name as Zulip shows it. The UI text is English whatever is chosen: the choice is
 * stored and returned for clients that translate themselves.
 */
export const LANGUAGES: Readonly<Record<string, string>> = {
  ar: "العربيّة",
  be: "Беларуская",
  bg: "Български",
  bn: "বাংলা",
  ca: "Català",
  cs: "Čeština",
  cy: "Cymraeg",
  da: "Dansk",
  de: "Deutsch",
  el: "Ελληνικά",
  en: "English",
  en_GB: "British English",
  eo: "Esperanto",
  es: "Español",
  fa: "فارسی",
  fi: "Suomi",
  fr: "Français",
  gl: "Galego",
  gu: "ગુજરાતી",
  hi: "हिंदी",
  hu: "Magyar",
  id: "Bahasa Indonesia",
  it: "Italiano",
  ja: "日本語",
  ko: "한국어",
  lt: "Lietuviškai",
  lv: "Latviešu",
  ml: "മലയാളം",
  mn: "Монгол",
  nl: "Nederlands",
  no: "Norsk",
  pl: "Polski",
  pt: "Português",
  pt_BR: "Português Brasileiro",
  pt_PT: "Português - Portugal",
  ro: "Română",
  ru: "Русский",
  si: "සිංහල",
  sr: "Српски",
  sv: "Svenska",
  ta: "தமிழ்",
  te: "తెలుగు",
  tl: "Tagalog",
  tr: "Türkçe",
  uk: "Українська",
  uz: "O‘zbekcha",
  vi: "Tiếng Việt",
  "zh-hans": "简体中文",
  "zh-hant": "繁體中文",
};

/** The display name Zulip sends with default_language changes. */
export function languageName(code: string): string {
  return LANGUAGES[code] ?? code;
}

/**
 * A setting's value checked as Zulip checks it, returned in its stored form. The value
 * arrives already parsed by kind; a value of the wrong kind (an engine caller's bug
 * or a raw API) is refused like an invalid one.
 */
export function checkSettingValue(name: SettingName, value: SettingValue): SettingValue {
  const kind = settingKind(name);
  if (
    (kind === "bool" && typeof value !== "boolean") ||
    (kind === "int" && (typeof value !== "number" || !Number.isSafeInteger(value))) ||
    (kind === "string" && typeof value !== "string")
  ) {
    throw new BadRequestError(`Invalid ${name}`);
  }
  if (typeof value === "number") {
    const choices = INT_CHOICES[name];
    if (choices && !choices.includes(value)) throw new BadRequestError(`Invalid ${name}`);
    if (name === "email_notifications_batching_period_seconds" && (value <= 0 || value > MAX_EMAIL_BATCHING_SECONDS)) {
      throw new BadRequestError(`Invalid email batching period: ${value} seconds`);
    }
    return value;
  }
  if (typeof value === "string") {
    const current = LEGACY_VALUES[name]?.[value] ?? value;
    const choices = STRING_CHOICES[name];
    if (choices && !choices.includes(current)) throw new BadRequestError(`Invalid ${name}`);
    if (name === "default_language" && !Object.hasOwn(LANGUAGES, value))
      throw new BadRequestError("Invalid default_language");
    if (name === "notification_sound" && value !== "none" && !NOTIFICATION_SOUNDS.includes(value))
      throw new BadRequestError(`Invalid notification sound '${clip(value)}'`);
    return current;
  }
  return value;
}

/** Longest time zone name considered (the longest IANA name is about 30 characters). */
const MAX_TIMEZONE_LENGTH = 64;
let zoneNames: ReadonlySet<string> | undefined;

/**
 * An IANA time zone name, or "" (unset), as Zulip's timezone validator accepts:
 * canonical names and the legacy aliases the time zone database still resolves
 * ("Asia/Calcutta", "US/Eastern"). UTC offsets and abbreviations other than the
 * database's own are refused.
 */
export function checkTimezone(value: string): string {
  if (value === "") return value;
  zoneNames ??= new Set(Intl.supportedValuesOf("timeZone"));
  if (zoneNames.has(value)) return value;
  if (
    value.length <= MAX_TIMEZONE_LENGTH &&
    /^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(value) &&
    !/^(GMT|UTC)?[+-]/i.test(value)
  ) {
    try {
      new Intl.DateTimeFormat("en", { timeZone: value });
      return value;
    } catch {
      // Not a zone the database knows.
    }
  }
  throw new BadRequestError("Invalid timezone");
}
