/**
 * Existence oracles, swept over the whole route table: for every endpoint and every
 * parameter that names a message, channel, user or group, an ID or name the caller
 * cannot access must get exactly the answer of one that exists nowhere (status, code,
 * message, data, with the ID or name itself normalized) and must change nothing.
 *
 * Callers are realm A's member (bob), guest and owner. What they must not tell apart
 * from nothing:
 * - another realm's messages (public channel, private channel, DM), channels, users,
 *   emails, groups and scheduled messages (every caller);
 * - for bob: the private channel he is not in, its messages and a DM between others;
 * - for the guest: those, and the public channel he is not in with its messages;
 * - for every caller: another user's scheduled message of the same realm (Zulip's
 *   access_scheduled_message answers 404 "Scheduled message does not exist" alike).
 * Users of the caller's own realm are visible to every caller (no restricted-user
 * policies exist here), so only other realms' users are swept. So are only other
 * realms' groups: Zulip lists every group of the realm, deactivated ones included, to
 * every member and guest (GET /user_groups), so a group of the caller's realm is
 * nothing to hide.
 *
 * The endpoint list comes from ENDPOINTS, so a new endpoint is swept as soon as its
 * parameters are classified below: the first test fails on any parameter that is in
 * neither ID_PARAMS nor NOT_IDS.
 *
 * Numeric anchors are positional (a window around the ID), so the data is laid out
 * with every message a caller can read before every message they cannot: an anchor
 * at an unreadable message then has the same neighbours as one past the last ID.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PERSONAL_SETTING_NAMES, type User } from "../../src/engine/index.js";
import type { Endpoint } from "../../src/http/endpoint.js";
import { ENDPOINTS } from "../../src/http/endpoints/index.js";
import { basicAuth, startServer, type TestServer } from "../support/http.js";
import { fingerprint } from "../support/snapshot.js";

type Kind = "message" | "channel" | "channelName" | "user" | "email" | "group" | "scheduled" | "draft" | "snippet" | "device" | "upload" | "attachment" | "tusUpload";
type Ref = number | string;

interface Probe {
  readonly kind: Kind;
  readonly label: string;
  /** The parameter's wire value naming `ref`. */
  encode(ref: Ref, endpoint: Endpoint): string;
  /** For a name spread over several path segments (an upload's path_id): every segment's value. */
  readonly encodePath?: (ref: Ref) => Readonly<Record<string, string>>;
  /** Only with bases (and endpoints) for which this holds (default: every base). */
  readonly when?: (base: Readonly<Record<string, string>>, endpoint: Endpoint) => boolean;
}

const list = (ref: Ref) => JSON.stringify([ref]);
const narrow = (operator: string, kind: Kind, operand: (ref: Ref) => unknown = (r) => r): Probe => ({
  kind,
  label: `narrow ${operator}:${kind}`,
  encode: (ref) => JSON.stringify([{ operator, operand: operand(ref) }]),
});
const groupSetting: readonly Probe[] = [
  { kind: "group", label: "group ID", encode: String },
  { kind: "group", label: "direct_subgroups", encode: (r) => JSON.stringify({ direct_members: [], direct_subgroups: [r] }) },
  { kind: "user", label: "direct_members", encode: (r) => JSON.stringify({ direct_members: [r], direct_subgroups: [] }) },
];
/** A user group's settings: the value itself on creation, {"new": value} on PATCH, and a stale {"old": value}. */
const groupSettingChange: readonly Probe[] = [
  ...groupSetting.map((probe) => ({ ...probe, encode: (r: Ref, e: Endpoint) => (e.method === "PATCH" ? `{"new":${probe.encode(r, e)}}` : probe.encode(r, e)) })),
  ...groupSetting.map((probe) => ({ ...probe, label: `old ${probe.label}`, encode: (r: Ref, e: Endpoint) => `{"new":${probe.encode(r, e)},"old":${probe.encode(r, e)}}`, when: (_: unknown, e: Endpoint) => e.method === "PATCH" })),
];
const onMembers = (_: unknown, e: Endpoint) => e.path.endsWith("/members");
const onSubgroups = (_: unknown, e: Endpoint) => e.path.endsWith("/subgroups");

