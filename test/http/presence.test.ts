/**
 * Presence over HTTP (seed endpoint 9): POST /users/me/presence in both formats,
 * last_update_id and history_limit_days, ping_only, Zulip's 55-second update rule,
 * presence_enabled, bots; GET /realm/presence and GET /users/{id}/presence; the
 * register section and the `presence` event in its three shapes; durability of the
 * batched flush across a reopen.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createServer, type ParleyServer } from "../../src/http/server.js";
import { internals } from "../../src/engine/internal.js";
import { basicAuth, encodeParams, expectRejectedUnchanged, type TestServer } from "../support/http.js";
import { seedRealm, tempStore } from "../support/temp-store.js";
import { setUserSettings } from "../support/user-settings.js";
import type { User } from "../../src/engine/index.js";

const START = 1_800_000_000;
let now = START;
let server: TestServer;
let http: ParleyServer | null = null;

/** A server over a store whose clock the test moves (Zulip's thresholds are in seconds). */
async function boot(): Promise<TestServer> {
  now = START;
  const t = tempStore({ now: () => now });
  const seed = seedRealm(t.store);
  http = createServer(t.store, { rateLimit: false, logError: () => undefined });
  const port = await http.listen(0, "127.0.0.1");
  const base = `http://127.0.0.1:${port}`;
  server = {
    t,
    base,
    seed,
    server: http,
    async call(user, method, path, params = {}) {
      const form = encodeParams(params);
      const isQuery = method === "GET" || method === "DELETE";
      const response = await fetch(`${base}/api/v1${path}${isQuery && form.size > 0 ? `?${form}` : ""}`, {
        method,
        headers: user ? { Authorization: basicAuth(t.store.getUser(user.id)) } : {},
        body: isQuery ? undefined : form,
      });
      return {
        status: response.status,
        body: (await response.json()) as Record<string, unknown>,
        headers: response.headers,
      };
    },
    close() {
      http?.close();
      t.cleanup();
    },
  };
  return server;
}

afterEach(() => server?.close());

const ping = (user: User, params: Record<string, unknown> = {}) =>
  server.call(user, "POST", "/users/me/presence", { status: "active", ...params });

