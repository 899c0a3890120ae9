/**
 * Responses against Zulip's OpenAPI description (test/fixtures/zulip-openapi-register.json,
 * extracted by tools/zulip-openapi.ts from zerver/openapi/zulip.yaml at the commit it
 * names: a fork of zulip/zulip carrying the spec up to feature level 497, the newest
 * copy found; keys new after our level would be tolerated as missing, and there are
 * none in these schemas). Checked: POST /register for a member
 * with every event type, GET /users/me, realm emoji objects and the stream create
 * event. Unknown keys (where Zulip's schema says additionalProperties: false), missing
 * required keys, wrong types and null where null is not allowed all fail.
 *
 * Keys Zulip's register schema lists that parley does not send are named below with
 * the reason; the test fails if one appears (remove it from the list) or another goes
 * missing.
 */
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { ZULIP_FEATURE_LEVEL } from "../../src/wire/version.js";
import { startServer, type TestServer } from "../support/http.js";
import { loadFixture, OpenApiValidator, type Schema } from "../support/openapi.js";

/** Register keys parley does not produce, and why. */
const KNOWN_GAPS: Readonly<Record<string, string>> = {
  server_supported_permission_settings: "metadata for ~40 group settings; clients fall back to their own tables",
  realm_uuid: "realms store no UUID; adding one needs a stored field and a migration",
  realm_workplace_users_group: "a Zulip Cloud billing setting parley has no equivalent of",
  receives_typing_notifications: "documented at the top level without a gating event type; sent inside user_settings",
};
/** Keys that are present only in situations this test does not create. */
const CONDITIONAL: Readonly<Record<string, string>> = {
  ignored_parameters_unsupported: "only when a request names a parameter the endpoint ignores",
  demo_organization_scheduled_deletion_date: "only for demo organizations",
};

const fixture = loadFixture();
const validator = new OpenApiValidator(fixture);
const root = (name: string): Schema => {
  const schema = fixture.roots[name];
  if (!schema) throw new Error(`fixture has no root ${name}`);
  return schema;
};
const schemaOf = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** Register lists the data set up below fills. */
const FILLED_LISTS = [
  ...["drafts", "saved_snippets", "scheduled_messages", "user_topics", "realm_playgrounds", "realm_bots"],
  ...["realm_non_active_users", "unsubscribed", "never_subscribed", "recent_private_conversations", "starred_messages"],
];

let s: TestServer;
let bot: User;
let emojiId = "";

const green = { r: 10, g: 200, b: 10, alpha: 1 };
const png = () =>
  sharp({ create: { width: 64, height: 64, channels: 4, background: green } })
    .png()
    .toBuffer();
type Body = Record<string, unknown>;
async function ok(user: User, method: string, path: string, params: Body = {}, init: { body?: FormData } = {}) {
  const r = await s.call(user, method, path, params, init);
  expect([path, r.status, r.body["msg"]]).toEqual([path, 200, ""]);
  return r.body;
}

beforeAll(async () => {
  s = await startServer();
  const { owner, alice, bob, general } = s.seed;
  // Every register section with content: messages of each kind (unread, mentioned,
  // starred), a group DM, a draft, a snippet, a scheduled message, a muted topic, a
  // device, presence, a playground, a custom emoji, a user group, a bot, a
  // deactivated user, a channel alice left and one she never joined.
  await ok(bob, "POST", "/messages", { type: "direct", to: [alice.id], content: "hi" });
  await ok(bob, "POST", "/messages", { type: "direct", to: [alice.id, owner.id], content: "all of us" });
  const mention = await ok(bob, "POST", "/messages", {
    type: "stream",
    to: "general",
    topic: "t",
    content: "@**Alice**",
  });
  await ok(alice, "POST", "/messages/flags", { messages: [mention["id"]], op: "add", flag: "starred" });
  const draft = { type: "stream", to: [general.id], topic: "d", content: "draft", timestamp: 1_700_000_000 };
  await ok(alice, "POST", "/drafts", { drafts: [draft] });
  await ok(alice, "POST", "/saved_snippets", { title: "greeting", content: "hello" });
  const tomorrow = Math.floor(Date.now() / 1000) + 86_400;
  await ok(alice, "POST", "/scheduled_messages", {
    type: "stream",
    to: general.id,
    topic: "later",
    content: "soon",
    scheduled_delivery_timestamp: tomorrow,
  });
  await ok(alice, "POST", "/user_topics", { stream_id: general.id, topic: "t", visibility_policy: 1 });
  await ok(alice, "POST", "/register_client_device");
  await ok(alice, "POST", "/users/me/presence", { status: "active" });
  const playground = { name: "Py", pygments_language: "Python", url_template: "https://p.test/{code}" };
  await ok(owner, "POST", "/realm/playgrounds", playground);
  const form = new FormData();
  form.append("file", new Blob([await png()], { type: "image/png" }), "tick.png");
  await ok(alice, "POST", "/realm/emoji/tick", {}, { body: form });
  await ok(alice, "POST", "/user_groups/create", { name: "readers", description: "d", members: [alice.id, bob.id] });
  const realmId = s.seed.realm.id;
  const helper = {
    realmId,
    email: "helper-bot@test.dev",
    fullName: "Helper",
    bot: { type: 1 as const, ownerId: alice.id },
  };
  bot = s.t.store.createUser(helper);
  const gone = s.t.store.createUser({ realmId, email: "gone@test.dev", fullName: "Gone" });
  s.t.store.setUserActive(gone.id, false);
  await ok(owner, "POST", "/users/me/subscriptions", { subscriptions: [{ name: "left" }, { name: "never" }] });
  // Without the Notification Bot's DM, which would add a second unread direct message.
  await ok(owner, "POST", "/users/me/subscriptions", {
    subscriptions: [{ name: "left" }],
    principals: [alice.id],
    send_new_subscription_messages: false,
  });
  await ok(alice, "DELETE", "/users/me/subscriptions", { subscriptions: ["left"] });
  const emoji = (await ok(alice, "GET", "/realm/emoji"))["emoji"] as Record<string, unknown>;
  emojiId = Object.keys(emoji)[0] ?? "";
});
afterAll(() => s.close());

