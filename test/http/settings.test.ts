/**
 * PATCH /settings and PATCH /realm/user_settings_defaults over HTTP: stored and
 * returned values, their effects (names and time zones on user objects, typing,
 * drafts), Zulip's value checks with nothing changed on refusal, who may do what,
 * administrators' bulk edits with skip_if_already_edited, register sections and the
 * events each change emits.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";

let s: TestServer;
beforeEach(async () => {
  s = await startServer();
});
afterEach(() => s.close());

type Ev = Record<string, unknown> & { type: string; id: number };

const patch = (user: User, params: Record<string, unknown>) => s.call(user, "PATCH", "/settings", params);
const patchDefaults = (user: User, params: Record<string, unknown>) =>
  s.call(user, "PATCH", "/realm/user_settings_defaults", params);

async function userSettings(user: User): Promise<Record<string, unknown>> {
  const r = await s.call(user, "POST", "/register", { fetch_event_types: ["user_settings"] });
  expect(r.status).toBe(200);
  return r.body["user_settings"] as Record<string, unknown>;
}

async function register(user: User, types: string[]): Promise<string> {
  const r = await s.call(user, "POST", "/register", { event_types: types });
  expect(r.status).toBe(200);
  return r.body["queue_id"] as string;
}

async function events(user: User, queueId: string): Promise<Ev[]> {
  const r = await s.call(user, "GET", "/events", { queue_id: queueId, last_event_id: -1, dont_block: true });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body["events"] as Ev[]).filter((e) => e.type !== "heartbeat");
}

function makeBot(): User {
  return s.t.store.createUser({
    realmId: s.seed.realm.id,
    email: "bot@test.dev",
    fullName: "Helper Bot",
    bot: { type: 1, ownerId: s.seed.alice.id },
  });
}

describe("PATCH /settings: own settings", () => {
  it("stores every kind of setting, returns them in register and announces each change to the user only", async () => {
    const { alice, bob } = s.seed;
    const qAlice = await register(alice, ["user_settings"]);
    const qBob = await register(bob, ["user_settings"]);
    const r = await patch(alice, {
      twenty_four_hour_time: true,
      web_mark_read_on_scroll_policy: 3,
      web_font_size_px: 20,
      emojiset: "text",
      web_home_view: "recent_topics",
      web_left_sidebar_show_channel_folders: false,
      resolved_topic_notice_auto_read_policy: "never",
      default_language: "de",
      email_notifications_batching_period_seconds: 604800,
      notification_sound: "none",
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({ result: "success", msg: "" });
    expect(await userSettings(alice)).toMatchObject({
      twenty_four_hour_time: true,
      web_mark_read_on_scroll_policy: 3,
      web_font_size_px: 20,
      emojiset: "text",
      web_home_view: "recent",
      web_left_sidebar_show_channel_folders: false,
      resolved_topic_notice_auto_read_policy: "never",
      default_language: "de",
      email_notifications_batching_period_seconds: 604800,
      notification_sound: "none",
    });
    // Bob's are untouched.
    expect(await userSettings(bob)).toMatchObject({
      twenty_four_hour_time: false,
      web_home_view: "inbox",
      default_language: "en",
    });
    const got = await events(alice, qAlice);
    // One event per changed setting (in the engine's setting order).
    expect(got.map((e) => String(e["property"])).sort()).toEqual(
      [
        "twenty_four_hour_time",
        "web_mark_read_on_scroll_policy",
        "web_font_size_px",
        "emojiset",
        "web_home_view",
        "web_left_sidebar_show_channel_folders",
        "resolved_topic_notice_auto_read_policy",
        "default_language",
        "email_notifications_batching_period_seconds",
        "notification_sound",
      ].sort(),
    );
    expect(got.find((e) => e["property"] === "twenty_four_hour_time")).toMatchObject({
      type: "user_settings",
      op: "update",
      property: "twenty_four_hour_time",
      value: true,
    });
    expect(got.find((e) => e["property"] === "default_language")).toMatchObject({
      value: "de",
      language_name: "Deutsch",
    });
    expect(got.find((e) => e["property"] === "web_home_view")).toMatchObject({ value: "recent" });
    expect(await events(bob, qBob)).toEqual([]);
  });

  it("writes nothing and emits nothing for values that are already set", async () => {
    const { alice } = s.seed;
    const q = await register(alice, ["user_settings", "realm_user"]);
    const r = await patch(alice, { twenty_four_hour_time: false, emojiset: "google", full_name: "Alice" });
    expect(r.status).toBe(200);
    expect(await events(alice, q)).toEqual([]);
  });

  it("full_name and timezone change the user object and reach the realm as realm_user updates", async () => {
    const { alice, bob } = s.seed;
    const qBob = await register(bob, ["realm_user", "user_settings"]);
    const qAlice = await register(alice, ["realm_user", "user_settings"]);
    expect((await patch(alice, { full_name: "  Alice Liddell  ", timezone: "Europe/Berlin" })).status).toBe(200);
    const me = await s.call(alice, "GET", "/users/me");
    expect(me.body).toMatchObject({ full_name: "Alice Liddell", timezone: "Europe/Berlin" });
    const seenByBob = await s.call(bob, "GET", `/users/${alice.id}`);
    expect((seenByBob.body["user"] as Record<string, unknown>)["full_name"]).toBe("Alice Liddell");
    expect(await userSettings(alice)).toMatchObject({ timezone: "Europe/Berlin" });
    expect(await events(bob, qBob)).toEqual([
      expect.objectContaining({
        type: "realm_user",
        op: "update",
        person: { user_id: alice.id, full_name: "Alice Liddell" },
      }),
      expect.objectContaining({
        type: "realm_user",
        op: "update",
        person: { user_id: alice.id, timezone: "Europe/Berlin" },
      }),
    ]);
    const mine = await events(alice, qAlice);
    expect(mine.filter((e) => e.type === "user_settings")).toEqual([
      expect.objectContaining({ property: "timezone", value: "Europe/Berlin" }),
    ]);
    // Cleared again with "".
    expect((await patch(alice, { timezone: "" })).status).toBe(200);
    expect((await s.call(alice, "GET", "/users/me")).body["timezone"]).toBe("");
    // Legacy zone names the database still resolves are accepted.
    expect((await patch(alice, { timezone: "Asia/Calcutta" })).status).toBe(200);
  });

  it("receives_typing_notifications=false stops typing events for that user", async () => {
    const { alice, bob } = s.seed;
    expect((await patch(bob, { receives_typing_notifications: false })).status).toBe(200);
    const qBob = await register(bob, ["typing"]);
    const qAlice = await register(alice, ["typing"]);
    expect((await s.call(alice, "POST", "/typing", { op: "start", to: [bob.id] })).status).toBe(200);
    expect(await events(bob, qBob)).toEqual([]);
    expect((await events(alice, qAlice)).map((e) => e.type)).toEqual(["typing"]);
  });

  it("enable_drafts_synchronization=false deletes the stored drafts without drafts events, and drafts are refused until it is back on", async () => {
    const { alice } = s.seed;
    const draft = { type: "", to: [], topic: "", content: "keep me" };
    expect((await s.call(alice, "POST", "/drafts", { drafts: [draft, draft] })).status).toBe(200);
    const q = await register(alice, ["drafts", "user_settings"]);
    expect((await patch(alice, { enable_drafts_synchronization: false })).status).toBe(200);
    expect((await events(alice, q)).map((e) => e.type)).toEqual(["user_settings"]);
    const reg = await s.call(alice, "POST", "/register", { fetch_event_types: ["drafts"] });
    expect(reg.body["drafts"]).toEqual([]);
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "GET", "/drafts"),
      400,
      "BAD_REQUEST",
      "User has disabled synchronizing drafts.",
    );
    expect((await patch(alice, { enable_drafts_synchronization: true })).status).toBe(200);
    expect((await s.call(alice, "GET", "/drafts")).body).toMatchObject({ count: 0, drafts: [] });
  });

  it("presence_enabled and the other stored-only settings read back through the engine", async () => {
    const { alice } = s.seed;
    expect(
      (await patch(alice, { presence_enabled: false, web_channel_default_view: 4, user_list_style: 1 })).status,
    ).toBe(200);
    expect(s.t.store.userSettings(alice.id)).toMatchObject({
      presence_enabled: false,
      web_channel_default_view: 4,
      user_list_style: 1,
    });
  });
});

describe("PATCH /settings: refusals change nothing", () => {
  const invalid: readonly [Record<string, unknown>, string][] = [
    [{ color_scheme: 4 }, "Invalid color_scheme"],
    [{ web_mark_read_on_scroll_policy: 0 }, "Invalid web_mark_read_on_scroll_policy"],
    [{ web_channel_default_view: 5 }, "Invalid web_channel_default_view"],
    [{ demote_inactive_streams: 4 }, "Invalid demote_inactive_streams"],
    [{ user_list_style: 4 }, "Invalid user_list_style"],
    [{ web_stream_unreads_count_display_policy: 4 }, "Invalid web_stream_unreads_count_display_policy"],
    [{ desktop_icon_count_display: 5 }, "Invalid desktop_icon_count_display"],
    [{ automatically_follow_topics_policy: 5 }, "Invalid automatically_follow_topics_policy"],
    [{ email_address_visibility: 6 }, "Invalid email_address_visibility"],
    [{ realm_name_in_email_notifications_policy: 4 }, "Invalid realm_name_in_email_notifications_policy"],
    [{ web_home_view: "stream" }, "Invalid web_home_view"],
    [{ web_animate_image_previews: "sometimes" }, "Invalid web_animate_image_previews"],
    [{ emojiset: "apple" }, "Invalid emojiset"],
    [{ resolved_topic_notice_auto_read_policy: "maybe" }, "Invalid resolved_topic_notice_auto_read_policy"],
    [{ default_language: "xx" }, "Invalid default_language"],
    [{ notification_sound: "klaxon" }, "Invalid notification sound 'klaxon'"],
    [{ email_notifications_batching_period_seconds: 0 }, "Invalid email batching period: 0 seconds"],
    [{ email_notifications_batching_period_seconds: 604801 }, "Invalid email batching period: 604801 seconds"],
    [{ timezone: "Mars/Olympus_Mons" }, "Invalid timezone"],
    [{ timezone: "+01:00" }, "Invalid timezone"],
    [{ twenty_four_hour_time: "yes" }, "twenty_four_hour_time is not a boolean"],
    [{ web_font_size_px: "big" }, "web_font_size_px is not an integer"],
    [{ full_name: "A" }, "Name too short!"],
    [{ full_name: "   " }, "Name too short!"],
    [{ full_name: "x".repeat(101) }, "Name too long!"],
    [{ full_name: "Al*ce" }, "Invalid characters in name!"],
    [{ full_name: "Alice\u0007" }, "Invalid characters in name!"],
    [{ full_name: "Alice|12" }, "Invalid format!"],
    // Alice has no password: no old one can match (test/http/accounts.test.ts has the rest).
    [{ new_password: "granite-lantern-9", old_password: "old" }, "Wrong password!"],
    [{ email: "not an address" }, "Invalid address."],
    [{ email: "bob@test.dev" }, "Already has an account."],
    // The whole request is refused: the valid setting beside an invalid one is not stored.
    [{ twenty_four_hour_time: true, color_scheme: 9 }, "Invalid color_scheme"],
  ];
  for (const [params, msg] of invalid) {
    it(`${JSON.stringify(params).slice(0, 80)} -> ${msg}`, async () => {
      await expectRejectedUnchanged(s, () => patch(s.seed.alice, params), 400, "BAD_REQUEST", msg);
    });
  }

  it("accepts the current email as a no-op, and refuses bots", async () => {
    expect((await patch(s.seed.alice, { email: "alice@test.dev" })).status).toBe(200);
    const bot = makeBot();
    await expectRejectedUnchanged(
      s,
      () => patch(bot, { twenty_four_hour_time: true }),
      400,
      "BAD_REQUEST",
      "This endpoint does not accept bot requests.",
    );
  });

  it("does not accept the retired dense_mode", async () => {
    const r = await patch(s.seed.alice, { dense_mode: true });
    expect(r.status).toBe(200);
    expect(r.body["ignored_parameters_unsupported"]).toEqual(["dense_mode"]);
  });
});

describe("PATCH /settings with target_users (administrators' bulk edit)", () => {
  it("edits the named users and the groups' active members, leaves out bots, and tells each edited user", async () => {
    const { owner, alice, bob, guest } = s.seed;
    const bot = makeBot();
    const group = s.t.store.createGroup(owner.id, { name: "readers", members: [bob.id, bot.id] });
    const qAlice = await register(alice, ["user_settings"]);
    const qGuest = await register(guest, ["user_settings"]);
    const r = await patch(owner, {
      target_users: { user_ids: [alice.id], group_ids: [group.id], skip_if_already_edited: false },
      color_scheme: 2,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(s.t.store.userSettings(alice.id).color_scheme).toBe(2);
    expect(s.t.store.userSettings(bob.id).color_scheme).toBe(2);
    expect(s.t.store.userSettings(bot.id).color_scheme).toBe(1);
    expect(s.t.store.userSettings(guest.id).color_scheme).toBe(1);
    // The administrator's own settings are not part of it.
    expect(s.t.store.userSettings(owner.id).color_scheme).toBe(1);
    expect(await events(alice, qAlice)).toEqual([
      expect.objectContaining({ type: "user_settings", op: "update", property: "color_scheme", value: 2 }),
    ]);
    expect(await events(guest, qGuest)).toEqual([]);
  });

  it("skip_if_already_edited leaves alone exactly the users who changed that setting themselves", async () => {
    const { owner, alice, bob } = s.seed;
    expect((await patch(alice, { color_scheme: 3, web_font_size_px: 16 })).status).toBe(200);
    const target = { user_ids: [alice.id, bob.id], skip_if_already_edited: true };
    expect((await patch(owner, { target_users: target, color_scheme: 2, enter_sends: true })).status).toBe(200);
    expect(s.t.store.userSettings(alice.id)).toMatchObject({ color_scheme: 3, enter_sends: true });
    expect(s.t.store.userSettings(bob.id)).toMatchObject({ color_scheme: 2, enter_sends: true });
    // Alice's request for the font size she already had changed nothing: not her edit (Zulip logs changes only).
    expect((await patch(owner, { target_users: target, web_font_size_px: 14 })).status).toBe(200);
    expect(s.t.store.userSettings(alice.id).web_font_size_px).toBe(14);
    // Without skipping, everyone is edited.
    expect(
      (await patch(owner, { target_users: { ...target, skip_if_already_edited: false }, color_scheme: 1 })).status,
    ).toBe(200);
    expect(s.t.store.userSettings(alice.id).color_scheme).toBe(1);
  });

  it("refuses members, identity and security-sensitive settings, and unknown targets, changing nothing", async () => {
    const { owner, alice, bob } = s.seed;
    const target = { user_ids: [bob.id], skip_if_already_edited: false };
    await expectRejectedUnchanged(
      s,
      () => patch(alice, { target_users: target, color_scheme: 2 }),
      400,
      "UNAUTHORIZED_PRINCIPAL",
      "Must be an organization administrator",
    );
    await expectRejectedUnchanged(
      s,
      () => patch(s.seed.guest, { target_users: target, color_scheme: 2 }),
      400,
      "UNAUTHORIZED_PRINCIPAL",
      "Must be an organization administrator",
    );
    for (const params of [
      { timezone: "UTC" },
      { email: "x@test.dev" },
      { new_password: "pw" },
      { presence_enabled: false },
      { send_read_receipts: false },
      { email_address_visibility: 2 },
      { allow_private_data_export: true },
    ]) {
      await expectRejectedUnchanged(
        s,
        () => patch(owner, { target_users: target, ...params }),
        400,
        "BAD_REQUEST",
        "Cannot change this setting for other users.",
      );
    }
    await expectRejectedUnchanged(
      s,
      () => patch(owner, { target_users: { skip_if_already_edited: false }, color_scheme: 2 }),
      400,
      "BAD_REQUEST",
      "Either user_ids or group_ids must be provided.",
    );
    await expectRejectedUnchanged(
      s,
      () => patch(owner, { target_users: { user_ids: [99999], skip_if_already_edited: false }, color_scheme: 2 }),
      400,
      "BAD_REQUEST",
      "Invalid user ID: 99999",
    );
    await expectRejectedUnchanged(
      s,
      () => patch(owner, { target_users: { group_ids: [99999], skip_if_already_edited: false }, color_scheme: 2 }),
      400,
      "BAD_REQUEST",
      "Invalid user group ID: 99999",
    );
    await expectRejectedUnchanged(
      s,
      () => patch(owner, { target_users: { user_ids: [bob.id] }, color_scheme: 2 }),
      400,
      "BAD_REQUEST",
      'target_users["skip_if_already_edited"] is not a boolean',
    );
    await expectRejectedUnchanged(
      s,
      () => patch(owner, { target_users: target, color_scheme: 7 }),
      400,
      "BAD_REQUEST",
      "Invalid color_scheme",
    );
  });
});

describe("PATCH /realm/user_settings_defaults", () => {
  it("sets what later users start with, never changes existing users, and tells the realm", async () => {
    const { owner, alice } = s.seed;
    const qAlice = await register(alice, ["realm_user_settings_defaults"]);
    const r = await patchDefaults(owner, {
      color_scheme: 2,
      enter_sends: true,
      web_home_view: "all_messages",
      presence_enabled: false,
      email_address_visibility: 2,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const reg = await s.call(alice, "POST", "/register", { fetch_event_types: ["realm_user_settings_defaults"] });
    expect(reg.body["realm_user_settings_defaults"]).toMatchObject({
      color_scheme: 2,
      enter_sends: true,
      web_home_view: "all_messages",
      presence_enabled: false,
    });
    expect(s.t.store.userSettings(alice.id)).toMatchObject({ color_scheme: 1, enter_sends: false });
    const newcomer = s.t.store.createUser({ realmId: s.seed.realm.id, email: "new@test.dev", fullName: "Newcomer" });
    expect(s.t.store.userSettings(newcomer.id)).toMatchObject({
      color_scheme: 2,
      enter_sends: true,
      web_home_view: "all_messages",
      presence_enabled: false,
      email_address_visibility: 2,
    });
    const got = await events(alice, qAlice);
    expect(got.every((e) => e.type === "realm_user_settings_defaults" && e["op"] === "update")).toBe(true);
    expect(Object.fromEntries(got.map((e) => [e["property"], e["value"]]))).toEqual({
      color_scheme: 2,
      enter_sends: true,
      web_home_view: "all_messages",
      presence_enabled: false,
      email_address_visibility: 2,
    });
    expect(got).toHaveLength(5);
    // Unchanged values write nothing.
    const again = await register(alice, ["realm_user_settings_defaults"]);
    expect((await patchDefaults(owner, { color_scheme: 2 })).status).toBe(200);
    expect(await events(alice, again)).toEqual([]);
  });

  it("is for administrators only, checks values like PATCH /settings, and ignores user-only settings", async () => {
    const { owner, alice, guest } = s.seed;
    for (const user of [alice, guest, makeBot()]) {
      await expectRejectedUnchanged(
        s,
        () => patchDefaults(user, { color_scheme: 2 }),
        400,
        "UNAUTHORIZED_PRINCIPAL",
        "Must be an organization administrator",
      );
    }
    await expectRejectedUnchanged(
      s,
      () => patchDefaults(owner, { color_scheme: 0 }),
      400,
      "BAD_REQUEST",
      "Invalid color_scheme",
    );
    await expectRejectedUnchanged(
      s,
      () => patchDefaults(owner, { notification_sound: "klaxon" }),
      400,
      "BAD_REQUEST",
      "Invalid notification sound 'klaxon'",
    );
    await expectRejectedUnchanged(
      s,
      () => patchDefaults(owner, { email_notifications_batching_period_seconds: -5 }),
      400,
      "BAD_REQUEST",
      "Invalid email batching period: -5 seconds",
    );
    const r = await patchDefaults(owner, {
      default_language: "de",
      enable_marketing_emails: false,
      allow_private_data_export: true,
    });
    expect(r.status).toBe(200);
    expect(r.body["ignored_parameters_unsupported"]).toEqual([
      "allow_private_data_export",
      "default_language",
      "enable_marketing_emails",
    ]);
  });
});