describe("POST /users/me/presence", () => {
  it("records the caller and answers in the legacy format by email, or by ID with last_update_id", async () => {
    await boot();
    const { alice, bob } = server.seed;
    const first = await ping(alice);
    expect(first.status).toBe(200);
    expect(first.body["presences"]).toEqual({
      "alice@test.dev": {
        aggregated: { client: "website", status: "active", timestamp: START },
        website: { client: "website", status: "active", timestamp: START, pushable: false },
      },
    });
    expect(typeof first.body["server_timestamp"]).toBe("number");
    now += 10;
    const idle = await ping(bob, { status: "idle", last_update_id: -1 });
    // Bob was never active: his active timestamp reads as the day he joined, as Zulip.
    expect(idle.body["presences"]).toEqual({
      [String(alice.id)]: { active_timestamp: START, idle_timestamp: START },
      [String(bob.id)]: { active_timestamp: server.t.store.getUser(bob.id).dateJoined, idle_timestamp: START + 10 },
    });
    expect(idle.body["presence_last_update_id"]).toBe(2);
    const slim = await ping(bob, { status: "idle", slim_presence: true });
    expect(Object.keys(slim.body["presences"] as object).sort()).toEqual([String(alice.id), String(bob.id)].sort());
  });

  it("last_update_id: only newer rows; equal means nothing new; -1 when nothing at all", async () => {
    await boot();
    const { alice, bob, owner } = server.seed;
    await ping(alice);
    const r1 = await ping(bob, { last_update_id: -1 });
    const seen = r1.body["presence_last_update_id"] as number;
    expect(seen).toBe(2);
    // Within 55 s nothing is stored, so nothing is new.
    now += 30;
    const r2 = await ping(bob, { last_update_id: seen });
    expect(r2.body["presences"]).toEqual({});
    expect(r2.body["presence_last_update_id"]).toBe(seen);
    // After 55 s alice's ping is a change, with the next number.
    now += 30;
    await ping(alice, { ping_only: true });
    const r3 = await ping(bob, { last_update_id: seen, ping_only: false });
    expect(Object.keys(r3.body["presences"] as object)).toEqual(
      expect.arrayContaining([String(alice.id), String(bob.id)]),
    );
    expect(r3.body["presence_last_update_id"]).toBe(4);
    // Each user once, at their latest change, however often they changed.
    expect(
      server.t.store
        .realmPresence(bob.id, { lastUpdateId: -1 })
        .rows.map((row) => [row.user.id, row.presence.lastUpdateId]),
    ).toEqual([
      [alice.id, 3],
      [bob.id, 4],
    ]);
    // history_limit_days=0 asks for nothing: the client's own number comes back, else -1.
    const none = await ping(owner, { history_limit_days: 0, last_update_id: 0 });
    expect(none.body["presences"]).toEqual({});
    expect(none.body["presence_last_update_id"]).toBe(0);
    const empty = await server.call(owner, "POST", "/users/me/presence", { status: "idle", history_limit_days: 0 });
    expect(empty.body["presence_last_update_id"]).toBe(-1);
  });

  it("history_limit_days bounds a first fetch by last connection", async () => {
    await boot();
    const { alice, bob } = server.seed;
    await ping(alice);
    now += 3 * 86_400;
    const recent = await ping(bob, { last_update_id: -1, history_limit_days: 2 });
    expect(Object.keys(recent.body["presences"] as object)).toEqual([String(bob.id)]);
    const default14 = await ping(bob, { last_update_id: -1 });
    expect(Object.keys(default14.body["presences"] as object).length).toBe(2);
    // A positive last_update_id ignores the history limit.
    const since = await ping(bob, { last_update_id: 1, history_limit_days: 1 });
    expect(Object.keys(since.body["presences"] as object)).toEqual([String(bob.id)]);
  });

  it("ping_only answers {} and still records; idle after active keeps the active timestamp", async () => {
    await boot();
    const { alice, bob } = server.seed;
    const r = await ping(alice, { ping_only: true, new_user_input: true });
    expect(r.body).toEqual({ result: "success", msg: "" });
    now += 100;
    await ping(alice, { status: "idle", ping_only: true });
    const view = await ping(bob, { last_update_id: -1 });
    expect((view.body["presences"] as Record<string, unknown>)[String(alice.id)]).toEqual({
      active_timestamp: START,
      idle_timestamp: START + 100,
    });
    // Legacy: idle, since last active is more than 70 s before last connected.
    const legacy = await server.call(bob, "GET", "/realm/presence");
    expect((legacy.body["presences"] as Record<string, { aggregated: unknown }>)["alice@test.dev"]!.aggregated).toEqual(
      { client: "website", status: "idle", timestamp: START + 100 },
    );
    expect(legacy.body).not.toHaveProperty("presence_last_update_id");
  });

  it("presence_enabled=false: nothing is recorded and the user is hidden", async () => {
    await boot();
    const { alice, bob } = server.seed;
    await ping(alice);
    setUserSettings(server.t.store, alice.id, { presence_enabled: false });
    const r = await ping(bob, { last_update_id: -1 });
    expect(Object.keys(r.body["presences"] as object)).toEqual([String(bob.id)]);
    now += 100;
    await ping(alice);
    expect(internals(server.t.store).presence.get(alice.id)!.lastActive).toBe(START);
    const one = await server.call(bob, "GET", `/users/${alice.id}/presence`);
    expect(one.body).toMatchObject({ result: "error", code: "BAD_REQUEST", msg: `No presence data for ${alice.id}` });
  });

  it("refuses bad input and bots with Zulip's errors, changing nothing", async () => {
    await boot();
    const { alice, owner, realm } = server.seed;
    const bot = server.t.store.createUser({
      realmId: realm.id,
      email: "bot-bot@test.dev",
      fullName: "Bot",
      bot: { type: 1, ownerId: owner.id },
    });
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "POST", "/users/me/presence", { status: "away" }),
      400,
      "BAD_REQUEST",
      "Invalid status: away",
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "POST", "/users/me/presence", {}),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'status' argument",
    );
    await expectRejectedUnchanged(
      server,
      () => ping(alice, { ping_only: "maybe" }),
      400,
      "BAD_REQUEST",
      "ping_only is not a boolean",
    );
    await expectRejectedUnchanged(
      server,
      () => ping(alice, { last_update_id: "x" }),
      400,
      "BAD_REQUEST",
      "last_update_id is not an integer",
    );
    await expectRejectedUnchanged(
      server,
      () => ping(alice, { history_limit_days: -1 }),
      400,
      "BAD_REQUEST",
      "history_limit_days is too small",
    );
    await expectRejectedUnchanged(
      server,
      () => ping(bot),
      400,
      "BAD_REQUEST",
      "This endpoint does not accept bot requests.",
    );
    expect(internals(server.t.store).presence.size).toBe(0);
  });

  it("a guest and an administrator see the same realm presence", async () => {
    await boot();
    const { alice, guest, owner } = server.seed;
    await ping(alice);
    for (const viewer of [guest, owner]) {
      const r = await server.call(viewer, "GET", "/realm/presence");
      expect(Object.keys(r.body["presences"] as object)).toEqual(["alice@test.dev"]);
    }
  });
});

