/**
 * Administering accounts over HTTP: POST /users, DELETE /users/{id}, DELETE /users/me
 * and POST /users/{id}/reactivate, each with its permission matrix (owner,
 * administrator, moderator, member, guest, bot, another realm's owner), the events
 * other users' queues get, and what deactivation takes away at once: the API key, the
 * event queues (a waiting poll is answered), the user's bots.
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
/** Realm "bee": its owner, who may create users there, and one member. */
let queen: User;
let drone: User;

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
    bot: { type: 1, ownerId: s.seed.alice.id },
  });
  const bee = store.createRealm({
    subdomain: "bee",
    name: "Bee",
    owner: { email: "queen@bee.test", fullName: "Queen" },
  });
  queen = store.setCanCreateUsers(bee.owner.id, true);
  drone = store.createUser({ realmId: bee.realm.id, email: "drone@bee.test", fullName: "Drone" });
  // A default channel new accounts join.
  store.subscribe(s.seed.owner.id, {
    channels: [{ name: "welcome" }],
    principals: [],
    newChannel: { isDefault: true },
  });
});
afterAll(() => s.close());

type Reply = { status: number; body: Record<string, unknown> };
/** A request as a user of realm "bee", on its own host. */
const asBee = (user: User, method: string, path: string, params: Record<string, unknown> = {}): Promise<Reply> => {
  const body = method === "GET" ? "" : encodeParams(params).toString();
  const query = method === "GET" && Object.keys(params).length > 0 ? `?${encodeParams(params)}` : "";
  return rawRequest(
    s.base,
    method,
    path + query,
    {
      Host: "bee.localhost",
      Authorization: basicAuth(s.t.store.getUser(user.id)),
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body,
  );
};
const refused = (call: () => Promise<Reply>, status: number, code: string, msg: string) =>
  expectRejectedUnchanged(s, call, status, code, msg);
const NOT_ADMIN = [400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator"] as const;
const INSUFFICIENT = [400, "BAD_REQUEST", "Insufficient permission"] as const;
const person = (email: string, fullName = "Some Person") =>
  s.t.store.createUser({ realmId: s.seed.realm.id, email, fullName });

/** Registers a queue for `user` and returns a poller for the events after it. */
async function queueFor(user: User) {
  const r = await s.call(user, "POST", "/register", { event_types: ["realm_user", "realm_bot", "invites_changed"] });
  expect(r.status).toBe(200);
  const queueId = r.body["queue_id"] as string;
  let last = r.body["last_event_id"] as number;
  return {
    queueId,
    async events(): Promise<Record<string, unknown>[]> {
      const p = await s.call(user, "GET", "/events", { queue_id: queueId, last_event_id: last, dont_block: true });
      expect(p.status).toBe(200);
      const events = (p.body["events"] as Record<string, unknown>[]).filter((e) => e["type"] !== "heartbeat");
      if (events.length > 0) last = events[events.length - 1]!["id"] as number;
      return events;
    },
  };
}

describe("POST /users", () => {
  const form = (email: string) => ({ email, password: "correct horse battery", full_name: "New Person" });

  it("permission matrix: administrators holding can_create_users only", async () => {
    const { owner, alice, guest } = s.seed;
    for (const caller of [moderator, alice, guest])
      await refused(() => s.call(caller, "POST", "/users", form("x@test.dev")), ...NOT_ADMIN);
    for (const caller of [owner, admin, bot])
      await refused(
        () => s.call(caller, "POST", "/users", form("x@test.dev")),
        400,
        "BAD_REQUEST",
        "User not authorized to create users",
      );
    // Another realm's owner who may create users makes them in that realm only.
    const r = await asBee(queen, "POST", "/users", form("alice@test.dev"));
    expect(r).toMatchObject({ status: 200, body: { result: "success", user_id: expect.any(Number) } });
    expect(s.t.store.getUser(r.body["user_id"] as number).realmId).toBe(queen.realmId);
  });

  it("creates the account: the user_id, a password login, the default channels, a realm_user add for everyone", async () => {
    s.t.store.setCanCreateUsers(admin.id, true);
    const watcher = await queueFor(s.seed.bob);
    const r = await s.call(admin, "POST", "/users", form("fresh@test.dev"));
    expect(r.status).toBe(200);
    const id = r.body["user_id"] as number;
    expect(s.t.store.getUser(id)).toMatchObject({ email: "fresh@test.dev", fullName: "New Person", role: 400 });
    const login = await s.call(null, "POST", "/fetch_api_key", {
      username: "fresh@test.dev",
      password: "correct horse battery",
    });
    expect(login.body).toMatchObject({ result: "success", user_id: id });
    const subs = await s.call(s.t.store.getUser(id), "GET", "/users/me/subscriptions");
    expect((subs.body["subscriptions"] as { name: string }[]).map((c) => c.name)).toEqual(["welcome"]);
    // The Welcome Bot, created when first needed, and the new user.
    const adds = (await watcher.events()).filter((e) => e["type"] === "realm_user" && e["op"] === "add");
    expect(adds.map((e) => (e["person"] as Record<string, unknown>)["email"])).toEqual([
      "welcome-bot@zulip.com",
      "fresh@test.dev",
    ]);
  });

  it("refuses bad input with Zulip's errors, creating nothing", async () => {
    s.t.store.setCanCreateUsers(admin.id, true);
    await refused(
      () => s.call(admin, "POST", "/users", form("ALICE@test.dev")),
      400,
      "BAD_REQUEST",
      "Email 'ALICE@test.dev' already in use",
    );
    await refused(
      () => s.call(admin, "POST", "/users", form("not an email")),
      400,
      "BAD_REQUEST",
      "Bad name or username",
    );
    await refused(
      () => s.call(admin, "POST", "/users", { ...form("weak@test.dev"), password: "password" }),
      400,
      "BAD_REQUEST",
      "The password is too weak.",
    );
    await refused(
      () => s.call(admin, "POST", "/users", { ...form("n@test.dev"), full_name: "a|12" }),
      400,
      "BAD_REQUEST",
      "Invalid format!",
    );
    await refused(
      () => s.call(admin, "POST", "/users", { email: "m@test.dev", full_name: "Missing" }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'password' argument",
    );
  });
});

describe("DELETE /users/{user_id}", () => {
  it("permission matrix: administrators (owners for owners); never the last owner", async () => {
    const { owner, alice, guest } = s.seed;
    const target = person("target@test.dev");
    for (const caller of [moderator, alice, guest])
      await refused(() => s.call(caller, "DELETE", `/users/${target.id}`), ...INSUFFICIENT);
    await refused(() => asBee(queen, "DELETE", `/users/${target.id}`), 400, "BAD_REQUEST", "No such user");
    await refused(
      () => s.call(admin, "DELETE", `/users/${owner.id}`),
      400,
      "UNAUTHORIZED_PRINCIPAL",
      "Must be an organization owner",
    );
    await refused(
      () => s.call(owner, "DELETE", `/users/${owner.id}`),
      400,
      "BAD_REQUEST",
      "Cannot deactivate the only organization owner",
    );
    await refused(() => s.call(admin, "DELETE", `/users/${bot.id}`), 400, "BAD_REQUEST", "No such user");
    await refused(() => s.call(admin, "DELETE", `/users/${drone.id}`), 400, "BAD_REQUEST", "No such user");
    // An administrator bot may, like any administrator.
    expect((await s.call(bot, "DELETE", `/users/${target.id}`)).status).toBe(200);
    await refused(() => s.call(admin, "DELETE", `/users/${target.id}`), 400, "BAD_REQUEST", "User is deactivated");
    const other = person("other@test.dev");
    expect((await s.call(admin, "DELETE", `/users/${other.id}`)).status).toBe(200);
  });

  it("takes effect at once: the key is refused, a waiting poll is answered, the user's bots go too", async () => {
    const leaving = person("leaving@test.dev", "Lea Ving");
    const helper = s.t.store.createUser({
      realmId: s.seed.realm.id,
      email: "leaving-bot@test.dev",
      fullName: "Lea's Bot",
      bot: { type: 1, ownerId: leaving.id },
    });
    const watcher = await queueFor(s.seed.alice);
    const reg = await s.call(leaving, "POST", "/register", {});
    const queueId = reg.body["queue_id"] as string;
    const waiting = s.call(leaving, "GET", "/events", { queue_id: queueId, last_event_id: reg.body["last_event_id"] });
    const r = await s.call(admin, "DELETE", `/users/${leaving.id}`, { deactivation_notification_comment: "Bye" });
    expect(r.status).toBe(200);
    expect((await waiting).body).toMatchObject({ result: "error", code: "BAD_EVENT_QUEUE_ID" });
    for (const gone of [leaving, helper]) {
      const me = await s.call(gone, "GET", "/users/me");
      expect(me).toMatchObject({ status: 401, body: { code: "UNAUTHORIZED", msg: "Account is deactivated" } });
    }
    expect(s.server.events.stats.queues).toBeGreaterThan(0);
    expect(() => s.server.events.queueFor(s.t.store.getUser(leaving.id), queueId)).toThrow("Bad event queue ID");
    const updates = (await watcher.events()).filter((e) => e["type"] === "realm_user");
    expect(updates.map((e) => e["person"])).toEqual([
      { user_id: helper.id, is_active: false },
      { user_id: leaving.id, is_active: false },
    ]);
    expect(s.t.store.outboxMail().at(-1)).toMatchObject({ to: ["leaving@test.dev"] });
  });

  it("refuses a comment over 2000 characters", async () => {
    const target = person("long@test.dev");
    await refused(
      () => s.call(admin, "DELETE", `/users/${target.id}`, { deactivation_notification_comment: "x".repeat(2001) }),
      400,
      "BAD_REQUEST",
      "deactivation_notification_comment is too long (limit: 2000 characters)",
    );
  });
});

describe("DELETE /users/me", () => {
  it("lets anyone go but the last owner (CANNOT_DEACTIVATE_LAST_USER with Zulip's fields)", async () => {
    const r = await refused(
      () => s.call(s.seed.owner, "DELETE", "/users/me"),
      400,
      "CANNOT_DEACTIVATE_LAST_USER",
      "Cannot deactivate the only organization owner.",
    );
    expect(r).toMatchObject({ is_last_owner: true, entity: "organization owner" });
    const quitter = person("quitter@test.dev");
    expect((await s.call(quitter, "DELETE", "/users/me")).status).toBe(200);
    expect((await s.call(quitter, "GET", "/users/me")).status).toBe(401);
    // A bot may deactivate itself.
    const selfish = s.t.store.createUser({
      realmId: s.seed.realm.id,
      email: "selfish-bot@test.dev",
      fullName: "Selfish",
      bot: { type: 1, ownerId: s.seed.bob.id },
    });
    expect((await s.call(selfish, "DELETE", "/users/me")).status).toBe(200);
  });
});

describe("POST /users/{user_id}/reactivate", () => {
  it("permission matrix: administrators, and a bot's owner for the bot", async () => {
    const { owner, alice, guest } = s.seed;
    const target = person("back@test.dev");
    s.t.store.setUserActive(target.id, false);
    for (const caller of [moderator, alice, guest])
      await refused(() => s.call(caller, "POST", `/users/${target.id}/reactivate`), ...INSUFFICIENT);
    await refused(() => asBee(queen, "POST", `/users/${target.id}/reactivate`), 400, "BAD_REQUEST", "No such user");
    expect((await s.call(owner, "POST", `/users/${target.id}/reactivate`)).status).toBe(200);
    expect((await s.call(target, "GET", "/users/me")).status).toBe(200);
    // alice owns `bot`: she may bring it back.
    s.t.store.setUserActive(bot.id, false);
    expect((await s.call(alice, "POST", `/users/${bot.id}/reactivate`)).status).toBe(200);
    expect(s.t.store.getUser(bot.id).isActive).toBe(true);
    await refused(() => s.call(admin, "POST", "/users/99999/reactivate"), 400, "BAD_REQUEST", "No such user");
  });
});
