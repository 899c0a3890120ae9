/**
 * Bots over HTTP: POST /bots, PATCH and DELETE /bots/{id}, GET /bots/{id}/api_key and
 * POST /bots/{id}/api_key/regenerate, each with its permission matrix (owner,
 * administrator, moderator, member, guest, bot, another realm's owner), the realm_bot
 * events managers get, and register's realm_bots (no API keys since feature level 474).
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
let counter = 0;

beforeAll(async () => {
  s = await startServer();
  const { store } = s.t;
  const realmId = s.seed.realm.id;
  admin = store.createUser({ realmId, email: "admin@test.dev", fullName: "Ada Admin", role: ROLE.ADMINISTRATOR });
  moderator = store.createUser({ realmId, email: "mod@test.dev", fullName: "Mo Moderator", role: ROLE.MODERATOR });
  bot = store.createUser({
    realmId,
    email: "existing-bot@test.dev",
    fullName: "Existing",
    bot: { type: 1, ownerId: s.seed.bob.id },
  });
  queen = store.createRealm({
    subdomain: "bee",
    name: "Bee",
    owner: { email: "queen@bee.test", fullName: "Queen" },
  }).owner;
});
afterAll(() => s.close());

type Reply = { status: number; body: Record<string, unknown> };
const asBee = (user: User, method: string, path: string, params: Record<string, unknown> = {}): Promise<Reply> =>
  rawRequest(
    s.base,
    method,
    path,
    {
      Host: "bee.localhost",
      Authorization: basicAuth(s.t.store.getUser(user.id)),
      "Content-Type": "application/x-www-form-urlencoded",
    },
    encodeParams(params).toString(),
  );
const refused = (call: () => Promise<Reply>, status: number, code: string, msg: string) =>
  expectRejectedUnchanged(s, call, status, code, msg);
const INSUFFICIENT = [400, "BAD_REQUEST", "Insufficient permission"] as const;
const NO_GUESTS = [400, "BAD_REQUEST", "Not allowed for guest users"] as const;
const NO_BOTS = [400, "BAD_REQUEST", "This endpoint does not accept bot requests."] as const;
const NO_SUCH_BOT = [400, "BAD_REQUEST", "No such bot"] as const;

/** A fresh bot of `owner`'s, made over HTTP. */
async function newBot(owner: User, params: Record<string, unknown> = {}): Promise<User> {
  const n = ++counter;
  const r = await s.call(owner, "POST", "/bots", { full_name: `Bot Number ${n}`, short_name: `b${n}`, ...params });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return s.t.store.getUser(r.body["user_id"] as number);
}

describe("POST /bots", () => {
  it("permission matrix: members and above (can_create_bots_group), never guests or bots", async () => {
    const { owner, alice, guest } = s.seed;
    for (const caller of [owner, admin, moderator, alice]) expect((await newBot(caller)).botOwnerId).toBe(caller.id);
    const form = { full_name: "Nope Bot", short_name: "nope" };
    await refused(() => s.call(guest, "POST", "/bots", form), ...NO_GUESTS);
    await refused(() => s.call(bot, "POST", "/bots", form), ...NO_BOTS);
    // Another realm's owner makes bots in that realm, at its own address.
    const r = await asBee(queen, "POST", "/bots", form);
    expect(r.status).toBe(200);
    expect(s.t.store.getUser(r.body["user_id"] as number)).toMatchObject({
      realmId: queen.realmId,
      email: "nope-bot@localhost",
    });
  });

  it("answers Zulip's fields; outgoing webhooks keep their service; register lists bots without API keys", async () => {
    const { alice } = s.seed;
    const r = await s.call(alice, "POST", "/bots", {
      full_name: "Hooky",
      short_name: "hooky",
      bot_type: 3,
      payload_url: JSON.stringify("https://hooks.test/zulip"),
      interface_type: 2,
      default_sending_stream: "general",
      default_all_public_streams: true,
    });
    expect(r.body).toEqual({
      result: "success",
      msg: "",
      user_id: expect.any(Number),
      api_key: expect.stringMatching(/^[A-Za-z0-9]{32}$/),
      avatar_url: expect.stringContaining("https://secure.gravatar.com/avatar/"),
      default_sending_stream: "general",
      default_events_register_stream: null,
      default_all_public_streams: true,
    });
    const id = r.body["user_id"] as number;
    const reg = await s.call(alice, "POST", "/register", { fetch_event_types: ["realm_bot"] });
    const listed = (reg.body["realm_bots"] as Record<string, unknown>[]).find((b) => b["user_id"] === id);
    expect(listed).toEqual({
      user_id: id,
      default_sending_stream: "general",
      default_events_register_stream: null,
      default_all_public_streams: true,
      services: [{ base_url: "https://hooks.test/zulip", interface: 2, token: expect.stringMatching(/^\w{32}$/) }],
    });
    for (const b of reg.body["realm_bots"] as Record<string, unknown>[]) expect(b).not.toHaveProperty("api_key");
    // The bot can use the API with the key it was given.
    const me = await s.call(s.t.store.getUser(id), "GET", "/users/me");
    expect(me.body).toMatchObject({ email: "hooky-bot@localhost", is_bot: true });
  });

  it("refuses bad input with Zulip's errors, creating nothing", async () => {
    const { alice } = s.seed;
    const form = { full_name: "Good Name", short_name: "good" };
    await refused(
      () => s.call(alice, "POST", "/bots", { ...form, bot_type: 3, payload_url: JSON.stringify("not a url") }),
      400,
      "BAD_REQUEST",
      "payload_url is not a URL",
    );
    await refused(
      () => s.call(alice, "POST", "/bots", { ...form, payload_url: "https://unquoted.test" }),
      400,
      "BAD_REQUEST",
      "payload_url is not valid JSON",
    );
    await refused(
      () => s.call(alice, "POST", "/bots", { ...form, short_name: " " }),
      400,
      "BAD_REQUEST",
      "Bad name or username",
    );
    await refused(
      () => s.call(alice, "POST", "/bots", { ...form, bot_type: 4 }),
      400,
      "BAD_REQUEST",
      "Embedded bots are not enabled.",
    );
    await refused(
      () => s.call(alice, "POST", "/bots", { ...form, bot_type: 9 }),
      400,
      "BAD_REQUEST",
      "Invalid bot type",
    );
    await refused(
      () => s.call(alice, "POST", "/bots", { ...form, default_events_register_stream: "secret-nope" }),
      400,
      "BAD_REQUEST",
      "Invalid channel name 'secret-nope'",
    );
    await refused(
      () => s.call(s.seed.bob, "POST", "/bots", { ...form, default_sending_stream: "secret" }),
      400,
      "BAD_REQUEST",
      "Invalid channel name 'secret'",
    );
    await refused(
      () => s.call(alice, "POST", "/bots", { full_name: "Existing", short_name: "dup" }),
      400,
      "BAD_REQUEST",
      "Name is already in use!",
    );
    expect((await s.call(alice, "POST", "/bots", { full_name: "First", short_name: "twice" })).status).toBe(200);
    await refused(
      () => s.call(alice, "POST", "/bots", { full_name: "Second", short_name: "twice" }),
      400,
      "BAD_REQUEST",
      "Username already in use",
    );
  });
});