describe("GET /users/{user_id_or_email}/presence", () => {
  it("by ID or email, offline once stale; Zulip's refusals", async () => {
    await boot();
    const { alice, bob, owner, realm } = server.seed;
    await ping(alice);
    const fresh = await server.call(bob, "GET", `/users/${alice.id}/presence`);
    expect(fresh.body["presence"]).toEqual({
      aggregated: { status: "active", timestamp: START },
      website: { status: "active", timestamp: START },
    });
    // Staleness is judged against the wall clock (Zulip's timezone_now), far past START's fake time.
    const byEmail = await server.call(bob, "GET", `/users/alice@test.dev/presence`);
    expect((byEmail.body["presence"] as { aggregated: { status: string } }).aggregated.status).toBe(
      Date.now() / 1000 - START > 140 ? "offline" : "active",
    );
    const bot = server.t.store.createUser({
      realmId: realm.id,
      email: "bot2-bot@test.dev",
      fullName: "Bot2",
      bot: { type: 1, ownerId: owner.id },
    });
    await expectRejectedUnchanged(
      server,
      () => server.call(bob, "GET", `/users/${bot.id}/presence`),
      400,
      "BAD_REQUEST",
      "Presence is not supported for bot users.",
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(bob, "GET", `/users/9999/presence`),
      400,
      "BAD_REQUEST",
      "No such user",
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(bob, "GET", `/users/nobody@test.dev/presence`),
      400,
      "BAD_REQUEST",
      "No such user",
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "GET", `/users/bob@test.dev/presence`),
      400,
      "BAD_REQUEST",
      "No presence data for bob@test.dev",
    );
    server.t.store.setUserActive(alice.id, false);
    await expectRejectedUnchanged(
      server,
      () => server.call(bob, "GET", `/users/${alice.id}/presence`),
      400,
      "BAD_REQUEST",
      "No such user",
    );
  });
});

