/**
 * POST /register against the reference client's decoder: every key that
 * zulip-flutter's InitialSnapshot.fromJson (lib/api/model/initial_snapshot.g.dart and
 * the nested models in model.g.dart) reads without a null fallback must be present
 * with the JSON type it casts to; the keys it reads as nullable must, when present,
 * have that type or be null. Also: each section is gated by Zulip's event type.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/http.js";

/** A JSON type as the Dart decoder casts it. */
type Kind = "int" | "string" | "bool" | "list" | "map" | "color";
/** required: key must be present and of `kind`; nullable: absent, null or `kind`. */
interface Field {
  readonly kind: Kind;
  readonly nullable?: true;
  /** For list and map values: the decoder applied to each entry. */
  readonly entries?: Model;
  /** For list values of scalars. */
  readonly items?: Kind;
  /** Enum values the decoder accepts ($enumDecode without unknownValue). */
  readonly oneOf?: readonly (number | string)[];
}
type Model = Readonly<Record<string, Field>>;

const int: Field = { kind: "int" };
const str: Field = { kind: "string" };
const bool: Field = { kind: "bool" };
const ints: Field = { kind: "list", items: "int" };
const opt = (kind: Kind): Field => ({ kind, nullable: true });

// Nested models (model.g.dart).
const USER: Model = {
  user_id: int,
  delivery_email: opt("string"),
  email: str,
  full_name: str,
  date_joined: str,
  is_active: bool,
  is_bot: bool,
  bot_type: opt("int"),
  bot_owner_id: opt("int"),
  role: int,
  timezone: str,
  avatar_url: opt("string"),
  avatar_version: int,
  profile_data: opt("map"),
  is_system_bot: opt("bool"),
};
const GROUP_SETTING_OR_NULL: Field = { kind: "int", nullable: true };
const CHANNEL: Model = {
  stream_id: int,
  name: str,
  is_archived: opt("bool"),
  description: str,
  rendered_description: str,
  date_created: int,
  first_message_id: opt("int"),
  invite_only: bool,
  is_web_public: bool,
  history_public_to_subscribers: bool,
  message_retention_days: opt("int"),
  stream_post_policy: { kind: "int", nullable: true, oneOf: [1, 2, 3, 4] },
  folder_id: opt("int"),
  can_add_subscribers_group: GROUP_SETTING_OR_NULL,
  can_delete_any_message_group: GROUP_SETTING_OR_NULL,
  can_delete_own_message_group: GROUP_SETTING_OR_NULL,
  can_send_message_group: GROUP_SETTING_OR_NULL,
  can_subscribe_group: GROUP_SETTING_OR_NULL,
  is_recently_active: opt("bool"),
  stream_weekly_traffic: opt("int"),
};
const SUBSCRIPTION: Model = {
  ...CHANNEL,
  desktop_notifications: opt("bool"),
  email_notifications: opt("bool"),
  wildcard_mentions_notify: opt("bool"),
  push_notifications: opt("bool"),
  audible_notifications: opt("bool"),
  pin_to_top: bool,
  is_muted: bool,
  color: { kind: "color" },
};
const USER_GROUP: Model = {
  id: int,
  members: ints,
  direct_subgroup_ids: ints,
  name: str,
  description: str,
  is_system_group: bool,
  deactivated: opt("bool"),
};
const CUSTOM_PROFILE_FIELD: Model = {
  id: int,
  type: int,
  order: int,
  name: str,
  hint: str,
  field_data: str,
  display_in_profile_summary: opt("bool"),
};
const REALM_EMOJI: Model = {
  id: str,
  name: str,
  source_url: str,
  still_url: opt("string"),
  deactivated: bool,
  author_id: opt("int"),
};
const PRESENCE: Model = { active_timestamp: int, idle_timestamp: int };
const SAVED_SNIPPET: Model = { id: int, title: str, content: str, date_created: int };
const CHANNEL_FOLDER: Model = {
  id: int,
  name: str,
  order: opt("int"),
  date_created: opt("int"),
  creator_id: opt("int"),
  description: str,
  rendered_description: str,
  is_archived: bool,
};
// initial_snapshot.g.dart's own nested models.
const EXTERNAL_ACCOUNT: Model = { name: str, text: str, hint: str, url_pattern: str };
const RECENT_DM: Model = { max_message_id: int, user_ids: ints };
const USER_SETTINGS: Model = {
  twenty_four_hour_time: opt("bool"),
  display_emoji_reaction_users: bool,
  emojiset: str,
  presence_enabled: bool,
};
// UserStatusChange.fromJson (model.dart): nullable strings; a set emoji's type is ReactionType's.
const USER_STATUS: Model = {
  status_text: opt("string"),
  emoji_name: opt("string"),
  emoji_code: opt("string"),
  reaction_type: { kind: "string", nullable: true, oneOf: ["unicode_emoji", "realm_emoji", "zulip_extra_emoji"] },
};
const USER_TOPIC: Model = { stream_id: int, topic_name: str, last_updated: int, visibility_policy: int };
const UNREAD: Model = {
  count: int,
  pms: { kind: "list", entries: { other_user_id: int, unread_message_ids: ints } },
  streams: { kind: "list", entries: { topic: str, stream_id: int, unread_message_ids: ints } },
  huddles: { kind: "list", entries: { user_ids_string: str, unread_message_ids: ints } },
  mentions: ints,
  old_unreads_missing: bool,
};