/** Parameters (query/body and path) that name objects, and how to name one. */
const ID_PARAMS: Readonly<Record<string, readonly Probe[]>> = {
  message_id: [{ kind: "message", label: "path", encode: String }],
  messages: [{ kind: "message", label: "ID list", encode: list }],
  message_ids: [{ kind: "message", label: "ID list", encode: list }],
  anchor: [{ kind: "message", label: "numeric anchor", encode: String }],
  narrow: [
    narrow("channel", "channel"),
    narrow("stream", "channel", String),
    narrow("channel", "channelName"),
    narrow("sender", "user"),
    narrow("sender", "email"),
    narrow("dm", "user", (r) => [r]),
    narrow("dm", "email"),
    narrow("dm-including", "user"),
    narrow("mentions", "user"),
    narrow("id", "message"),
    narrow("with", "message"),
  ],
  stream_id: [{ kind: "channel", label: "ID", encode: String }],
  to: [
    { kind: "channel", label: "channel ID", encode: String, when: (b) => b["type"] === "stream" },
    { kind: "channel", label: "channel ID list", encode: list, when: (b) => b["type"] === "stream" },
    { kind: "channelName", label: "channel name", encode: String, when: (b) => b["type"] === "stream" },
    { kind: "user", label: "user IDs", encode: list, when: (b) => b["type"] === "direct" },
    { kind: "email", label: "emails", encode: String, when: (b) => b["type"] === "direct" },
  ],
  user_ids: [{ kind: "user", label: "ID list", encode: list }],
  user_id_or_email: [
    { kind: "user", label: "ID", encode: String },
    { kind: "email", label: "email", encode: String },
  ],
  principals: [
    { kind: "user", label: "IDs", encode: list },
    { kind: "email", label: "emails", encode: list },
  ],
  subscriptions: [{ kind: "channelName", label: "name", encode: (r, e) => (e.method === "POST" ? JSON.stringify([{ name: r }]) : list(r)) }],
  can_add_subscribers_group: groupSetting,
  can_remove_subscribers_group: groupSetting,
  can_administer_channel_group: groupSetting,
  can_delete_any_message_group: groupSetting,
  can_delete_own_message_group: groupSetting,
  can_move_messages_out_of_channel_group: groupSetting,
  can_send_message_group: groupSetting,
  can_subscribe_group: groupSetting,
  can_create_topic_group: groupSetting,
  can_move_messages_within_channel_group: groupSetting,
  can_resolve_topics_group: groupSetting,
  subscription_data: [{ kind: "channel", label: "stream_id", encode: (r) => JSON.stringify([{ stream_id: r, property: "pin_to_top", value: true }]) }],
  target_users: [
    { kind: "user", label: "user_ids", encode: (r) => JSON.stringify({ user_ids: [r], skip_if_already_edited: false }) },
    { kind: "group", label: "group_ids", encode: (r) => JSON.stringify({ group_ids: [r], skip_if_already_edited: false }) },
  ],
  drafts: [
    { kind: "channel", label: "channel draft", encode: (r) => JSON.stringify([{ type: "stream", to: [r], topic: "t", content: "c" }]) },
    { kind: "user", label: "direct draft", encode: (r) => JSON.stringify([{ type: "private", to: [r], topic: "", content: "c" }]) },
  ],
  draft: [
    { kind: "channel", label: "channel draft", encode: (r) => JSON.stringify({ type: "stream", to: [r], topic: "t", content: "c" }) },
    { kind: "user", label: "direct draft", encode: (r) => JSON.stringify({ type: "private", to: [r], topic: "", content: "c" }) },
  ],
  draft_id: [{ kind: "draft", label: "path", encode: String }],
  saved_snippet_id: [{ kind: "snippet", label: "path", encode: String }],
  // User groups: the group in the path, members and subgroups, and the six settings.
  user_group_id: [{ kind: "group", label: "path", encode: String }],
  user_id: [{ kind: "user", label: "path", encode: String }],
  members: [{ kind: "user", label: "ID list", encode: list }],
  subgroups: [{ kind: "group", label: "ID list", encode: list }],
  add: [
    { kind: "user", label: "user ID list", encode: list, when: onMembers },
    { kind: "group", label: "group ID list", encode: list, when: onSubgroups },
  ],
  delete: [
    { kind: "user", label: "user ID list", encode: list, when: onMembers },
    { kind: "group", label: "group ID list", encode: list, when: onSubgroups },
  ],
  add_subgroups: [{ kind: "group", label: "ID list", encode: list }],
  delete_subgroups: [{ kind: "group", label: "ID list", encode: list }],
  can_add_members_group: groupSettingChange,
  can_join_group: groupSettingChange,
  can_leave_group: groupSettingChange,
  can_manage_group: groupSettingChange,
  can_mention_group: groupSettingChange,
  can_remove_members_group: groupSettingChange,
  scheduled_message_id: [{ kind: "scheduled", label: "path", encode: String }],
  // Another user's device is "Invalid `device_id`" (or no active device) exactly like a missing one.
  device_id: [{ kind: "device", label: "ID", encode: String }],
  // POST /fetch_api_key: another realm's account is "incorrect" exactly like none.
  username: [{ kind: "email", label: "login email", encode: String }],
  stream_ids: [{ kind: "channel", label: "ID list", encode: list }],
  group_ids: [{ kind: "group", label: "ID list", encode: list }],
  // An upload's path_id spans four path segments (five with a thumbnail format): the probe fills them all.
  path_random: [
    {
      kind: "upload",
      label: "path_id",
      encode: (r) => String(r).split("/")[2]!,
      encodePath: (r) => {
        const [realm_id, path_hash, path_random, filename] = String(r).split("/");
        return { realm_id: realm_id!, path_hash: path_hash!, path_random: path_random!, filename: filename!, thumbnail_format: "840x560.webp" };
      },
    },
  ],
  attachment_id: [{ kind: "attachment", label: "path", encode: String }],
  upload_id: [{ kind: "tusUpload", label: "path", encode: String }],
};