describe("register and events", () => {
  type Ev = Record<string, unknown> & { type: string };
  const events = async (user: User, queueId: string): Promise<Ev[]> =>
    (await server.call(user, "GET", "/events", { queue_id: queueId, last_event_id: -1, dont_block: true })).body[
      "events"
    ] as Ev[];

  it("register's presence section in both formats, and presence_last_update_id", async () => {
    await boot();
    const { alice, bob } = server.seed;
    await ping(alice);
    const legacy = await server.call(bob, "POST", "/register", { fetch_event_types: ["presence"] });
    expect(legacy.body["presences"]).toEqual({
      "alice@test.dev": expect.objectContaining({
        aggregated: { client: "website", status: "active", timestamp: START },
      }),
    });
    expect(legacy.body["presence_last_update_id"]).toBe(1);
    expect(typeof legacy.body["server_timestamp"]).toBe("number");
    const slim = await server.call(bob, "POST", "/register", {
      fetch_event_types: ["presence"],
      presence_last_update_id: 0,
    });
    expect(slim.body["presences"]).toEqual({ [String(alice.id)]: { active_timestamp: START, idle_timestamp: START } });
    const nothingNew = await server.call(bob, "POST", "/register", {
      fetch_event_types: ["presence"],
      presence_last_update_id: 1,
    });
    expect(nothingNew.body["presences"]).toEqual({});
    expect(nothingNew.body["presence_last_update_id"]).toBe(1);
    const realm = await server.call(bob, "POST", "/register", { fetch_event_types: ["realm"] });
    expect(realm.body["realm_presence_disabled"]).toBe(false);
  });

  it("a user seen first or back online is announced in the shape each queue asked for; regular pings are not", async () => {
    await boot();
    const { alice, bob, owner, guest } = server.seed;
    const legacyQ = (await server.call(bob, "POST", "/register", { event_types: ["presence"] })).body[
      "queue_id"
    ] as string;
    const slimQ = (await server.call(owner, "POST", "/register", { event_types: ["presence"], slim_presence: true }))
      .body["queue_id"] as string;
    const modernQ = (
      await server.call(guest, "POST", "/register", {
        event_types: ["presence"],
        client_capabilities: { simplified_presence_events: true },
      })
    ).body["queue_id"] as string;
    await ping(alice);
    const [legacy] = await events(bob, legacyQ);
    expect(legacy).toMatchObject({
      type: "presence",
      user_id: alice.id,
      email: "alice@test.dev",
      presence: { website: { client: "website", status: "active", timestamp: START, pushable: false } },
    });
    expect(typeof legacy!["server_timestamp"]).toBe("number");
    const [slim] = await events(owner, slimQ);
    expect(slim).not.toHaveProperty("email");
    expect(slim).toMatchObject({ type: "presence", user_id: alice.id });
    const [modern] = await events(guest, modernQ);
    expect(modern).toEqual({
      type: "presence",
      presences: { [String(alice.id)]: { active_timestamp: START, idle_timestamp: START } },
      id: 0,
    });
    // A regular ping a minute later is no news; coming back after 70 s inactive is.
    now += 60;
    await ping(alice);
    expect(await events(bob, legacyQ)).toHaveLength(1);
    now += 71;
    await ping(alice);
    const all = await events(bob, legacyQ);
    expect(all).toHaveLength(2);
    expect(all[1]).toMatchObject({ user_id: alice.id, presence: { website: { timestamp: START + 131 } } });
  });
});

describe("durability", () => {
  it("a flush writes pending presence; a reopened store resumes above every number handed out", async () => {
    await boot();
    const { alice, bob } = server.seed;
    await ping(alice);
    await ping(bob);
    expect(internals(server.t.store).presenceDirty.size).toBe(2);
    expect(server.t.store.flushPresence()).toBe(2);
    expect(server.t.store.flushPresence()).toBe(0);
    http?.close();
    http = null;
    // Reopening (close flushes) keeps the records and starts numbering above the lease.
    const store = server.t.reopen();
    const state = internals(store);
    expect(state.presence.get(alice.id)).toMatchObject({ lastActive: START, lastUpdateId: 1 });
    expect(state.presenceSeq).toBeGreaterThanOrEqual(2);
    expect(
      store
        .realmPresence(bob.id, { lastUpdateId: -1 })
        .rows.map((r) => r.user.id)
        .sort(),
    ).toEqual([alice.id, bob.id].sort());
  });
});