/** InitialSnapshot itself. */
const INITIAL_SNAPSHOT: Model = {
  queue_id: opt("string"),
  last_event_id: int,
  zulip_feature_level: int,
  zulip_version: str,
  zulip_merge_base: str,
  alert_words: { kind: "list", items: "string" },
  custom_profile_fields: { kind: "list", entries: CUSTOM_PROFILE_FIELD },
  max_stream_name_length: int,
  max_topic_length: int,
  server_presence_ping_interval_seconds: int,
  server_presence_offline_threshold_seconds: int,
  server_typing_started_expiry_period_milliseconds: opt("int"),
  server_typing_stopped_wait_period_milliseconds: opt("int"),
  server_typing_started_wait_period_milliseconds: opt("int"),
  muted_users: { kind: "list", entries: { id: int } },
  presences: { kind: "map", entries: PRESENCE },
  realm_emoji: { kind: "map", entries: REALM_EMOJI },
  realm_user_groups: { kind: "list", entries: USER_GROUP },
  recent_private_conversations: { kind: "list", entries: RECENT_DM },
  saved_snippets: { kind: "list", nullable: true, entries: SAVED_SNIPPET },
  subscriptions: { kind: "list", entries: SUBSCRIPTION },
  channel_folders: { kind: "list", nullable: true, entries: CHANNEL_FOLDER },
  unread_msgs: { kind: "map" },
  streams: { kind: "list", entries: CHANNEL },
  user_status: { kind: "map", entries: USER_STATUS },
  user_settings: { kind: "map" },
  user_topics: { kind: "list", entries: USER_TOPIC },
  realm_can_delete_any_message_group: GROUP_SETTING_OR_NULL,
  realm_can_delete_own_message_group: GROUP_SETTING_OR_NULL,
  realm_delete_own_message_policy: { kind: "int", nullable: true, oneOf: [1, 2, 3, 4, 5] },
  realm_wildcard_mention_policy: { kind: "int", oneOf: [1, 2, 3, 5, 6, 7] },
  realm_mandatory_topics: bool,
  realm_name: str,
  realm_waiting_period_threshold: int,
  realm_message_content_delete_limit_seconds: opt("int"),
  realm_allow_message_editing: bool,
  realm_message_content_edit_limit_seconds: opt("int"),
  realm_enable_read_receipts: bool,
  realm_icon_url: str,
  realm_presence_disabled: bool,
  realm_default_external_accounts: { kind: "map", entries: EXTERNAL_ACCOUNT },
  max_file_upload_size_mib: int,
  server_emoji_data_url: str,
  realm_empty_topic_display_name: opt("string"),
  realm_users: { kind: "list", entries: USER },
  realm_non_active_users: { kind: "list", entries: USER },
  cross_realm_bots: { kind: "list", entries: USER },
};