/** Parameters that name nothing a caller could be denied. */
const NOT_IDS = new Set([
  // display and paging options
  "apply_markdown", "allow_empty_topic_name", "client_gravatar", "include_custom_profile_fields", "include_anchor", "num_before", "num_after",
  "use_first_unread_anchor", "anchor_date", "include_subscribers",
  // flag and reaction values
  "op", "flag", "emoji_name", "emoji_code", "reaction_type",
  // message content (topic_name only narrows a channel named by stream_id)
  "type", "content", "topic", "topic_name", "queue_id", "local_id", "read_by_sender",
  // user fields; profile_data names custom profile fields, which do not exist here
  "full_name", "role", "profile_data", "new_email",
  // channel creation options
  "authorization_errors_fatal", "announce", "invite_only", "is_web_public", "is_default_stream", "history_public_to_subscribers", "message_retention_days", "topics_policy",
  // channel listing filters
  "include_public", "include_web_public", "include_subscribed", "exclude_archived", "include_all", "include_default", "include_owner_subscribed", "include_can_access_content",
  // register options
  "include_streams", "slim_presence", "presence_history_limit_days", "event_types", "fetch_event_types", "all_public_streams", "client_capabilities", "idle_queue_timeout",
  // event queue polling (queue IDs are random and per user: BAD_EVENT_QUEUE_ID either way)
  "last_event_id", "dont_block",
  // presence: the caller's own status and polling position
  "status", "ping_only", "new_user_input", "last_update_id", "history_limit_days", "presence_last_update_id",
  // code playground fields
  "name", "pygments_language", "url_template",
  // topic policy value (stream_id is swept with a policy to set; removing one, policy 0,
  // is allowed in any channel of the caller's realm by Zulip's design)
  "visibility_policy",
  // another realm's playground is "Invalid playground" exactly like a missing one (test/http/playgrounds.test.ts)
  "playground_id",
  // personal settings and account fields (target_users names users and groups: ID_PARAMS)
  ...PERSONAL_SETTING_NAMES, "email", "old_password", "new_password", "timezone",
  // saved snippet text
  "title",
  // user group fields and listing options; names are unique per realm only, so another realm's names are free here
  "name", "description", "deactivated", "include_deactivated_groups", "direct_member_only", "direct_subgroup_only",
  // scheduled messages (`to`, `type`, `content`, `topic` and `read_by_sender` are above)
  "scheduled_delivery_timestamp",
  // push registration: the caller's own key and the token the bouncer knows (device_id is swept)
  "push_key", "push_key_id", "token_kind", "token_id", "bouncer_public_key", "encrypted_push_registration",
  // logins: the password of the named account; a JWT's email claim is checked in
  // test/http/jwt.test.ts (another realm's user is refused like an unknown one)
  "password", "token", "include_profile",
  // invitation options; addresses name nobody the caller could be denied (existing accounts
  // of the caller's realm are reported by design, others' realms are not consulted)
  "invitee_emails", "invite_expires_in_minutes", "invite_as", "include_realm_default_subscriptions", "notify_referrer_on_join", "welcome_message_custom_text",
  // another realm's invitation is "No such invitation" exactly like a missing one (actions/invites.ts accessInvite)
  "invite_id",
  // the other segments of an upload's path (path_random's probe sets them all)
  "realm_id", "path_hash", "filename", "thumbnail_format",
  // a temporary URL's token is signed by the server for one file and cannot be made for another (test/http/uploads)
  "token",
  // an external image's URL, signed by the server: it names no realm's object (test/http/external-content)
  "digest", "encoded_url",
]);

