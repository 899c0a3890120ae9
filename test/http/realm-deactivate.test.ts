/**
 * POST /realm/deactivate over HTTP: the permission matrix (owner, administrator,
 * moderator, member, guest, bot, another realm's owner), Zulip's deletion_delay_days
 * window, and what deactivation does at once: every key of the realm refused, a waiting
 * poll answered with the `realm deactivated` event and the queues collected, logins
 * refused with Zulip's code, the owners mailed, and the data kept for a reactivation.
 * Each deactivation uses a realm of its own, so the tests do not depend on each other.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword, ROLE, type User } from "../../src/engine/index.js";
import {
  basicAuth,
  encodeParams,
  expectRejectedUnchanged,
  rawRequest,
  startServer,
  TEST_SCRYPT_COST,
  type TestServer,
} from "../support/http.js";

let s: TestServer;

beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.close());

type Reply = { status: number; body: Record<string, unknown> };
let realms = 0;

/** A fresh realm with an owner, an administrator, a moderator, a member, a guest and an administrator bot. */
function freshRealm() {
  const { store } = s.t;
  const subdomain = `r${++realms}`;
  const { realm, owner } = store.createRealm({
    subdomain,
    name: `Realm ${realms}`,
    owner: { email: `owner@${subdomain}.test`, fullName: "Owner" },
  });
  const user = (name: string, role: (typeof ROLE)[keyof typeof ROLE]) =>
    store.createUser({ realmId: realm.id, email: `${name}@${subdomain}.test`, fullName: name, role });
  const bot = store.createUser({
    realmId: realm.id,
    email: `bot@${subdomain}.test`,
    fullName: "Bot",
    role: ROLE.ADMINISTRATOR,
    bot: { type: 1, ownerId: owner.id },
  });
  return {
    realm,
    owner,
    admin: user("admin", ROLE.ADMINISTRATOR),
    moderator: user("moderator", ROLE.MODERATOR),
    member: user("member", ROLE.MEMBER),
    guest: user("guest", ROLE.GUEST),
    bot,
    /** A request on the realm's own host, as `caller` (null: unauthenticated). */
    call(caller: User | null, method: string, path: string, params: Record<string, unknown> = {}): Promise<Reply> {
      const query = method === "GET" ? `?${encodeParams(params)}` : "";
      return rawRequest(
        s.base,
        method,
        path + query,
        {
          Host: `${subdomain}.localhost`,
          ...(caller ? { Authorization: basicAuth(store.getUser(caller.id)) } : {}),
          "Content-Type": "application/x-www-form-urlencoded",
        },
        method === "GET" ? "" : encodeParams(params).toString(),
      );
    },
  };
}

