/**
 * Logging in over real HTTP: POST /fetch_api_key (password), its per-account and
 * per-address limits, PATCH /settings password changes, POST
 * /users/me/api_key/regenerate, and an owner's PATCH /users/{id} new_email with its
 * realm_user events. JWT login is in jwt.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { defaultHashPoolLimits, hashPassword, passwordHashPool } from "../../src/engine/index.js";
import type { User } from "../../src/engine/types.js";
import type { ServerOptions } from "../../src/http/server.js";
import {
  expectRejectedUnchanged,
  rawRequest,
  startServer,
  TEST_SCRYPT_COST,
  type TestServer,
} from "../support/http.js";

let s: TestServer;
afterEach(() => s?.close());

const ALICE_PASSWORD = "violet-harbour-42";

async function boot(options: ServerOptions = {}): Promise<TestServer> {
  s = await startServer(options);
  s.t.store.setPassword(s.seed.alice.id, await hashPassword(ALICE_PASSWORD, TEST_SCRYPT_COST));
  return s;
}

const login = (username: string, password: string, headers: Record<string, string> = {}) =>
  s.call(null, "POST", "/fetch_api_key", { username, password }, { headers });

describe("POST /fetch_api_key", () => {
  it("answers the API key, real email and user ID for the right password, whatever the email's case", async () => {
    await boot();
    const { alice } = s.seed;
    const r = await login("ALICE@test.dev", ALICE_PASSWORD);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      result: "success",
      msg: "",
      api_key: alice.apiKey,
      email: "alice@test.dev",
      user_id: alice.id,
    });
    // The key works for Basic auth at once.
    const me = await s.call(alice, "GET", "/users/me");
    expect(me.body["user_id"]).toBe(alice.id);
  });

  it("refuses a wrong password, an unknown account, an account without password and an empty password alike, changing nothing", async () => {
    await boot();
    const failed = ["AUTHENTICATION_FAILED", "Your username or password is incorrect"] as const;
    await expectRejectedUnchanged(s, () => login("alice@test.dev", "violet-harbour-43"), 401, ...failed);
    await expectRejectedUnchanged(s, () => login("nobody@test.dev", ALICE_PASSWORD), 401, ...failed);
    await expectRejectedUnchanged(s, () => login("bob@test.dev", ALICE_PASSWORD), 401, ...failed);
    await expectRejectedUnchanged(s, () => login("alice@test.dev", ""), 401, ...failed);
    await expectRejectedUnchanged(
      s,
      () => s.call(null, "POST", "/fetch_api_key", { username: "alice@test.dev" }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'password' argument",
    );
  });

  it("reports a deactivated account or organization only to someone with the right password", async () => {
    await boot();
    const { alice, realm } = s.seed;
    s.t.store.setUserActive(alice.id, false);
    await expectRejectedUnchanged(
      s,
      () => login("alice@test.dev", ALICE_PASSWORD),
      401,
      "USER_DEACTIVATED",
      "Account is deactivated",
    );
    await expectRejectedUnchanged(
      s,
      () => login("alice@test.dev", "wrong-password-1"),
      401,
      "AUTHENTICATION_FAILED",
      "Your username or password is incorrect",
    );
    s.t.store.setUserActive(alice.id, true);
    s.t.store.setRealmDeactivated(realm.id, true);
    await expectRejectedUnchanged(
      s,
      () => login("alice@test.dev", ALICE_PASSWORD),
      401,
      "REALM_DEACTIVATED",
      "This organization has been deactivated",
    );
  });

  it("answers 404 on a subdomain without a realm, and finds accounts only in the Host's realm", async () => {
    await boot();
    const other = s.t.store.createRealm({
      subdomain: "zephyr",
      name: "Zephyr",
      owner: {
        email: "zed@zephyr.dev",
        fullName: "Zed",
        password: await hashPassword("zephyr-owner-pw", TEST_SCRYPT_COST),
      },
    });
    const body = "username=zed%40zephyr.dev&password=zephyr-owner-pw";
    const form = { "Content-Type": "application/x-www-form-urlencoded" };
    const missing = await rawRequest(s.base, "POST", "/fetch_api_key", { ...form, Host: "nosuch.localhost" }, body);
    expect([missing.status, missing.body["code"], missing.body["msg"]]).toEqual([
      404,
      "NONEXISTENT_SUBDOMAIN",
      "Invalid subdomain",
    ]);
    const there = await rawRequest(s.base, "POST", "/fetch_api_key", { ...form, Host: "zephyr.localhost" }, body);
    expect([there.status, there.body["user_id"]]).toEqual([200, other.owner.id]);
    const here = await rawRequest(s.base, "POST", "/fetch_api_key", { ...form, Host: "localhost" }, body);
    expect([here.status, here.body["code"]]).toEqual([401, "AUTHENTICATION_FAILED"]);
  });
});

describe("login limits", () => {
  it("allows a few attempts per account, refuses the rest with 429 even with the right password, and leaves other accounts alone", async () => {
    await boot({ loginLimit: { requests: 3, windowSeconds: 3600 } });
    s.t.store.setPassword(s.seed.bob.id, await hashPassword("bob-secret-77", TEST_SCRYPT_COST));
    for (let i = 0; i < 3; i++) expect((await login("alice@test.dev", `guess-${i}-xx`)).status).toBe(401);
    const limited = await expectRejectedUnchanged(
      s,
      () => login("Alice@Test.dev", ALICE_PASSWORD),
      429,
      "RATE_LIMIT_HIT",
      "API usage exceeded rate limit",
    );
    expect(limited["retry-after"]).toBeGreaterThan(0);
    expect((await login("bob@test.dev", "bob-secret-77")).status).toBe(200);
  });

  it("forgets an account's failed attempts after a successful login", async () => {
    await boot({ loginLimit: { requests: 3, windowSeconds: 3600 } });
    for (let round = 0; round < 3; round++) {
      expect((await login("alice@test.dev", "guess-a-xx")).status).toBe(401);
      expect((await login("alice@test.dev", "guess-b-xx")).status).toBe(401);
      expect((await login("alice@test.dev", ALICE_PASSWORD)).status).toBe(200);
    }
  });

  it("counts failures per client address across accounts, and with Basic-auth failures", async () => {
    await boot({ authFailureLimit: { requests: 3, windowSeconds: 3600 } });
    expect((await login("nobody1@test.dev", "guess-xx-1")).status).toBe(401);
    expect((await login("nobody2@test.dev", "guess-xx-2")).status).toBe(401);
    const badKey = await s.call(
      null,
      "GET",
      "/users/me",
      {},
      { headers: { Authorization: `Basic ${Buffer.from("bob@test.dev:" + "x".repeat(32)).toString("base64")}` } },
    );
    expect(badKey.status).toBe(401);
    await expectRejectedUnchanged(
      s,
      () => login("alice@test.dev", ALICE_PASSWORD),
      429,
      "RATE_LIMIT_HIT",
      "API usage exceeded rate limit",
    );
  });
});

describe("password hashing at capacity", () => {
  /** Fills the process's hash pool (the test server runs in this process): one slot, no queue. */
  function fillHashPool(): () => Promise<void> {
    passwordHashPool.configure({ concurrency: 1, maxQueued: 0 });
    let open = (): void => undefined;
    const held = passwordHashPool.run(() => new Promise<void>((resolve) => (open = resolve)));
    return async () => {
      open();
      await held;
      passwordHashPool.configure(defaultHashPoolLimits());
    };
  }

  it("refuses logins and password changes with 429 and Retry-After before the password is hashed", async () => {
    await boot();
    const { alice } = s.seed;
    const release = fillHashPool();
    try {
      const started = passwordHashPool.started;
      const busy = "The server is busy checking passwords; try again in a moment.";
      const tryLogin = () => login("alice@test.dev", ALICE_PASSWORD);
      const refused = await expectRejectedUnchanged(s, tryLogin, 429, "RATE_LIMIT_HIT", busy);
      expect(refused["retry-after"]).toBe(1);
      expect((await login("nobody@test.dev", "guess-xx-1")).status).toBe(429);
      const params = { old_password: ALICE_PASSWORD, new_password: "granite-lantern-9" };
      const change = () => s.call(alice, "PATCH", "/settings", params);
      const r = await expectRejectedUnchanged(s, change, 429, "RATE_LIMIT_HIT", busy);
      expect(r["retry-after"]).toBe(1);
      expect((await change()).headers.get("retry-after")).toBe("1.000");
      expect(passwordHashPool.started).toBe(started);
    } finally {
      await release();
    }
    expect((await login("alice@test.dev", ALICE_PASSWORD)).status).toBe(200);
  });

  it("a refusal for capacity neither costs the account an attempt nor forgets its failed ones", async () => {
    await boot({ loginLimit: { requests: 3, windowSeconds: 3600 } });
    for (let i = 0; i < 2; i++) expect((await login("alice@test.dev", `guess-${i}-xx`)).status).toBe(401);
    const release = fillHashPool();
    try {
      for (let i = 0; i < 3; i++) expect((await login("alice@test.dev", ALICE_PASSWORD)).body["msg"]).toMatch(/busy/);
    } finally {
      await release();
    }
    expect((await login("alice@test.dev", "guess-2-xx")).status).toBe(401);
    // The third failure used the last attempt: the right password is refused too.
    const tryLogin = () => login("alice@test.dev", ALICE_PASSWORD);
    await expectRejectedUnchanged(s, tryLogin, 429, "RATE_LIMIT_HIT", "API usage exceeded rate limit");
  });
});