/** Endpoints without any ID parameter: nothing to sweep. */
const NO_ID_ENDPOINTS = [
  "GET /server_settings",
  "GET /users/me",
  "GET /users/me/subscriptions",
  "GET /streams",
  // queue_id: another user's queue answers exactly like an unknown one (test/realtime/queues.test.ts).
  "GET /events",
  "DELETE /events",
  "POST /users/me/presence",
  "GET /realm/presence",
  "POST /realm/playgrounds",
  "DELETE /realm/playgrounds/:playground_id",
  // Custom emoji are named per realm: another realm's name is free here, and DELETE
  // answers "does not exist" for it exactly as for a name never used (test/http/realm-emoji.test.ts).
  "GET /realm/emoji",
  "POST /realm/emoji/:emoji_name",
  "DELETE /realm/emoji/:emoji_name",
  // The caller's own drafts and snippets, and the realm's defaults: nothing named.
  "GET /drafts",
  "GET /saved_snippets",
  "POST /saved_snippets",
  "PATCH /realm/user_settings_defaults",
  "GET /user_groups",
  "GET /scheduled_messages",
  "POST /register_client_device",
  // The caller's own key; a JWT names its account inside the token (see NOT_IDS).
  "POST /users/me/api_key/regenerate",
  "POST /jwt/fetch_api_key",
  // Invitations are the caller's realm's own: their IDs are NOT_IDS above.
  "GET /invites",
  "DELETE /invites/:invite_id",
  "DELETE /invites/multiuse/:invite_id",
  "POST /invites/:invite_id/resend",
  // The caller's own uploads; a temporary URL's token (above).
  "POST /user_uploads",
  "GET /attachments",
  "POST /tus",
  "GET (root) /user_uploads/temporary/:token/:filename",
  "GET (root) /external_content/:digest/:encoded_url",
];

/**
 * Where Zulip's semantics make "invisible" and "nonexistent" differ by design.
 * Each entry is checked to still differ, so the table cannot go stale.
 */
const EXCEPTIONS: readonly { endpoint: string; param: string; scenario: string; reason: string }[] = [
  {
    endpoint: "POST /users/me/subscriptions",
    param: "subscriptions",
    scenario: "bob: private places",
    reason:
      "channel names are unique in a realm: an unused name is created, a private channel's name is refused ('Unable to access channel (NAME).', echoing the caller's own text). Other realms' names are unused here and are swept.",
  },
];

interface Base {
  /** Functions are called per request, with the caller (for IDs that differ per caller). */
  readonly params: Readonly<Record<string, string | ((caller: User) => string)>>;
  /** The probed parameters this base is for (default: all). */
  readonly for?: readonly string[];
}

let counter = 0;
const fresh = (prefix: string) => `${prefix}-${++counter}`;

/** Realm A objects the bases name, set in beforeAll. */
const ids = { bobsGroup: 0, bob: 0, realmA: 0, ownScheduled: new Map<number, number>(), ownDraft: new Map<number, number>() };
const bobsGroup = () => String(ids.bobsGroup);
const ownScheduled = (caller: User) => String(ids.ownScheduled.get(caller.id));
const ownDraft = (caller: User) => String(ids.ownDraft.get(caller.id));
/** Far enough ahead that no scheduler delivers it during the test. */
const later = () => String(Math.floor(Date.now() / 1000) + 365 * 86_400);