function kindOf(value: unknown): Kind | "null" | "other" {
  if (value === null) return "null";
  if (Array.isArray(value)) return "list";
  if (typeof value === "string") return /^#[0-9a-fA-F]{6}$/.test(value) ? "color" : "string";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "other";
  if (typeof value === "object") return "map";
  return "other";
}

function fits(value: unknown, kind: Kind): boolean {
  const actual = kindOf(value);
  return actual === kind || (kind === "string" && actual === "color");
}

/** Every way `json` fails `model`, as "path: problem" lines. */
function problems(json: Record<string, unknown>, model: Model, path: string): string[] {
  const out: string[] = [];
  for (const [name, field] of Object.entries(model)) {
    const at = `${path}.${name}`;
    if (!(name in json) || json[name] === undefined) {
      if (!field.nullable) out.push(`${at}: missing`);
      continue;
    }
    const value = json[name];
    if (value === null) {
      if (!field.nullable) out.push(`${at}: null`);
      continue;
    }
    if (!fits(value, field.kind)) {
      out.push(`${at}: ${kindOf(value)}, expected ${field.kind}`);
      continue;
    }
    if (field.oneOf && !field.oneOf.includes(value as number | string))
      out.push(`${at}: ${String(value)} not in ${field.oneOf.join(",")}`);
    const entries = Array.isArray(value)
      ? value.map((v, i) => [String(i), v] as const)
      : field.kind === "map"
        ? Object.entries(value as Record<string, unknown>)
        : [];
    for (const [k, entry] of entries) {
      if (field.items && !fits(entry, field.items)) out.push(`${at}[${k}]: ${kindOf(entry)}, expected ${field.items}`);
      if (field.entries) {
        if (kindOf(entry) !== "map") out.push(`${at}[${k}]: ${kindOf(entry)}, expected map`);
        else out.push(...problems(entry as Record<string, unknown>, field.entries, `${at}[${k}]`));
      }
    }
  }
  return out;
}

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
  const { owner, alice, bob, guest, general } = s.seed;
  // Enough data that every nested list has entries to check.
  await s.call(alice, "POST", "/messages", { type: "direct", to: [bob.id], content: "hi bob" });
  await s.call(alice, "POST", "/messages", { type: "direct", to: [bob.id, owner.id], content: "hi both" });
  await s.call(alice, "POST", "/messages", {
    type: "stream",
    to: "general",
    topic: "lunch",
    content: "@**Bob** food?",
  });
  s.t.store.setTopicPolicy(bob.id, general.id, "lunch", 1);
  const helper = s.t.store.createUser({
    realmId: s.seed.realm.id,
    email: "helper-bot@test.dev",
    fullName: "Helper",
    bot: { type: 1, ownerId: bob.id },
  });
  s.t.store.muteUser(bob.id, helper.id);
  s.t.store.updateOwnStatus(alice.id, { statusText: "busy", emojiName: "car", away: true });
  s.t.store.updateOwnStatus(owner.id, { emojiName: "zulip" });
  s.t.store.setUserActive(guest.id, false);
});
afterAll(() => s.close());

