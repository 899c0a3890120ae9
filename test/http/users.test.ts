import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/types.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";

let s: TestServer;
let bot: User;
let gone: User;
beforeAll(async () => {
  s = await startServer();
  const realmId = s.seed.realm.id;
  bot = s.t.store.createUser({
    realmId,
    email: "helper-bot@test.dev",
    fullName: "Helper Bot",
    bot: { type: 1, ownerId: s.seed.alice.id },
  });
  gone = s.t.store.createUser({ realmId, email: "gone@test.dev", fullName: "Gone Person" });
  s.t.store.setUserActive(gone.id, false);
});
afterAll(() => s.close());

const rejects = (
  call: () => Promise<{ status: number; body: Record<string, unknown> }>,
  status: number,
  code: string,
  msg: string | RegExp,
) => expectRejectedUnchanged(s, call, status, code, msg);

type Wire = Record<string, unknown>;
const gravatar = (email: string) =>
  `https://secure.gravatar.com/avatar/${createHash("md5").update(email).digest("hex")}?d=identicon&version=1`;

describe("GET /users", () => {
  it("lists every user with the User object fields", async () => {
    const { owner, alice, guest } = s.seed;
    const r = await s.call(alice, "GET", "/users");
    expect(r.status).toBe(200);
    const members = r.body["members"] as Wire[];
    expect(members.map((m) => m["user_id"])).toEqual([owner.id, alice.id, s.seed.bob.id, guest.id, bot.id, gone.id]);
    const o = members[0]!;
    expect(o).toEqual({
      user_id: owner.id,
      email: "owner@test.dev",
      delivery_email: "owner@test.dev",
      full_name: "Olive Owner",
      date_joined: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/),
      is_active: true,
      is_owner: true,
      is_admin: true,
      is_guest: false,
      is_bot: false,
      bot_type: null,
      role: 100,
      timezone: "",
      avatar_url: null,
      avatar_version: 1,
      is_imported_stub: false,
    });
    const g = members.find((m) => m["user_id"] === guest.id)!;
    expect(g).toMatchObject({ is_guest: true, is_admin: false, role: 600 });
    const b = members.find((m) => m["user_id"] === bot.id)!;
    expect(b).toMatchObject({ is_bot: true, bot_type: 1, bot_owner_id: alice.id });
    const d = members.find((m) => m["user_id"] === gone.id)!;
    expect(d["is_active"]).toBe(false);
  });

  it("gives avatar URLs without client_gravatar and profile_data on request", async () => {
    const { owner, alice } = s.seed;
    const r = await s.call(alice, "GET", "/users", {
      client_gravatar: false,
      include_custom_profile_fields: true,
      user_ids: [owner.id, bot.id],
    });
    const members = r.body["members"] as Wire[];
    expect(members.map((m) => m["user_id"])).toEqual([owner.id, bot.id]);
    expect(members[0]!["avatar_url"]).toBe(gravatar("owner@test.dev"));
    expect(members[0]!["profile_data"]).toEqual({});
    expect(members[1]!["profile_data"]).toBeUndefined();
  });

  it("rejects bad input", async () => {
    const { alice } = s.seed;
    await rejects(
      () => s.call(alice, "GET", "/users", { user_ids: "[1," }),
      400,
      "BAD_REQUEST",
      "user_ids is not valid JSON",
    );
    await rejects(
      () => s.call(alice, "GET", "/users", { user_ids: ["a"] }),
      400,
      "BAD_REQUEST",
      "user_ids[0] is not an integer",
    );
    await rejects(
      () => s.call(alice, "GET", "/users", { user_ids: [99999] }),
      400,
      "BAD_REQUEST",
      "Invalid user ID: 99999",
    );
    await rejects(
      () => s.call(alice, "GET", "/users", { client_gravatar: "yes" }),
      400,
      "BAD_REQUEST",
      "client_gravatar is not a boolean",
    );
    const anon = await s.call(null, "GET", "/users");
    expect(anon.status).toBe(401);
    expect(anon.body["code"]).toBe("UNAUTHORIZED");
  });
});

describe("GET /users/me", () => {
  it("returns the caller's fields at the top level with max_message_id", async () => {
    const { alice, bob } = s.seed;
    const before = await s.call(bob, "GET", "/users/me");
    expect(before.body).toMatchObject({
      result: "success",
      user_id: bob.id,
      email: "bob@test.dev",
      full_name: "Bob",
      role: 400,
      is_active: true,
      profile_data: {},
      avatar_url: gravatar("bob@test.dev"),
    });
    expect(before.body["user"]).toBeUndefined();
    const sent = await s.call(alice, "POST", "/messages", { type: "direct", to: [bob.id], content: "hi" });
    const after = await s.call(bob, "GET", "/users/me");
    expect(after.body["max_message_id"]).toBe(sent.body["id"]);
    const ignored = await s.call(bob, "GET", "/users/me", { zzz: 1 });
    expect(ignored.body["ignored_parameters_unsupported"]).toEqual(["zzz"]);
  });

  it("reports -1 without messages", async () => {
    const r = await s.call(s.seed.guest, "GET", "/users/me");
    expect(r.body["max_message_id"]).toBe(-1);
  });
});