/** What each endpoint needs besides the probed parameter to reach its lookups; anchors sit after every readable message. */
const BASES: Readonly<Record<string, readonly Base[]>> = {
  "POST /messages": [{ params: { type: "stream", topic: "t", content: "x" } }, { params: { type: "direct", content: "x" } }],
  "GET /messages": [
    { params: { anchor: "newest", num_before: "5", num_after: "0" }, for: ["narrow"] },
    { params: { num_before: "1", num_after: "1" }, for: ["anchor"] },
    { params: {}, for: ["message_ids"] },
  ],
  "POST /messages/flags": [
    { params: { op: "add", flag: "starred" } },
    { params: { op: "remove", flag: "starred" } },
    { params: { op: "add", flag: "read" } },
    { params: { op: "remove", flag: "read" } },
    { params: { op: "add", flag: "collapsed" } },
  ],
  "POST /messages/flags/narrow": [
    { params: { anchor: "newest", num_before: "5", num_after: "0", op: "remove", flag: "read" }, for: ["narrow"] },
    { params: { anchor: "newest", num_before: "5", num_after: "0", op: "add", flag: "starred" }, for: ["narrow"] },
    { params: { num_before: "0", num_after: "1", op: "remove", flag: "read" }, for: ["anchor"] },
    { params: { num_before: "0", num_after: "1", op: "add", flag: "starred" }, for: ["anchor"] },
  ],
  "POST /mark_topic_as_read": [{ params: { topic_name: "t" } }],
  "POST /user_topics": [{ params: { topic: "t", visibility_policy: "1" } }, { params: { topic: "t", visibility_policy: "3" } }],
  "POST /messages/:message_id/reactions": [{ params: { emoji_name: "octopus" } }],
  "DELETE /messages/:message_id/reactions": [{ params: { emoji_name: "octopus" } }],
  "PATCH /users/:user_id_or_email": [{ params: { full_name: "Renamed" } }],
  "POST /users/me/subscriptions": [
    { params: {}, for: ["subscriptions"] },
    { params: { subscriptions: JSON.stringify([{ name: "general" }]) }, for: ["principals"] },
    // A new channel, so that its group settings are checked.
    { params: { subscriptions: () => JSON.stringify([{ name: fresh("new") }]) } },
  ],
  "POST /typing": [
    { params: { op: "start", type: "direct" }, for: ["to"] },
    { params: { op: "start", type: "channel", topic: "t" }, for: ["stream_id"] },
  ],
  "DELETE /users/me/subscriptions": [{ params: {}, for: ["subscriptions"] }, { params: { subscriptions: JSON.stringify(["general"]) }, for: ["principals"] }],
  "PATCH /settings": [{ params: { color_scheme: "2" } }],
  "POST /fetch_api_key": [{ params: { password: "not-the-password-1" } }],
  // `draft` replaces each caller's own draft.
  "PATCH /drafts/:draft_id": [{ params: { draft: JSON.stringify({ type: "", to: [], topic: "", content: "c" }) }, for: ["draft_id"] }, { params: { draft_id: ownDraft }, for: ["draft"] }],
  "PATCH /saved_snippets/:saved_snippet_id": [{ params: { title: "renamed" } }],
  // Group edits on a realm A group that bob manages (the owner manages every group; the guest none).
  "POST /user_groups/create": [{ params: { name: () => fresh("group"), description: "d", members: "[]" } }],
  "PATCH /user_groups/:user_group_id": [{ params: { description: "changed" }, for: ["user_group_id"] }, { params: { user_group_id: bobsGroup } }],
  "POST /user_groups/:user_group_id/members": [
    { params: { add: () => JSON.stringify([ids.bob]) }, for: ["user_group_id"] },
    { params: { user_group_id: bobsGroup } },
  ],
  "POST /user_groups/:user_group_id/subgroups": [{ params: { delete: () => `[${ids.bobsGroup}]` }, for: ["user_group_id"] }, { params: { user_group_id: bobsGroup } }],
  "GET /user_groups/:user_group_id/members/:user_id": [{ params: { user_id: () => String(ids.bob) }, for: ["user_group_id"] }, { params: { user_group_id: bobsGroup }, for: ["user_id"] }],
  "POST /invites": [
    { params: { invitee_emails: () => `${fresh("invitee")}@new.dev`, group_ids: "[]" }, for: ["stream_ids"] },
    { params: { invitee_emails: () => `${fresh("invitee")}@new.dev`, stream_ids: "[]" }, for: ["group_ids"] },
  ],
  "POST /invites/multiuse": [{ params: { stream_ids: "[]" }, for: ["group_ids"] }, { params: {}, for: ["stream_ids"] }],
  "POST /scheduled_messages": [
    { params: { type: "stream", topic: "t", content: "x", scheduled_delivery_timestamp: later } },
    { params: { type: "direct", content: "x", scheduled_delivery_timestamp: later } },
  ],
  // `to` edits each caller's own scheduled message (a direct message to themselves).
  "PATCH /scheduled_messages/:scheduled_message_id": [
    { params: { content: "changed" }, for: ["scheduled_message_id"] },
    { params: { scheduled_message_id: ownScheduled, type: "stream", topic: "t" }, for: ["to"] },
    { params: { scheduled_message_id: ownScheduled, type: "direct" }, for: ["to"] },
  ],
};

type Refs = Partial<Record<Kind, readonly Ref[]>>;
interface Scenario {
  readonly name: string;
  readonly caller: User;
  /** Called once per probe: names may be consumed (subscribing creates channels). */
  readonly refs: (kind: Kind) => readonly Ref[];
}

let s: TestServer;
let scenarios: Scenario[] = [];
/** Nonexistent objects, per kind; names are fresh per call. */
const nowhere = (kind: Kind): Ref =>
  ({
    message: 1_999_999,
    channel: 1_999_998,
    user: 1_999_997,
    group: 1_999_996,
    scheduled: 1_999_995,
    draft: 1_999_994,
    snippet: 1_999_993,
    attachment: 1_999_992,
    device: 1_999_991,
    channelName: fresh("no-such-channel"),
    email: `${fresh("nobody")}@nowhere.test`,
    upload: `${ids.realmA}/00/AAAAAAAAAAAAAAAAAAAAAAAA/nothing.png`,
    tusUpload: "0".repeat(32),
  })[kind];