const NOT_OWNER = [400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner"] as const;
const isDeactivated = (realmId: number) => s.t.store.findRealm(realmId)?.deactivated;

describe("POST /realm/deactivate", () => {
  it("owners only: administrators, moderators, members, guests and bots are refused and nothing changes", async () => {
    const r = freshRealm();
    for (const caller of [r.admin, r.moderator, r.member, r.guest, r.bot])
      await expectRejectedUnchanged(s, () => r.call(caller, "POST", "/realm/deactivate"), ...NOT_OWNER);
    expect(isDeactivated(r.realm.id)).toBe(false);
  });

  it("an owner deactivates their own organization only: another realm goes on", async () => {
    const mine = freshRealm();
    const other = freshRealm();
    expect(await mine.call(mine.owner, "POST", "/realm/deactivate")).toMatchObject({
      status: 200,
      body: { result: "success" },
    });
    expect(isDeactivated(mine.realm.id)).toBe(true);
    expect(isDeactivated(other.realm.id)).toBe(false);
    expect(isDeactivated(s.seed.realm.id)).toBe(false);
    expect((await other.call(other.member, "GET", "/users/me")).status).toBe(200);
    expect((await s.call(s.seed.alice, "GET", "/users/me")).status).toBe(200);
  });

  it("takes deletion_delay_days within Zulip's default window: null or at least 14 days", async () => {
    const r = freshRealm();
    for (const days of [13, 0, -1])
      await expectRejectedUnchanged(
        s,
        () => r.call(r.owner, "POST", "/realm/deactivate", { deletion_delay_days: days }),
        400,
        "BAD_REQUEST",
        "Data deletion time must be at least 14 days in the future.",
      );
    for (const bad of ["soon", "1.5", '"14"'])
      await expectRejectedUnchanged(
        s,
        () => r.call(r.owner, "POST", "/realm/deactivate", { deletion_delay_days: bad }),
        400,
        "BAD_REQUEST",
        /deletion_delay_days/,
      );
    expect(isDeactivated(r.realm.id)).toBe(false);
    expect((await r.call(r.owner, "POST", "/realm/deactivate", { deletion_delay_days: 14 })).status).toBe(200);
    const unbounded = freshRealm();
    const reply = await unbounded.call(unbounded.owner, "POST", "/realm/deactivate", { deletion_delay_days: null });
    expect(reply.status).toBe(200);
    const register = await s.call(s.seed.alice, "POST", "/register", { fetch_event_types: ["realm"] });
    expect(register.body).toMatchObject({
      server_min_deactivated_realm_deletion_days: 14,
      server_max_deactivated_realm_deletion_days: null,
    });
  });

  it("takes effect at once: queues get the event and go, keys and logins are refused, owners are mailed", async () => {
    const r = freshRealm();
    const { store } = s.t;
    store.setPassword(r.member.id, await hashPassword("violet-harbour-42", TEST_SCRYPT_COST));
    store.sendMessage({ senderId: r.member.id, to: { type: "direct", users: [r.owner.id] }, content: "kept" });
    const reg = await r.call(r.member, "POST", "/register", { event_types: ["realm", "message"] });
    expect(reg.status).toBe(200);
    const queueId = reg.body["queue_id"] as string;
    const botQueue = (await r.call(r.bot, "POST", "/register", {})).body["queue_id"] as string;
    const waiting = r.call(r.member, "GET", "/events", { queue_id: queueId, last_event_id: reg.body["last_event_id"] });
    const queuesBefore = s.server.events.stats.queues;

    expect((await r.call(r.owner, "POST", "/realm/deactivate")).status).toBe(200);

    const answered = await waiting;
    expect(answered.status).toBe(200);
    expect((answered.body["events"] as Record<string, unknown>[]).map(({ id: _id, ...e }) => e)).toEqual([
      { type: "realm", op: "deactivated", realm_id: r.realm.id },
    ]);
    expect(s.server.events.stats.queues).toBe(queuesBefore - 2);
    expect(() => s.server.events.queueFor(store.getUser(r.member.id), queueId)).toThrow("Bad event queue ID");
    expect(() => s.server.events.queueFor(store.getUser(r.bot.id), botQueue)).toThrow("Bad event queue ID");
    const gone = { status: 401, body: { code: "UNAUTHORIZED", msg: "This organization has been deactivated" } };
    for (const caller of [r.owner, r.member, r.bot])
      expect(await r.call(caller, "GET", "/users/me")).toMatchObject(gone);
    expect(await r.call(r.member, "GET", "/events", { queue_id: queueId, last_event_id: 0 })).toMatchObject(gone);
    await expectRejectedUnchanged(
      s,
      () => r.call(null, "POST", "/fetch_api_key", { username: r.member.email, password: "violet-harbour-42" }),
      401,
      "REALM_DEACTIVATED",
      "This organization has been deactivated",
    );
    expect(store.outboxMail().at(-1)).toMatchObject({
      to: [r.owner.email],
      subject: `Your organization, ${r.realm.name}, has been deactivated`,
    });

    // The data is kept: reactivated by the operator, the realm is as it was.
    store.setRealmDeactivated(r.realm.id, false);
    const messages = await r.call(r.member, "GET", "/messages", {
      anchor: "newest",
      num_before: 10,
      num_after: 0,
      narrow: "[]",
    });
    expect((messages.body["messages"] as Record<string, unknown>[]).map((m) => m["content"])).toEqual(["<p>kept</p>"]);
  });
});