describe("GET /users/{user_id} and /users/{email}", () => {
  it("finds users by ID and by email, deactivated and bots included", async () => {
    const { alice, bob } = s.seed;
    const byId = await s.call(alice, "GET", `/users/${bob.id}`);
    expect(byId.status).toBe(200);
    expect((byId.body["user"] as Wire)["email"]).toBe("bob@test.dev");
    const byEmail = await s.call(alice, "GET", `/users/${encodeURIComponent("BOB@test.dev")}`, {
      client_gravatar: false,
    });
    expect((byEmail.body["user"] as Wire)["user_id"]).toBe(bob.id);
    expect((byEmail.body["user"] as Wire)["avatar_url"]).toBe(gravatar("bob@test.dev"));
    const inactive = await s.call(alice, "GET", `/users/${gone.id}`, { include_custom_profile_fields: true });
    expect(inactive.body["user"]).toMatchObject({ is_active: false, profile_data: {} });
    const botUser = await s.call(alice, "GET", `/users/${bot.email}`);
    expect(botUser.body["user"]).toMatchObject({ is_bot: true, bot_owner_id: alice.id });
  });

  it("answers No such user for unknown users", async () => {
    const { alice } = s.seed;
    await rejects(() => s.call(alice, "GET", "/users/99999"), 400, "BAD_REQUEST", "No such user");
    await rejects(() => s.call(alice, "GET", "/users/nobody@test.dev"), 400, "BAD_REQUEST", "No such user");
    await rejects(() => s.call(alice, "GET", "/users/99999999999999999999"), 400, "BAD_REQUEST", "No such user");
    await rejects(
      () => s.call(alice, "GET", `/users/${s.seed.bob.id}`, { client_gravatar: "2" }),
      400,
      "BAD_REQUEST",
      "client_gravatar is not a boolean",
    );
  });

  it("does not see users of other realms", async () => {
    const other = s.t.store.createRealm({
      subdomain: "other",
      name: "Other",
      owner: { email: "x@other.dev", fullName: "Xavier" },
    });
    await rejects(() => s.call(s.seed.alice, "GET", `/users/${other.owner.id}`), 400, "BAD_REQUEST", "No such user");
    await rejects(() => s.call(s.seed.alice, "GET", "/users/x@other.dev"), 400, "BAD_REQUEST", "No such user");
  });
});