beforeAll(async () => {
  s = await startServer();
  const store = s.t.store;
  const { owner, alice, bob, guest, general, secret } = s.seed;
  const send = (senderId: number, to: { type: "channel"; channel: string; topic: string } | { type: "direct"; users: number[] }, content = "x") => store.sendMessage({ senderId, to, content }).id;
  // Uploads (records only: access is decided on them, the bytes are never reached here), linked from the messages below.
  ids.realmA = s.seed.realm.id;
  const uploadOf = (ownerId: number, realmId: number, name: string) => {
    const pathId = `${realmId}/ab/${fresh("upload").padEnd(24, "x")}/${name}`;
    return store.createAttachment({ ownerId, pathId, name, size: 1, contentType: "image/png", image: { width: 1, height: 1, animated: false } }, null);
  };
  const [generalUpload, dmBobUpload, secretUpload, dmOwnerUpload, unclaimedUpload] = ["g.png", "b.png", "s.png", "o.png", "u.png"].map((name) => uploadOf(alice.id, s.seed.realm.id, name));
  const link = (a: { pathId: string }) => `[f](/user_uploads/${a.pathId})`;
  // Realm A: what bob can read first (general, his DM), then what he cannot; the guest reads none of it.
  send(alice.id, { type: "channel", channel: "general", topic: "t" });
  const generalMsg = send(alice.id, { type: "channel", channel: "general", topic: "t" }, link(generalUpload!));
  const dmAliceBob = send(alice.id, { type: "direct", users: [bob.id] }, link(dmBobUpload!));
  const secretMsg = send(alice.id, { type: "channel", channel: "secret", topic: "t" }, link(secretUpload!));
  const dmAliceOwner = send(alice.id, { type: "direct", users: [owner.id] }, link(dmOwnerUpload!));

  // Realm B, after everything realm A can read.
  const b = store.createRealm({ subdomain: "bee", name: "Bee", owner: { email: "queen@bee.test", fullName: "Queen" } });
  const drone = store.createUser({ realmId: b.realm.id, email: "drone@bee.test", fullName: "Drone" });
  const created = (name: string, inviteOnly: boolean) =>
    store.subscribe(b.owner.id, { channels: [{ name }], principals: [b.owner.id, drone.id], newChannel: { inviteOnly } }).createdChannelIds[0]!;
  const hive = created("hive", false);
  const cell = created("cell", true);
  const foreignUpload = uploadOf(drone.id, b.realm.id, "f.png");
  const foreignMessages = [
    send(drone.id, { type: "channel", channel: "hive", topic: "t" }, link(foreignUpload)),
    send(drone.id, { type: "channel", channel: "cell", topic: "t" }),
    send(drone.id, { type: "direct", users: [b.owner.id] }),
  ];
  const workers = store.createGroup(b.owner.id, { name: "workers", members: [drone.id] });
  // Drafts and snippets of others: the other realm's, and alice's in realm A.
  const unaddressed = { type: "" as const, to: [], topic: "", content: "x" };
  const foreignDrafts = store.createDrafts(drone.id, [unaddressed]);
  const foreignSnippets = [store.createSavedSnippet(drone.id, "t", "c").id];
  const aliceDrafts = store.createDrafts(alice.id, [unaddressed]);
  const aliceSnippets = [store.createSavedSnippet(alice.id, "t", "c").id];
  const foreignDevices = [store.registerClientDevice(drone.id)];
  const aliceDevices = [store.registerClientDevice(alice.id)];
  for (const caller of [owner, bob, guest]) ids.ownDraft.set(caller.id, store.createDrafts(caller.id, [unaddressed])[0]!);
  const inFuture = Math.floor(Date.now() / 1000) + 365 * 86_400;
  const schedule = (senderId: number, userIds: number[]) => store.scheduleMessage(senderId, { to: { type: "direct", userIds }, content: "later", deliverAt: inFuture, client: "test" }).id;
  const foreignScheduled = [schedule(drone.id, [b.owner.id]), schedule(b.owner.id, [b.owner.id])];
  // Realm A: a group bob manages, each caller's own scheduled message, and alice's.
  ids.bob = bob.id;
  ids.bobsGroup = store.createGroup(bob.id, { name: "bobs", members: [bob.id] }).id;
  for (const caller of [owner, bob, guest]) ids.ownScheduled.set(caller.id, schedule(caller.id, [caller.id]));
  const alicesScheduled = [schedule(alice.id, [bob.id]), schedule(alice.id, [alice.id])];
  const freshChannel = (prefix: string, inviteOnly: boolean) => {
    const name = fresh(prefix);
    created(name, inviteOnly);
    return name;
  };
  const foreignTus = (await s.server.uploads.tus.create(b.realm.id, drone.id, 10, "f.txt", "text/plain")).id;
  const alicesTus = (await s.server.uploads.tus.create(s.seed.realm.id, alice.id, 10, "a.txt", "text/plain")).id;
  const alicesAttachments = [generalUpload!.id, secretUpload!.id, unclaimedUpload!.id];
  const foreign = (kind: Kind): readonly Ref[] =>
    ({
      upload: [foreignUpload.pathId],
      attachment: [foreignUpload.id],
      tusUpload: [foreignTus],
      message: foreignMessages,
      channel: [hive, cell],
      // Fresh names each time: subscribing by an unused name creates that channel in realm A.
      channelName: kind === "channelName" ? [freshChannel("hive", false), freshChannel("cell", true)] : [],
      user: [b.owner.id, drone.id],
      email: [b.owner.email, drone.email],
      group: [workers.id, store.systemGroupId(b.realm.id, "role:members")],
      draft: foreignDrafts,
      snippet: foreignSnippets,
      scheduled: foreignScheduled,
      device: foreignDevices,
    })[kind];
  scenarios = [
    { name: "bob: another realm", caller: bob, refs: foreign },
    { name: "guest: another realm", caller: guest, refs: foreign },
    { name: "owner: another realm", caller: owner, refs: foreign },
    { name: "owner: others' scheduled messages, drafts and snippets", caller: owner, refs: (kind) => ({ scheduled: alicesScheduled, draft: aliceDrafts, snippet: aliceSnippets, device: aliceDevices } as Refs)[kind] ?? [] },
    {
      name: "owner: others' scheduled messages, drafts, snippets and uploads",
      caller: owner,
      refs: (kind) => ({ scheduled: alicesScheduled, draft: aliceDrafts, snippet: aliceSnippets, upload: [unclaimedUpload!.pathId, dmBobUpload!.pathId], attachment: alicesAttachments, tusUpload: [alicesTus] } as Refs)[kind] ?? [],
    },
    {
      name: "bob: private places",
      caller: bob,
      refs: (kind) =>
        ({
          message: [secretMsg, dmAliceOwner],
          channel: [secret.id],
          channelName: ["secret"],
          scheduled: alicesScheduled,
          draft: aliceDrafts,
          snippet: aliceSnippets,
          upload: [secretUpload!.pathId, dmOwnerUpload!.pathId, unclaimedUpload!.pathId],
          attachment: alicesAttachments,
          tusUpload: [alicesTus],
        } as Refs)[kind] ?? [],
    },
    {
      name: "guest: channels not joined",
      caller: guest,
      refs: (kind) =>
        ({
          message: [generalMsg, secretMsg, dmAliceBob],
          channel: [general.id, secret.id],
          channelName: ["general", "secret"],
          scheduled: alicesScheduled,
          draft: aliceDrafts,
          snippet: aliceSnippets,
          upload: [generalUpload!.pathId, secretUpload!.pathId, dmBobUpload!.pathId, unclaimedUpload!.pathId],
          attachment: alicesAttachments,
          tusUpload: [alicesTus],
        } as Refs)[kind] ?? [],
    },
  ];
});
afterAll(() => s.close());