describe("PATCH /settings old_password / new_password", () => {
  const change = (user: User, params: Record<string, unknown>) => s.call(user, "PATCH", "/settings", params);

  it("needs the right old password and a strong new one; then the new one logs in and the old one does not", async () => {
    await boot();
    const { alice } = s.seed;
    await expectRejectedUnchanged(
      s,
      () => change(alice, { old_password: "not-it-at-all", new_password: "granite-lantern-9" }),
      400,
      "BAD_REQUEST",
      "Wrong password!",
    );
    await expectRejectedUnchanged(
      s,
      () => change(alice, { new_password: "granite-lantern-9" }),
      400,
      "BAD_REQUEST",
      "Wrong password!",
    );
    for (const weak of ["abc", "123456", "aaaaaaaa", "password", "alice@test.dev", "x".repeat(101)]) {
      await expectRejectedUnchanged(
        s,
        () => change(alice, { old_password: ALICE_PASSWORD, new_password: weak }),
        400,
        "BAD_REQUEST",
        "New password is too weak!",
      );
    }
    // Another field of the same request that fails: the password does not change either.
    await expectRejectedUnchanged(
      s,
      () =>
        change(alice, { old_password: ALICE_PASSWORD, new_password: "granite-lantern-9", timezone: "Mars/Olympus" }),
      400,
      "BAD_REQUEST",
      "Invalid timezone",
    );
    // An account without a password has no old one to give.
    await expectRejectedUnchanged(
      s,
      () => change(s.seed.bob, { old_password: "", new_password: "granite-lantern-9" }),
      400,
      "BAD_REQUEST",
      "Wrong password!",
    );
    const ok = await change(alice, {
      old_password: ALICE_PASSWORD,
      new_password: "granite-lantern-9",
      full_name: "Alice Renamed",
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(s.t.store.getUser(alice.id).fullName).toBe("Alice Renamed");
    expect((await login("alice@test.dev", "granite-lantern-9")).status).toBe(200);
    expect((await login("alice@test.dev", ALICE_PASSWORD)).body["code"]).toBe("AUTHENTICATION_FAILED");
    // The new hash is made at the server's cost.
    expect(s.t.store.passwordOf(alice.id)).toMatchObject({ N: TEST_SCRYPT_COST.N });
  });

  it("ignores old_password alone, and refuses a password change for other users", async () => {
    await boot();
    const { alice, owner } = s.seed;
    const r = await change(alice, { old_password: "anything" });
    expect(r.status).toBe(200);
    const target_users = { user_ids: [alice.id], skip_if_already_edited: false };
    await expectRejectedUnchanged(
      s,
      () => change(owner, { target_users, new_password: "granite-lantern-9" }),
      400,
      "BAD_REQUEST",
      "Cannot change this setting for other users.",
    );
  });

  it("limits old-password attempts like logins", async () => {
    await boot({ loginLimit: { requests: 2, windowSeconds: 3600 } });
    const { alice } = s.seed;
    for (let i = 0; i < 2; i++)
      expect((await change(alice, { old_password: `guess-${i}-xx`, new_password: "granite-lantern-9" })).status).toBe(
        400,
      );
    await expectRejectedUnchanged(
      s,
      () => change(alice, { old_password: ALICE_PASSWORD, new_password: "granite-lantern-9" }),
      400,
      "BAD_REQUEST",
      /^You're making too many attempts! Try again in \d+ seconds\.$/,
    );
  });
});

describe("POST /users/me/api_key/regenerate", () => {
  it("returns a new key; the old key is refused from the next request on", async () => {
    await boot();
    const { bob } = s.seed;
    const oldKey = s.t.store.getUser(bob.id).apiKey;
    const r = await s.call(bob, "POST", "/users/me/api_key/regenerate");
    expect(r.status).toBe(200);
    const newKey = r.body["api_key"] as string;
    expect(newKey).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(newKey).not.toBe(oldKey);
    const withOld = await s.call(
      null,
      "GET",
      "/users/me",
      {},
      { headers: { Authorization: `Basic ${Buffer.from(`bob@test.dev:${oldKey}`).toString("base64")}` } },
    );
    expect([withOld.status, withOld.body["code"], withOld.body["msg"]]).toEqual([
      401,
      "UNAUTHORIZED",
      "Invalid API key",
    ]);
    const withNew = await s.call(
      null,
      "GET",
      "/users/me",
      {},
      { headers: { Authorization: `Basic ${Buffer.from(`bob@test.dev:${newKey}`).toString("base64")}` } },
    );
    expect(withNew.body["user_id"]).toBe(bob.id);
  });
});

describe("PATCH /users/{id} new_email", () => {
  type Ev = Record<string, unknown> & { type: string };

  async function queue(user: User): Promise<string> {
    const r = await s.call(user, "POST", "/register", { event_types: ["realm_user"], client_gravatar: false });
    return r.body["queue_id"] as string;
  }
  async function events(user: User, queueId: string): Promise<Ev[]> {
    const r = await s.call(user, "GET", "/events", { queue_id: queueId, last_event_id: -1, dont_block: true });
    return r.body["events"] as Ev[];
  }

  it("lets an owner with can_change_user_emails change it, with Zulip's three realm_user updates", async () => {
    await boot();
    const { owner, alice, bob } = s.seed;
    s.t.store.setCanChangeUserEmails(owner.id, true);
    const q = await queue(bob);
    const r = await s.call(owner, "PATCH", `/users/${alice.id}`, { new_email: "  alice.new@test.dev " });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const user = (await s.call(bob, "GET", `/users/${alice.id}`, { client_gravatar: false })).body["user"] as Record<
      string,
      unknown
    >;
    expect([user["email"], user["delivery_email"]]).toEqual(["alice.new@test.dev", "alice.new@test.dev"]);
    const updates = (await events(bob, q))
      .filter((e) => e.type === "realm_user")
      .map((e) => e["person"] as Record<string, unknown>);
    expect(updates).toEqual([
      { user_id: alice.id, delivery_email: "alice.new@test.dev" },
      {
        user_id: alice.id,
        avatar_source: "G",
        avatar_url: user["avatar_url"],
        avatar_url_medium: user["avatar_url"],
        avatar_version: user["avatar_version"],
      },
      { user_id: alice.id, new_email: "alice.new@test.dev" },
    ]);
    // The new address logs in (Basic auth and password); the old one is free again.
    expect((await login("alice.new@test.dev", ALICE_PASSWORD)).status).toBe(200);
    expect((await s.call(alice, "GET", "/users/me")).body["email"]).toBe("alice.new@test.dev");
    expect((await login("alice@test.dev", ALICE_PASSWORD)).status).toBe(401);
    // The same address again changes nothing and sends nothing.
    const before = (await events(bob, q)).length;
    expect((await s.call(owner, "PATCH", `/users/${alice.id}`, { new_email: "alice.new@test.dev" })).status).toBe(200);
    expect(await events(bob, q)).toHaveLength(before);
  });

  it("refuses everyone else and every bad address, changing nothing", async () => {
    await boot();
    const { owner, alice, bob } = s.seed;
    const admin = s.t.store.createUser({
      realmId: s.seed.realm.id,
      email: "admin@test.dev",
      fullName: "Ada Admin",
      role: 200,
    });
    s.t.store.setCanChangeUserEmails(admin.id, true);
    const patch = (actor: User, params: Record<string, unknown>) => () =>
      s.call(actor, "PATCH", `/users/${alice.id}`, params);
    await expectRejectedUnchanged(
      s,
      patch(owner, { new_email: "a2@test.dev" }),
      400,
      "BAD_REQUEST",
      "User not authorized to change user emails",
    );
    await expectRejectedUnchanged(
      s,
      patch(admin, { new_email: "a2@test.dev" }),
      400,
      "UNAUTHORIZED_PRINCIPAL",
      "Must be an organization owner",
    );
    await expectRejectedUnchanged(
      s,
      patch(bob, { new_email: "a2@test.dev" }),
      400,
      "BAD_REQUEST",
      "Insufficient permission",
    );
    s.t.store.setCanChangeUserEmails(owner.id, true);
    await expectRejectedUnchanged(
      s,
      patch(owner, { new_email: "not an email" }),
      400,
      "BAD_REQUEST",
      "Invalid email 'not an email'",
    );
    await expectRejectedUnchanged(
      s,
      patch(owner, { new_email: `${"x".repeat(300)}@test.dev` }),
      400,
      "BAD_REQUEST",
      /^Invalid email 'x{100}…'$/,
    );
    await expectRejectedUnchanged(
      s,
      patch(owner, { new_email: "BOB@test.dev" }),
      400,
      "BAD_REQUEST",
      "Already has an account.",
    );
    s.t.store.setUserActive(bob.id, false);
    await expectRejectedUnchanged(
      s,
      patch(owner, { new_email: "bob@test.dev" }),
      400,
      "BAD_REQUEST",
      "Account has been deactivated.",
    );
    const bot = s.t.store.createUser({
      realmId: s.seed.realm.id,
      email: "helper-bot@test.dev",
      fullName: "Helper",
      bot: { type: 1, ownerId: owner.id },
    });
    await expectRejectedUnchanged(
      s,
      () => s.call(owner, "PATCH", `/users/${bot.id}`, { new_email: "other-bot@test.dev" }),
      400,
      "BAD_REQUEST",
      "A bot's email address cannot be changed",
    );
    // With another change in the same request: neither is made.
    await expectRejectedUnchanged(
      s,
      patch(owner, { full_name: "Alicia", new_email: "bob@test.dev" }),
      400,
      "BAD_REQUEST",
      "Account has been deactivated.",
    );
    // The user's own address in other letters is theirs to take.
    expect((await s.call(owner, "PATCH", `/users/${alice.id}`, { new_email: "Alice@Test.dev" })).status).toBe(200);
    expect(s.t.store.getUser(alice.id).deliveryEmail).toBe("Alice@Test.dev");
  });
});