describe("PATCH /users/{user_id} and /users/{email}", () => {
  it("lets an administrator change name, role and profile data", async () => {
    const { owner, bob } = s.seed;
    const title = s.t.store.createProfileField(owner.id, 1, { name: "Title" }).id;
    const mentor = s.t.store.createProfileField(owner.id, 6, { name: "Mentor" }).id;
    const r = await s.call(owner, "PATCH", `/users/${bob.id}`, {
      full_name: "Robert",
      role: 300,
      profile_data: [
        { id: title, value: "Engineer" },
        { id: mentor, value: [bob.id] },
      ],
    });
    expect(r.body).toEqual({ result: "success", msg: "" });
    const stored = s.t.store.getUser(bob.id);
    expect(stored.fullName).toBe("Robert");
    expect(stored.role).toBe(300);
    const wire = await s.call(owner, "GET", `/users/${bob.id}`, { include_custom_profile_fields: true });
    expect((wire.body["user"] as Wire)["profile_data"]).toEqual({
      [title]: { value: "Engineer", rendered_value: "<p>Engineer</p>" },
      [mentor]: { value: `[${bob.id}]` },
    });
    const byEmail = await s.call(owner, "PATCH", "/users/bob@test.dev", {
      role: 400,
      profile_data: [{ id: title, value: null }],
    });
    expect(byEmail.body["result"]).toBe("success");
    expect(s.t.store.getUser(bob.id).role).toBe(400);
    expect(s.t.store.getUser(bob.id).profileData).toEqual({ [mentor]: [bob.id] });
  });

  it("enforces admin-only and the owner-role rules", async () => {
    const { owner, alice, bob } = s.seed;
    await rejects(
      () => s.call(alice, "PATCH", `/users/${bob.id}`, { full_name: "Nope" }),
      400,
      "BAD_REQUEST",
      "Insufficient permission",
    );
    await s.call(owner, "PATCH", `/users/${alice.id}`, { role: 200 });
    await rejects(
      () => s.call(alice, "PATCH", `/users/${bob.id}`, { role: 100 }),
      400,
      "UNAUTHORIZED_PRINCIPAL",
      "Must be an organization owner",
    );
    await rejects(
      () => s.call(alice, "PATCH", `/users/${owner.id}`, { role: 400 }),
      400,
      "UNAUTHORIZED_PRINCIPAL",
      "Must be an organization owner",
    );
    await rejects(
      () => s.call(owner, "PATCH", `/users/${owner.id}`, { role: 400 }),
      400,
      "BAD_REQUEST",
      "The owner permission cannot be removed from the only organization owner.",
    );
    await s.call(owner, "PATCH", `/users/${alice.id}`, { role: 400 });
  });

  it("ignores a blank full_name, as Zulip's update_user_backend does", async () => {
    const { owner, bob } = s.seed;
    const name = s.t.store.getUser(bob.id).fullName;
    for (const [blank, role] of [
      ["", 300],
      ["   ", 400],
    ] as const) {
      const r = await s.call(owner, "PATCH", `/users/${bob.id}`, { full_name: blank, role });
      expect(r.body).toEqual({ result: "success", msg: "" });
      expect(s.t.store.getUser(bob.id)).toMatchObject({ fullName: name, role });
    }
  });

  it("rejects bad input and unknown users, changing nothing", async () => {
    const { owner, bob, alice } = s.seed;
    const patch =
      (target: string, params: Record<string, unknown>, user = owner) =>
      () =>
        s.call(user, "PATCH", `/users/${target}`, params);
    await rejects(patch("99999", { full_name: "X" }), 400, "BAD_REQUEST", "No such user");
    await rejects(patch("nobody@test.dev", { full_name: "X" }), 400, "BAD_REQUEST", "No such user");
    await rejects(patch(String(bob.id), { role: 250 }), 400, "BAD_REQUEST", "Invalid role");
    await rejects(patch(String(bob.id), { role: "admin" }), 400, "BAD_REQUEST", "role is not an integer");
    await rejects(patch(String(bob.id), { full_name: "n".repeat(101) }), 400, "BAD_REQUEST", "Name too long!");
    await rejects(patch(String(bob.id), { full_name: "bad*name" }), 400, "BAD_REQUEST", "Invalid characters in name!");
    await rejects(patch(String(bob.id), { profile_data: "[{" }), 400, "BAD_REQUEST", "profile_data is not valid JSON");
    await rejects(
      patch(String(bob.id), { profile_data: [{ value: "x" }] }),
      400,
      "BAD_REQUEST",
      'profile_data[0]["id"] is not an integer',
    );
    await rejects(patch(String(bob.id), { profile_data: {} }), 400, "BAD_REQUEST", "profile_data is not a list");
    await rejects(
      patch(String(bob.id), { new_email: "new@test.dev", full_name: "Changed" }),
      400,
      "BAD_REQUEST",
      "User not authorized to change user emails",
    );
    await rejects(
      patch(String(bob.id), { new_email: "new@test.dev" }, alice),
      400,
      "BAD_REQUEST",
      "Insufficient permission",
    );
    const r = await s.call(
      null,
      "PATCH",
      `/users/${bob.id}`,
      { full_name: "X" },
      { headers: { Authorization: "Bearer abc" } },
    );
    expect(r.status).toBe(400);
    expect(r.body["msg"]).toBe("This endpoint requires HTTP basic authentication.");
  });
});

describe("user lists are served from a cache that follows changes", () => {
  it("GET /users and register's realm_users show a rename, a new user and a deactivation at once", async () => {
    const s = await startServer();
    try {
      const { owner, bob } = s.seed;
      const names = async () =>
        (
          (await s.call(owner, "GET", "/users")).body["members"] as {
            user_id: number;
            full_name: string;
            is_active: boolean;
          }[]
        ).map((u) => [u.user_id, u.full_name, u.is_active]);
      const before = await names();
      expect(await names()).toEqual(before);
      expect((await s.call(owner, "PATCH", `/users/${bob.id}`, { full_name: "Robert" })).status).toBe(200);
      expect(await names()).toContainEqual([bob.id, "Robert", true]);
      const carol = s.t.store.createUser({ realmId: s.seed.realm.id, email: "carol@test.dev", fullName: "Carol" });
      expect(await names()).toContainEqual([carol.id, "Carol", true]);
      s.t.store.setUserActive(carol.id, false);
      expect(await names()).toContainEqual([carol.id, "Carol", false]);
      const reg = await s.call(owner, "POST", "/register", { fetch_event_types: ["realm_user"] });
      expect((reg.body["realm_non_active_users"] as { user_id: number }[]).map((u) => u.user_id)).toEqual([carol.id]);
      expect(
        (reg.body["realm_users"] as { user_id: number; full_name: string }[]).find((u) => u.user_id === bob.id)
          ?.full_name,
      ).toBe("Robert");
    } finally {
      s.close();
    }
  });
});