/** Routes outside /api/v1 are marked: a download path and its /api/v1 twin are two routes. */
const endpointKey = (e: Endpoint) => `${e.method} ${e.root ? "(root) " : ""}${e.path}`;
const pathParams = (e: Endpoint) => [...e.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
const paramNames = (e: Endpoint) => [...Object.keys(e.params), ...pathParams(e)];
const idParams = (e: Endpoint) => paramNames(e).filter((name) => name in ID_PARAMS);

interface Answer {
  readonly status: number;
  readonly body: unknown;
}

function replaceRef(text: string, ref: Ref): string {
  const escaped = String(ref).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  // A base's fresh channel name differs on every call; a refusal may echo it.
  return text.replace(new RegExp(`(?<![\\w.@-])${escaped}(?![\\w@-])`, "gi"), "<ref>").replace(/\bnew-\d+\b/g, "<fresh>");
}

/**
 * Equal answers, except where one names `ref` and the other `nowhereRef` at the same
 * place (an echoed ID, or the ID or name inside a message). Random fields are skipped.
 */
function sameAnswer(got: unknown, expected: unknown, ref: Ref, nowhereRef: Ref): boolean {
  if (got === expected) return true;
  if (typeof got === "number" && typeof expected === "number") return got === ref && expected === nowhereRef;
  if (typeof got === "string" && typeof expected === "string") return replaceRef(got, ref) === replaceRef(expected, nowhereRef);
  if (Array.isArray(got) && Array.isArray(expected)) return got.length === expected.length && got.every((g, i) => sameAnswer(g, expected[i], ref, nowhereRef));
  if (got !== null && expected !== null && typeof got === "object" && typeof expected === "object" && !Array.isArray(got) && !Array.isArray(expected)) {
    const g = got as Record<string, unknown>;
    const e = expected as Record<string, unknown>;
    const keys = Object.keys(g).sort();
    if (JSON.stringify(keys) !== JSON.stringify(Object.keys(e).sort())) return false;
    return keys.every((k) => RANDOM_FIELDS.has(k) || sameAnswer(g[k], e[k], ref, nowhereRef));
  }
  return false;
}
// Fields that differ between any two calls (a fresh queue, the current time).
const RANDOM_FIELDS = new Set(["queue_id", "server_timestamp"]);

async function ask(caller: User, endpoint: Endpoint, base: Base, param: string, probe: Probe, ref: Ref): Promise<Answer> {
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(base.params)) params[k] = typeof v === "function" ? v(caller) : v;
  const value = probe.encode(ref, endpoint);
  const isPath = pathParams(endpoint).includes(param);
  if (!isPath) params[param] = value;
  const spread = isPath && probe.encodePath ? probe.encodePath(ref) : {};
  const path = endpoint.path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(spread[name] ?? (name === param ? value : (params[name] ?? ""))));
  // Path values given by the base go in the path only.
  for (const name of pathParams(endpoint)) delete params[name];
  if (endpoint.root) {
    // Outside /api/v1 (file downloads).
    const response = await fetch(`${s.base}${path}`, { method: endpoint.method, headers: { Authorization: basicAuth(s.t.store.getUser(caller.id)) } });
    const text = await response.text();
    return { status: response.status, body: text.startsWith("{") ? (JSON.parse(text) as unknown) : text };
  }
  const r = await s.call(caller, endpoint.method, path, params, { headers: { "Tus-Resumable": "1.0.0" } });
  return { status: r.status, body: r.body };
}