/** The events waiting in a queue registered by `register`. */
async function pending(user: User, register: Body): Promise<Body[]> {
  const polled = await ok(user, "GET", "/events", {
    queue_id: register["queue_id"],
    last_event_id: -1,
    dont_block: "true",
  });
  return polled["events"] as Body[];
}

describe("POST /register against Zulip's schema", () => {
  it(`names the spec version it checks against (feature level ${ZULIP_FEATURE_LEVEL})`, () => {
    expect(fixture.source.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(fixture.source.extractedFor).toBe(ZULIP_FEATURE_LEVEL);
  });

  const registrations: readonly [string, Record<string, unknown>][] = [
    ["no client capabilities", {}],
    [
      "a modern client's capabilities and subscriber lists",
      {
        include_subscribers: "true",
        client_capabilities: {
          notification_settings_null: true,
          bulk_message_deletion: true,
          user_avatar_url_field_optional: true,
          stream_typing_notifications: true,
          user_settings_object: true,
          linkifier_url_template: true,
          user_list_incomplete: true,
          include_deactivated_groups: true,
          archived_channels: true,
          empty_topic_name: true,
          simplified_presence_events: true,
          individual_emoji_changes: true,
        },
      },
    ],
  ];
  for (const [label, params] of registrations) {
    it(`a member's register with every event type conforms (${label})`, async () => {
      const body = await ok(s.seed.alice, "POST", "/register", params);
      expect(validator.validate(body, root("register"))).toEqual([]);
      // The sections above have content, so their objects were checked too.
      for (const key of FILLED_LISTS) {
        expect([key, (body[key] as unknown[]).length > 0]).toEqual([key, true]);
      }
      expect(Object.keys(body["realm_emoji"] as object)).toEqual([emojiId]);
      expect(Object.keys(body["devices"] as object)).toHaveLength(1);
      const unread = body["unread_msgs"] as Record<string, unknown[]>;
      expect(["pms", "huddles", "streams", "mentions"].map((k) => unread[k]?.length)).toEqual([1, 1, 1, 1]);
    });
  }

  it("sends every key of Zulip's register schema but the named gaps", async () => {
    const body = await ok(s.seed.alice, "POST", "/register");
    const listed = Object.keys(validator.resolve(root("register"))["properties"] as Schema);
    const newer = new Set(Object.keys(fixture.addedAfter).map((pointer) => pointer.split("/").pop()));
    const missing = listed.filter((key) => !(key in body) && !newer.has(key) && !(key in CONDITIONAL));
    expect(missing.sort()).toEqual(Object.keys(KNOWN_GAPS).sort());
  });

  it("drops the keys removed at or before our feature level and sends strings where Zulip requires them", async () => {
    const body = await ok(s.seed.alice, "POST", "/register");
    const removed = [
      ...["realm_bot_creation_policy", "realm_edit_topic_policy", "realm_is_zephyr_mirror_realm"],
      ...["realm_web_public_access_enabled", "realm_giphy_rating", "giphy_rating_options", "is_billing_admin", "role"],
    ];
    expect(removed.filter((key) => key in body)).toEqual([]);
    expect("dense_mode" in (body["user_settings"] as object)).toBe(false);
    expect("dense_mode" in (body["realm_user_settings_defaults"] as object)).toBe(false);
    expect(typeof body["jitsi_server_url"]).toBe("string");
    // Bots are described by their User object; realm_bots keeps the bot-only settings (FL 474).
    const settings = {
      default_sending_stream: null,
      default_events_register_stream: null,
      default_all_public_streams: false,
    };
    expect(body["realm_bots"]).toEqual([{ user_id: bot.id, ...settings, services: [] }]);
  });

  it("is_moderator is true for moderators and above (FL 380)", async () => {
    const isModerator = async (user: User) => {
      return (await ok(user, "POST", "/register", { fetch_event_types: ["realm_user"] }))["is_moderator"];
    };
    expect([await isModerator(s.seed.owner), await isModerator(s.seed.alice)]).toEqual([true, false]);
  });
});

describe("other objects against Zulip's schema", () => {
  it("GET /users/me, for a human and for a bot", async () => {
    for (const user of [s.seed.alice, bot]) {
      const body = await ok(user, "GET", "/users/me");
      expect(validator.validate(body, root("ownUser"))).toEqual([]);
    }
  });

  it("realm emoji, in GET /realm/emoji and in their events", async () => {
    const emoji = (await ok(s.seed.alice, "GET", "/realm/emoji"))["emoji"] as Record<string, unknown>;
    for (const [id, value] of Object.entries(emoji)) {
      expect([id, validator.validate(value, schemaOf("RealmEmoji"))]).toEqual([id, []]);
    }
    const capabilities = { individual_emoji_changes: true };
    const params = { event_types: ["realm_emoji"], client_capabilities: capabilities };
    const queue = await ok(s.seed.bob, "POST", "/register", params);
    const form = new FormData();
    form.append("file", new Blob([await png()], { type: "image/png" }), "tock.png");
    await ok(s.seed.alice, "POST", "/realm/emoji/tock", {}, { body: form });
    const events = await pending(s.seed.bob, queue);
    const added = events.find((e) => e["type"] === "realm_emoji" && e["op"] === "add");
    expect(added).toBeDefined();
    expect(validator.validate(added!["emoji"], schemaOf("RealmEmoji"))).toEqual([]);
  });

  it("stream create events carry BasicChannels; a revealed channel's subscribers follow as peer_add", async () => {
    const { owner, bob, alice, secret } = s.seed;
    const queue = await ok(bob, "POST", "/register", { event_types: ["stream", "subscription"] });
    await ok(owner, "POST", "/users/me/subscriptions", { subscriptions: [{ name: "fresh-public" }] });
    // Made an administrator, bob sees the private channel he is not in, with its subscribers.
    await ok(owner, "PATCH", `/users/${bob.id}`, { role: 200 });
    const events = await pending(bob, queue);
    const creates = events.filter((e) => e["type"] === "stream" && e["op"] === "create");
    const names = creates.map((e) => (e["streams"] as { name: string }[]).map((c) => c.name));
    expect(names).toEqual([["fresh-public"], ["secret"]]);
    for (const event of creates) expect(validator.validate(event, root("streamCreateEvent"))).toEqual([]);
    const peerAdd = (e: Body) => e["type"] === "subscription" && e["op"] === "peer_add";
    const peers = events.filter((e) => peerAdd(e) && (e["stream_ids"] as number[]).includes(secret.id));
    const ascending = (ids: number[]) => [...ids].sort((a, b) => a - b);
    expect(peers.map((e) => ascending(e["user_ids"] as number[]))).toEqual([ascending([owner.id, alice.id])]);
    expect(events.indexOf(peers[0]!)).toBeGreaterThan(events.indexOf(creates[1]!));
  });
});

describe("the validator", () => {
  it("fails on unknown keys, missing required keys, wrong types and unexpected nulls", async () => {
    const body = await ok(s.seed.alice, "POST", "/register");
    const clone = () => JSON.parse(JSON.stringify(body)) as Record<string, unknown>;
    const extra = clone();
    extra["realm_bot_creation_policy"] = 1;
    expect(validator.validate(extra, root("register"))).toEqual(["$: unknown key realm_bot_creation_policy"]);
    const missing = clone();
    delete (missing["streams"] as Record<string, unknown>[])[0]!["stream_id"];
    expect(validator.validate(missing, root("register"))).toEqual(["$.streams[0]: missing required key stream_id"]);
    const wrongType = clone();
    wrongType["max_message_length"] = "10000";
    expect(validator.validate(wrongType, root("register"))).toEqual(['$.max_message_length: "10000" is not integer']);
    const nulled = clone();
    nulled["jitsi_server_url"] = null;
    expect(validator.validate(nulled, root("register"))).toEqual(["$.jitsi_server_url: null where string is required"]);
    const nestedExtra = clone();
    (nestedExtra["realm_user_settings_defaults"] as Record<string, unknown>)["dense_mode"] = false;
    const nestedErrors = validator.validate(nestedExtra, root("register"));
    expect(nestedErrors).toEqual(["$.realm_user_settings_defaults: unknown key dense_mode"]);
  });
});