describe("PATCH /bots/{bot_id}", () => {
  it("permission matrix: the bot's owner and administrators", async () => {
    const { owner, alice, bob, guest } = s.seed;
    const target = await newBot(alice);
    const patch = (caller: User, name: string) => s.call(caller, "PATCH", `/bots/${target.id}`, { full_name: name });
    for (const caller of [moderator, bob]) await refused(() => patch(caller, "Taken Over"), ...INSUFFICIENT);
    await refused(() => patch(guest, "Taken Over"), ...NO_GUESTS);
    await refused(() => patch(bot, "Taken Over"), ...NO_BOTS);
    await refused(() => asBee(queen, "PATCH", `/bots/${target.id}`, { full_name: "Taken Over" }), ...NO_SUCH_BOT);
    for (const [caller, name] of [
      [alice, "By Alice"],
      [admin, "By Admin"],
      [owner, "By Owner"],
    ] as const) {
      const r = await patch(caller, name);
      expect(r.body).toMatchObject({ result: "success", full_name: name, bot_owner: "alice@test.dev" });
    }
    await refused(() => s.call(alice, "PATCH", `/bots/${bob.id}`, { full_name: "X Y" }), ...NO_SUCH_BOT);
  });

  it("sends realm_bot updates for bot settings and moves the bot between owners' lists", async () => {
    const { alice, bob } = s.seed;
    const target = await newBot(alice);
    const register = async (user: User) => {
      const r = await s.call(user, "POST", "/register", { event_types: ["realm_bot", "realm_user"] });
      return { queue: r.body["queue_id"] as string, last: r.body["last_event_id"] as number, user };
    };
    const poll = async (q: { queue: string; last: number; user: User }) =>
      (
        (await s.call(q.user, "GET", "/events", { queue_id: q.queue, last_event_id: q.last, dont_block: true })).body[
          "events"
        ] as Record<string, unknown>[]
      ).filter((e) => e["type"] === "realm_bot");
    const [aliceQ, bobQ, adminQ] = await Promise.all([register(alice), register(bob), register(admin)]);
    const r = await s.call(alice, "PATCH", `/bots/${target.id}`, {
      default_events_register_stream: "general",
      bot_owner_id: bob.id,
    });
    expect(r.status).toBe(200);
    expect((await poll(aliceQ)).map((e) => [e["op"], e["bot"]])).toEqual([["delete", { user_id: target.id }]]);
    expect((await poll(bobQ)).map((e) => [e["op"], (e["bot"] as Record<string, unknown>)["user_id"]])).toEqual([
      // Zulip's order: the owner change (add to the new owner) before the setting's update.
      ["add", target.id],
      ["update", target.id],
    ]);
    expect((await poll(adminQ)).map((e) => [e["op"], e["bot"]])).toEqual([
      ["update", { user_id: target.id, default_events_register_stream: "general" }],
    ]);
  });
});