/** Long success bodies (register) are cut in failure reports. */
const show = (a: Answer) => JSON.stringify(a).slice(0, 400);

describe("access sweep over the route table", () => {
  it("classifies every parameter of every endpoint, and skips exactly the endpoints without IDs", () => {
    const unclassified = ENDPOINTS.flatMap((e) => paramNames(e).filter((n) => !(n in ID_PARAMS) && !NOT_IDS.has(n)).map((n) => `${endpointKey(e)}: ${n}`));
    expect(unclassified).toEqual([]);
    expect(ENDPOINTS.filter((e) => idParams(e).length === 0).map(endpointKey).sort()).toEqual([...NO_ID_ENDPOINTS].sort());
  });

  it("answers IDs of other realms and of private places exactly like IDs that exist nowhere, and changes nothing", async () => {
    const mismatches: string[] = [];
    const stillExceptional = new Set<string>();
    const swept = new Set<string>();
    let requests = 0;
    for (const endpoint of ENDPOINTS) {
      const key = endpointKey(endpoint);
      for (const param of idParams(endpoint)) {
        const bases = (BASES[key] ?? [{ params: {} }]).filter((b) => b.for === undefined || b.for.includes(param));
        for (const base of bases) {
          const plain = Object.fromEntries(Object.entries(base.params).filter((e): e is [string, string] => typeof e[1] === "string"));
          for (const probe of ID_PARAMS[param]!.filter((p) => p.when === undefined || p.when(plain, endpoint))) {
            for (const scenario of scenarios) {
              const refs = scenario.refs(probe.kind);
              if (refs.length === 0) continue;
              swept.add(`${key} ${param}`);
              const caller = scenario.caller;
              const before = fingerprint(s.t.store);
              const nowhereRef = nowhere(probe.kind);
              const expected = await ask(caller, endpoint, base, param, probe, nowhereRef);
              const nothingExpectedToChange = expected.status >= 400;
              const exception = EXCEPTIONS.find((x) => x.endpoint === key && x.param === param && x.scenario === scenario.name);
              for (const ref of refs) {
                const got = await ask(caller, endpoint, base, param, probe, ref);
                requests += 2;
                const where = `${key} ${param} (${probe.label}, base ${JSON.stringify(plain)}) as ${scenario.name}, ref ${ref}`;
                const same = sameAnswer(got, expected, ref, nowhereRef);
                if (exception) {
                  if (!same) stillExceptional.add(`${key} ${param} ${scenario.name}`);
                } else if (!same) {
                  mismatches.push(`${where}:\n    got      ${show(got)}\n    expected ${show(expected)}`);
                }
              }
              if (nothingExpectedToChange && !exception && fingerprint(s.t.store) !== before) mismatches.push(`${key} ${param} (${probe.label}) as ${scenario.name}: the store changed`);
            }
          }
        }
      }
    }
    expect(mismatches).toEqual([]);
    expect([...stillExceptional].sort()).toEqual(EXCEPTIONS.map((x) => `${x.endpoint} ${x.param} ${x.scenario}`).sort());
    // Every ID parameter of every endpoint was probed at least once.
    expect([...swept].sort()).toEqual(ENDPOINTS.flatMap((e) => idParams(e).map((p) => `${endpointKey(e)} ${p}`)).sort());
    expect(requests).toBeGreaterThan(500);
  });
});