describe("POST /register for zulip-flutter", () => {
  it("returns every key the reference client's decoder requires, with its type", async () => {
    const r = await s.call(s.seed.bob, "POST", "/register");
    expect(r.status).toBe(200);
    const b = r.body;
    // The fixture must exercise the nested decoders, or the table checks nothing.
    for (const list of [
      "realm_users",
      "realm_non_active_users",
      "subscriptions",
      "streams",
      "realm_user_groups",
      "recent_private_conversations",
      "user_topics",
    ]) {
      expect((b[list] as unknown[]).length, list).toBeGreaterThan(0);
    }
    expect(Object.keys(b["user_status"] as object).length, "user_status").toBe(2);
    expect((b["muted_users"] as unknown[]).length, "muted_users").toBe(1);
    const unread = b["unread_msgs"] as Record<string, unknown[]>;
    for (const list of ["pms", "streams", "huddles", "mentions"]) expect(unread[list]!.length, list).toBeGreaterThan(0);
    expect([
      ...problems(b, INITIAL_SNAPSHOT, "$"),
      ...problems(b["unread_msgs"] as Record<string, unknown>, UNREAD, "$.unread_msgs"),
      ...problems(b["user_settings"] as Record<string, unknown>, USER_SETTINGS, "$.user_settings"),
    ]).toEqual([]);
  });

  it("catches a missing or mistyped key (the checker itself)", () => {
    expect(problems({ a: 1 }, { a: str, b: int, c: opt("int") }, "$")).toEqual([
      "$.a: int, expected string",
      "$.b: missing",
    ]);
    expect(problems({ l: [{ x: "1" }] }, { l: { kind: "list", entries: { x: int } } }, "$")).toEqual([
      "$.l[0].x: string, expected int",
    ]);
  });

  it("derives recent DM conversations, bots and muted topics from the store", async () => {
    const { owner, alice, bob, general } = s.seed;
    const b = (await s.call(bob, "POST", "/register")).body;
    const recent = b["recent_private_conversations"] as { max_message_id: number; user_ids: number[] }[];
    expect(recent.map((c) => c.user_ids)).toEqual([[owner.id, alice.id].sort((x, y) => x - y), [alice.id]]);
    expect(recent[0]!.max_message_id).toBeGreaterThan(recent[1]!.max_message_id);
    // Bots are named by user ID only (FL 474); their name and owner are in realm_users.
    const botIds = (b["realm_bots"] as { user_id: number }[]).map((x) => x.user_id);
    const users = new Map(
      (b["realm_users"] as { user_id: number; full_name: string; bot_owner_id?: number }[]).map((u) => [u.user_id, u]),
    );
    expect(botIds.map((id) => [users.get(id)?.full_name, users.get(id)?.bot_owner_id])).toEqual([["Helper", bob.id]]);
    expect(b["muted_topics"]).toEqual([[general.name, "lunch", expect.any(Number)]]);
    // Alice owns no bot and is no administrator.
    expect((await s.call(alice, "POST", "/register", { fetch_event_types: ["realm_bot"] })).body["realm_bots"]).toEqual(
      [],
    );
    // Settings are Zulip's defaults until they are stored.
    expect(b["user_settings"]).toMatchObject({
      twenty_four_hour_time: false,
      emojiset: "google",
      presence_enabled: true,
      display_emoji_reaction_users: true,
    });
    // Realm permission settings name the realm's system groups.
    const groups = new Map((b["realm_user_groups"] as { id: number; name: string }[]).map((g) => [g.id, g.name]));
    expect(groups.get(b["realm_can_create_public_channel_group"] as number)).toBe("role:members");
    expect(groups.get(b["realm_can_delete_any_message_group"] as number)).toBe("role:administrators");
  });
});

