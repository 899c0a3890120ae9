/**
 * PATCH /realm over HTTP: the permission matrix (owner, administrator, moderator,
 * member, guest, bot, another realm's owner), owner-only settings, Zulip's checks of
 * values and group settings (nothing changes on a refusal, even beside valid values),
 * stored values reported by register, the engine enforcing the message rules it stores,
 * and the realm update / update_dict events other users' queues get.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROLE, type User } from "../../src/engine/index.js";
import {
  basicAuth,
  encodeParams,
  expectRejectedUnchanged,
  rawRequest,
  startServer,
  type TestServer,
} from "../support/http.js";

let s: TestServer;
let admin: User;
let moderator: User;
let bot: User;
let queen: User;

beforeAll(async () => {
  s = await startServer();
  const { store } = s.t;
  const realmId = s.seed.realm.id;
  admin = store.createUser({ realmId, email: "admin@test.dev", fullName: "Ada Admin", role: ROLE.ADMINISTRATOR });
  moderator = store.createUser({ realmId, email: "mod@test.dev", fullName: "Mo Moderator", role: ROLE.MODERATOR });
  bot = store.createUser({
    realmId,
    email: "helper-bot@test.dev",
    fullName: "Helper",
    role: ROLE.ADMINISTRATOR,
    bot: { type: 1, ownerId: s.seed.owner.id },
  });
  queen = store.createRealm({
    subdomain: "bee",
    name: "Bee",
    owner: { email: "queen@bee.test", fullName: "Queen" },
  }).owner;
});
afterAll(() => s.close());

type Reply = { status: number; body: Record<string, unknown> };
const asBee = (user: User, params: Record<string, unknown>): Promise<Reply> =>
  rawRequest(
    s.base,
    "PATCH",
    "/realm",
    {
      Host: "bee.localhost",
      Authorization: basicAuth(s.t.store.getUser(user.id)),
      "Content-Type": "application/x-www-form-urlencoded",
    },
    encodeParams(params).toString(),
  );
const patch = (user: User, params: Record<string, unknown>) => s.call(user, "PATCH", "/realm", params);
const refused = (call: () => Promise<Reply>, status: number, code: string, msg: string) =>
  expectRejectedUnchanged(s, call, status, code, msg);
const NOT_ADMIN = [400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator"] as const;
const NOT_OWNER = [400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner"] as const;
const group = (name: string, realmId = s.seed.realm.id) => s.t.store.systemGroupId(realmId, name);
const realmState = async (user: User = s.seed.owner) => {
  const r = await s.call(user, "POST", "/register", { fetch_event_types: ["realm"] });
  expect(r.status).toBe(200);
  return r.body;
};

async function queueFor(user: User) {
  const r = await s.call(user, "POST", "/register", { event_types: ["realm"] });
  expect(r.status).toBe(200);
  const queueId = r.body["queue_id"] as string;
  let last = r.body["last_event_id"] as number;
  return async (): Promise<Record<string, unknown>[]> => {
    const p = await s.call(user, "GET", "/events", { queue_id: queueId, last_event_id: last, dont_block: true });
    const events = (p.body["events"] as Record<string, unknown>[]).filter((e) => e["type"] !== "heartbeat");
    if (events.length > 0) last = events[events.length - 1]!["id"] as number;
    return events.map(({ id: _id, ...rest }) => rest);
  };
}

describe("PATCH /realm permissions", () => {
  it("administrators only: moderators, members, guests and member bots are refused", async () => {
    const { alice, guest } = s.seed;
    const memberBot = s.t.store.createUser({
      realmId: s.seed.realm.id,
      email: "member-bot@test.dev",
      fullName: "Member bot",
      bot: { type: 1, ownerId: alice.id },
    });
    for (const caller of [moderator, alice, guest, memberBot])
      await refused(() => patch(caller, { description: "x" }), ...NOT_ADMIN);
    for (const [caller, text] of [
      [admin, "by the admin"],
      [bot, "by an admin bot"],
      [s.seed.owner, "by the owner"],
    ] as const) {
      const r = await patch(caller, { description: text });
      expect(r).toMatchObject({ status: 200, body: { result: "success", description: "updated" } });
      expect(s.t.store.realmProperties(s.seed.realm.id).description).toBe(text);
    }
  });

  it("owner-only settings refuse administrators and take owners' changes", async () => {
    const ownerOnly: Record<string, unknown> = {
      invite_required: false,
      waiting_period_threshold: 3,
      emails_restricted_to_domains: true,
      disallow_disposable_email_addresses: false,
      message_retention_days: 30,
      can_invite_users_group: JSON.stringify({ new: group("role:administrators") }),
      can_create_groups: JSON.stringify({ new: group("role:moderators") }),
      can_manage_all_groups: JSON.stringify({ new: group("role:administrators") }),
      create_multiuse_invite_group: JSON.stringify({ new: group("role:owners") }),
    };
    for (const [name, value] of Object.entries(ownerOnly)) {
      await refused(() => patch(admin, { [name]: value }), ...NOT_OWNER);
      const r = await patch(s.seed.owner, { [name]: value });
      expect(r.status, name).toBe(200);
      expect(Object.keys(r.body), name).toContain(name);
    }
    const realm = await realmState();
    expect(realm).toMatchObject({
      realm_invite_required: false,
      realm_waiting_period_threshold: 3,
      realm_emails_restricted_to_domains: true,
      realm_disallow_disposable_email_addresses: false,
      realm_message_retention_days: 30,
      realm_can_invite_users_group: group("role:administrators"),
      realm_can_create_groups: group("role:moderators"),
      realm_create_multiuse_invite_group: group("role:owners"),
    });
    expect((await patch(s.seed.owner, { message_retention_days: '"unlimited"' })).body).toMatchObject({
      message_retention_days: -1,
    });
  });

  it("another realm's owner changes that realm only", async () => {
    const r = await asBee(queen, { name: "Hive", digest_weekday: 4 });
    expect(r).toMatchObject({ status: 200, body: { name: "updated", digest_weekday: 4 } });
    expect(s.t.store.findRealm(queen.realmId)?.name).toBe("Hive");
    expect(s.t.store.findRealm(s.seed.realm.id)?.name).not.toBe("Hive");
    expect(s.t.store.realmProperties(s.seed.realm.id).digestWeekday).toBe(1);
    // Its groups are not this realm's.
    await expectRejectedUnchanged(
      s,
      () => asBee(queen, { can_create_groups: JSON.stringify({ new: group("role:members") }) }),
      400,
      "BAD_REQUEST",
      "Invalid user group",
    );
  });
});

describe("PATCH /realm values", () => {
  it("stores what changed, answers it in Zulip's form and register reports it", async () => {
    const r = await patch(admin, {
      digest_weekday: 5,
      video_chat_provider: 0,
      jitsi_server_url: JSON.stringify("https://jitsi.example.org"),
      gif_rating_policy: 2,
      enable_read_receipts: true,
      default_language: "de",
      welcome_message_custom_text: "Welcome!",
      signup_announcements_stream_id: s.seed.general.id,
      org_type: 20,
      can_mention_many_users_group: JSON.stringify({
        new: { direct_members: [s.seed.alice.id], direct_subgroups: [] },
      }),
    });
    expect(r.body).toEqual({
      result: "success",
      msg: "",
      digest_weekday: 5,
      video_chat_provider: 0,
      jitsi_server_url: "updated",
      gif_rating_policy: 2,
      enable_read_receipts: true,
      default_language: "updated",
      welcome_message_custom_text: "updated",
      signup_announcements_stream_id: s.seed.general.id,
      org_type: 20,
      can_mention_many_users_group: { direct_members: [s.seed.alice.id], direct_subgroups: [] },
    });
    expect(await realmState(s.seed.alice)).toMatchObject({
      realm_digest_weekday: 5,
      realm_video_chat_provider: 0,
      realm_jitsi_server_url: "https://jitsi.example.org",
      jitsi_server_url: "https://jitsi.example.org",
      realm_gif_rating_policy: 2,
      realm_enable_read_receipts: true,
      realm_default_language: "de",
      realm_welcome_message_custom_text: "Welcome!",
      realm_signup_announcements_stream_id: s.seed.general.id,
      realm_org_type: 20,
      realm_can_mention_many_users_group: { direct_members: [s.seed.alice.id], direct_subgroups: [] },
    });
    // The same values again change nothing.
    expect((await patch(admin, { digest_weekday: 5, org_type: 20 })).body).toEqual({ result: "success", msg: "" });
    // "default" resets the Jitsi server; -1 clears a channel.
    await patch(admin, { jitsi_server_url: JSON.stringify("default"), signup_announcements_stream_id: -1 });
    expect(await realmState()).toMatchObject({
      realm_jitsi_server_url: null,
      realm_signup_announcements_stream_id: -1,
    });
  });

  it("routes the message rules through the engine's policy, which enforces them", async () => {
    const r = await patch(admin, {
      message_content_edit_limit_seconds: "unlimited",
      allow_edit_history: false,
      can_delete_own_message_group: JSON.stringify({ new: group("role:members") }),
      mandatory_topics: true,
    });
    expect(r.body).toMatchObject({
      message_content_edit_limit_seconds: null,
      message_edit_history_visibility_policy: "none",
      can_delete_own_message_group: group("role:members"),
      topics_policy: "updated",
    });
    const policy = s.t.store.realmMessagePolicy(s.seed.realm.id);
    expect(policy).toMatchObject({
      messageContentEditLimitSeconds: null,
      messageEditHistoryVisibilityPolicy: "none",
      canDeleteOwnMessageGroup: group("role:members"),
    });
    expect(await realmState()).toMatchObject({
      realm_message_content_edit_limit_seconds: null,
      realm_allow_edit_history: false,
      realm_mandatory_topics: true,
      realm_topics_policy: "disable_empty_topic",
    });
    // Enforced: a topic-less message is refused now.
    const sent = await s.call(s.seed.alice, "POST", "/messages", {
      type: "stream",
      to: s.seed.general.id,
      topic: "",
      content: "hi",
    });
    expect(sent.status).toBe(400);
    await patch(admin, { topics_policy: "allow_empty_topic", allow_edit_history: true });
  });

  it("refuses bad values with Zulip's messages and changes nothing, even beside valid ones", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ digest_weekday: 7 }, "Invalid digest_weekday 7"],
      [{ video_chat_provider: 5 }, "Invalid video_chat_provider 5"],
      [{ gif_rating_policy: 9 }, "Invalid gif_rating_policy 9"],
      [{ org_type: 11 }, "Invalid org_type 11"],
      [{ default_language: "xx" }, "Invalid language 'xx'"],
      [{ name: "  " }, "Organization name can't be empty."],
      [{ name: "n".repeat(41) }, "name is too long (limit: 40 characters)"],
      [{ jitsi_server_url: JSON.stringify("ftp://x") }, "jitsi_server_url is not an allowed_type"],
      [{ message_content_edit_limit_seconds: 0 }, "Bad value for 'message_content_edit_limit_seconds': 0"],
      [
        { move_messages_within_stream_limit_seconds: "forever" },
        "Bad value for 'move_messages_within_stream_limit_seconds': forever",
      ],
      [{ signup_announcements_stream_id: 99999 }, "Invalid channel ID"],
      [
        { can_add_subscribers_group: JSON.stringify({ new: group("role:everyone") }) },
        "'can_add_subscribers_group' setting cannot be set to 'role:everyone' group.",
      ],
      [
        { can_manage_billing_group: JSON.stringify({ new: group("role:nobody") }) },
        "'can_manage_billing_group' setting cannot be set to 'role:nobody' group.",
      ],
      [
        { direct_message_permission_group: JSON.stringify({ new: group("role:internet") }) },
        "'direct_message_permission_group' setting cannot be set to 'role:internet' group.",
      ],
      [
        { can_access_all_users_group: JSON.stringify({ new: group("role:moderators") }) },
        "'can_access_all_users_group' setting cannot be set to 'role:moderators' group.",
      ],
      [
        {
          can_create_web_public_channel_group: JSON.stringify({
            new: { direct_members: [s.seed.alice.id], direct_subgroups: [] },
          }),
        },
        "'can_create_web_public_channel_group' must be a system user group.",
      ],
      [
        {
          can_create_public_channel_group: JSON.stringify({
            new: group("role:administrators"),
            old: group("role:nobody"),
          }),
        },
        "'old' value does not match the expected value.",
      ],
      [
        {
          can_create_private_channel_group: JSON.stringify({
            new: { direct_members: [99999], direct_subgroups: [] },
          }),
        },
        "Invalid user ID: 99999",
      ],
    ];
    for (const [params, msg] of cases)
      await refused(() => patch(s.seed.owner, { description: "never", ...params }), 400, "BAD_REQUEST", msg);
  });

  it("sends realm update and update_dict events to the realm's users", async () => {
    const poll = await queueFor(s.seed.bob);
    await patch(admin, {
      name: "Renamed",
      require_unique_names: true,
      can_create_public_channel_group: JSON.stringify({ new: group("role:administrators") }),
      allow_message_editing: false,
    });
    expect(await poll()).toEqual([
      { type: "realm", op: "update", property: "name", value: "Renamed" },
      { type: "realm", op: "update", property: "require_unique_names", value: true },
      {
        type: "realm",
        op: "update_dict",
        property: "default",
        data: { can_create_public_channel_group: group("role:administrators") },
      },
      { type: "realm", op: "update_dict", property: "default", data: { allow_message_editing: false } },
    ]);
    await patch(admin, { require_unique_names: true });
    expect(await poll()).toEqual([]);
    await patch(admin, { allow_message_editing: true });
  });
});