describe("DELETE /bots/{bot_id}", () => {
  it("permission matrix: the bot's owner and administrators; the bot's key stops working", async () => {
    const { owner, alice, bob, guest } = s.seed;
    const targets = [await newBot(alice), await newBot(alice), await newBot(alice)];
    const target = targets[0]!;
    for (const caller of [moderator, bob, guest, bot])
      await refused(() => s.call(caller, "DELETE", `/bots/${target.id}`), ...INSUFFICIENT);
    await refused(() => asBee(queen, "DELETE", `/bots/${target.id}`), ...NO_SUCH_BOT);
    await refused(() => s.call(admin, "DELETE", `/bots/${bob.id}`), ...NO_SUCH_BOT);
    for (const [caller, t] of [
      [alice, targets[0]!],
      [admin, targets[1]!],
      [owner, targets[2]!],
    ] as const) {
      expect((await s.call(caller, "DELETE", `/bots/${t.id}`)).status).toBe(200);
      expect(await s.call(t, "GET", "/users/me")).toMatchObject({
        status: 401,
        body: { msg: "Account is deactivated" },
      });
    }
  });
});

describe("the bot's API key", () => {
  it("permission matrix for reading and regenerating; the old key fails at once", async () => {
    const { owner, alice, bob, guest } = s.seed;
    const target = await newBot(alice);
    for (const [method, path] of [
      ["GET", `/bots/${target.id}/api_key`],
      ["POST", `/bots/${target.id}/api_key/regenerate`],
    ] as const) {
      for (const caller of [moderator, bob]) await refused(() => s.call(caller, method, path), ...INSUFFICIENT);
      await refused(() => s.call(guest, method, path), ...NO_GUESTS);
      await refused(() => s.call(bot, method, path), ...NO_BOTS);
      await refused(() => asBee(queen, method, path), ...NO_SUCH_BOT);
    }
    for (const caller of [alice, admin, owner]) {
      const key = s.t.store.getUser(target.id).apiKey;
      expect((await s.call(caller, "GET", `/bots/${target.id}/api_key`)).body).toMatchObject({ api_key: key });
      const old = s.t.store.getUser(target.id);
      const r = await s.call(caller, "POST", `/bots/${target.id}/api_key/regenerate`);
      expect(r.body["api_key"]).not.toBe(key);
      const stale = await rawRequest(s.base, "GET", "/users/me", { Authorization: basicAuth(old) });
      expect(stale).toMatchObject({ status: 401, body: { msg: "Invalid API key" } });
      expect((await s.call(target, "GET", "/users/me")).status).toBe(200);
    }
  });
});

describe("a bot's default channel settings", () => {
  it("fill in POST /register's all_public_streams and narrow when the bot leaves them out", async () => {
    const { alice, owner } = s.seed;
    s.t.store.subscribe(owner.id, { channels: [{ name: "elsewhere" }], principals: [owner.id] });
    const watcher = await newBot(alice, { default_all_public_streams: true });
    const narrowed = await newBot(alice, { default_events_register_stream: "general" });
    s.t.store.subscribe(alice.id, {
      channels: [{ name: "general" }, { name: "elsewhere" }],
      principals: [narrowed.id],
    });
    const queues = await Promise.all(
      [watcher, narrowed].map(async (b) => {
        const r = await s.call(b, "POST", "/register", { event_types: ["message"] });
        return { bot: b, id: r.body["queue_id"] as string, last: r.body["last_event_id"] as number };
      }),
    );
    const sent = (channel: string) =>
      s.t.store.sendMessage({ senderId: owner.id, to: { type: "channel", channel, topic: "t" }, content: channel }).id;
    const inElsewhere = sent("elsewhere");
    const inGeneral = sent("general");
    const received = async (q: (typeof queues)[number]) => {
      const r = await s.call(q.bot, "GET", "/events", { queue_id: q.id, last_event_id: q.last, dont_block: true });
      return (r.body["events"] as Record<string, unknown>[]).map((e) => (e["message"] as { id: number }).id);
    };
    // All public channels, subscribed or not; only the default channel for the other.
    expect(await received(queues[0]!)).toEqual([inElsewhere, inGeneral]);
    expect(await received(queues[1]!)).toEqual([inGeneral]);
    // An explicit choice wins.
    const explicit = await s.call(watcher, "POST", "/register", {
      event_types: ["message"],
      all_public_streams: false,
    });
    sent("elsewhere");
    const r = await s.call(watcher, "GET", "/events", {
      queue_id: explicit.body["queue_id"],
      last_event_id: explicit.body["last_event_id"],
      dont_block: true,
    });
    expect(r.body["events"]).toEqual([]);
  });
});