/** Each event type and exactly the keys Zulip returns for it (fetch_initial_state_data). */
const GATES: readonly (readonly [type: string, keys: readonly string[]])[] = [
  ["alert_words", ["alert_words"]],
  ["custom_profile_fields", ["custom_profile_fields", "custom_profile_field_types"]],
  ["onboarding_steps", ["onboarding_steps", "navigation_tour_video_url"]],
  ["message", ["max_message_id"]],
  ["drafts", ["drafts"]],
  ["scheduled_messages", ["scheduled_messages"]],
  ["reminders", ["reminders"]],
  ["muted_topics", ["muted_topics"]],
  ["muted_users", ["muted_users"]],
  ["presence", ["presences", "presence_last_update_id", "server_timestamp"]],
  ["realm_user_settings_defaults", ["realm_user_settings_defaults"]],
  ["realm_domains", ["realm_domains"]],
  ["realm_emoji", ["realm_emoji"]],
  ["realm_linkifiers", ["realm_linkifiers"]],
  ["realm_filters", ["realm_filters"]],
  ["realm_playgrounds", ["realm_playgrounds"]],
  ["realm_user_groups", ["realm_user_groups"]],
  ["realm_bot", ["realm_bots"]],
  ["realm_embedded_bots", ["realm_embedded_bots"]],
  ["realm_incoming_webhook_bots", ["realm_incoming_webhook_bots"]],
  ["recent_private_conversations", ["recent_private_conversations"]],
  ["subscription", ["subscriptions", "unsubscribed", "never_subscribed"]],
  ["channel_folders", ["channel_folders"]],
  ["update_message_flags", []],
  ["starred_messages", ["starred_messages"]],
  ["stream", ["streams"]],
  ["default_streams", ["realm_default_streams"]],
  ["default_stream_groups", ["realm_default_stream_groups"]],
  ["stop_words", ["stop_words"]],
  ["user_settings", ["user_settings"]],
  ["user_status", ["user_status"]],
  ["user_topic", ["user_topics"]],
  ["video_calls", ["has_zoom_token", "has_webex_token"]],
  ["giphy", ["giphy_api_key"]],
  ["tenor", ["tenor_api_key"]],
  ["klipy", ["klipy_api_key"]],
  ["realm_billing", ["realm_billing"]],
  ["navigation_views", ["navigation_views"]],
  ["saved_snippets", ["saved_snippets"]],
];
const ALWAYS = [
  "idle_queue_timeout_secs",
  "last_event_id",
  "msg",
  "queue_id",
  "result",
  "zulip_feature_level",
  "zulip_merge_base",
  "zulip_version",
];

describe("POST /register gating", () => {
  it("returns realm_emoji and not realm_users for fetch_event_types=[realm_emoji]", async () => {
    const r = await s.call(s.seed.bob, "POST", "/register", { fetch_event_types: ["realm_emoji"] });
    expect(r.body["realm_emoji"]).toEqual({});
    expect(r.body["realm_users"]).toBeUndefined();
  });

  it.each(GATES)("%s gates exactly its own keys", async (type, keys) => {
    const r = await s.call(s.seed.bob, "POST", "/register", { fetch_event_types: [type] });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual([...ALWAYS, ...keys].sort());
  });

  it("sends unread_msgs only with both message and update_message_flags, and muted_topics only without user_topic", async () => {
    const both = await s.call(s.seed.bob, "POST", "/register", {
      fetch_event_types: ["message", "update_message_flags"],
    });
    expect(Object.keys(both.body)).toContain("unread_msgs");
    const topics = await s.call(s.seed.bob, "POST", "/register", { fetch_event_types: ["muted_topics", "user_topic"] });
    expect(topics.body["muted_topics"]).toBeUndefined();
    expect(topics.body["user_topics"]).toBeDefined();
  });

  it("gates the realm and realm_user sections", async () => {
    const realm = await s.call(s.seed.bob, "POST", "/register", { fetch_event_types: ["realm"] });
    expect(realm.body["realm_icon_url"]).toMatch(/^https:\/\//);
    expect(realm.body["realm_users"]).toBeUndefined();
    expect(realm.body["user_settings"]).toBeUndefined();
    const users = await s.call(s.seed.bob, "POST", "/register", { fetch_event_types: ["realm_user"] });
    expect(users.body).toMatchObject({
      can_create_public_streams: true,
      can_subscribe_other_users: true,
      can_create_web_public_streams: false,
    });
    expect(users.body["realm_name"]).toBeUndefined();
  });
});
