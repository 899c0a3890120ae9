/**
 * Bot storage over HTTP (GET/PUT/DELETE /bot_storage): who may use it (bots only since
 * Zulip's feature level 494; an incoming webhook bot's key does nothing but post), each
 * bot's storage its own, "Key does not exist." refusals that change nothing, and
 * Zulip's size limit (USER_STATE_SIZE_LIMIT characters of keys and values per bot).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROLE, USER_STATE_SIZE_LIMIT, type User } from "../../src/engine/index.js";
import {
  basicAuth,
  encodeParams,
  expectRejectedUnchanged,
  rawRequest,
  startServer,
  type TestServer,
} from "../support/http.js";

let s: TestServer;
let genericBot: User;
let outgoingBot: User;
let hookBot: User;
let otherBot: User;
let foreignBot: User;
const people: Record<string, User> = {};

beforeAll(async () => {
  s = await startServer();
  const { store } = s.t;
  const realmId = s.seed.realm.id;
  const bot = (email: string, type: 1 | 2 | 3) =>
    store.createUser({ realmId, email, fullName: email.split("@")[0]!, bot: { type, ownerId: s.seed.bob.id } });
  genericBot = bot("generic-bot@test.dev", 1);
  outgoingBot = bot("outgoing-bot@test.dev", 3);
  hookBot = bot("hook-bot@test.dev", 2);
  otherBot = bot("other-bot@test.dev", 1);
  const bee = store.createRealm({
    subdomain: "bee",
    name: "Bee",
    owner: { email: "queen@bee.test", fullName: "Queen" },
  });
  foreignBot = store.createUser({
    realmId: bee.realm.id,
    email: "drone-bot@bee.test",
    fullName: "Drone",
    bot: { type: 1, ownerId: bee.owner.id },
  });
  people["owner"] = s.seed.owner;
  people["administrator"] = store.createUser({
    realmId,
    email: "ad@test.dev",
    fullName: "Ad",
    role: ROLE.ADMINISTRATOR,
  });
  people["moderator"] = store.createUser({ realmId, email: "mo@test.dev", fullName: "Mo", role: ROLE.MODERATOR });
  people["member"] = s.seed.alice;
  people["guest"] = s.seed.guest;
});
afterAll(() => s.close());

const get = (user: User, keys?: string[]) => s.call(user, "GET", "/bot_storage", keys ? { keys } : {});
const put = (user: User, storage: unknown) => s.call(user, "PUT", "/bot_storage", { storage });
const remove = (user: User, keys?: string[]) => s.call(user, "DELETE", "/bot_storage", keys ? { keys } : {});

describe("who may use bot storage", () => {
  it("people of every role are refused, changing nothing", async () => {
    for (const user of Object.values(people)) {
      for (const call of [() => get(user), () => put(user, { a: "b" }), () => remove(user)])
        await expectRejectedUnchanged(s, call, 400, "PERMISSION_DENIED", "Must be a bot user");
    }
  });

  it("generic and outgoing webhook bots use it; an incoming webhook bot's key is refused", async () => {
    for (const bot of [genericBot, outgoingBot]) {
      expect((await put(bot, { greeting: `hi from ${bot.email}` })).body).toMatchObject({ result: "success" });
      expect((await get(bot)).body).toMatchObject({ storage: { greeting: `hi from ${bot.email}` } });
    }
    await expectRejectedUnchanged(
      s,
      () => put(hookBot, { a: "b" }),
      401,
      "UNAUTHORIZED",
      "This API is not available to incoming webhook bots.",
    );
  });

  it("each bot sees only its own storage, in this realm and another", async () => {
    expect((await get(otherBot)).body).toMatchObject({ storage: {} });
    await expectRejectedUnchanged(s, () => get(otherBot, ["greeting"]), 400, "BAD_REQUEST", "Key does not exist.");
    const bee = await rawRequest(
      s.base,
      "GET",
      "/bot_storage",
      { Host: "bee.localhost", Authorization: basicAuth(s.t.store.getUser(foreignBot.id)) },
      undefined,
    );
    expect(bee.body).toMatchObject({ result: "success", storage: {} });
  });
});

describe("reading, writing and removing", () => {
  it("sets several keys, overwrites one, reads some or all", async () => {
    await put(otherBot, { a: "1", b: "2", c: "3" });
    await put(otherBot, { b: "two" });
    expect((await get(otherBot, ["a", "b"])).body["storage"]).toEqual({ a: "1", b: "two" });
    expect((await get(otherBot)).body["storage"]).toEqual({ a: "1", b: "two", c: "3" });
    expect((await get(otherBot, [])).body["storage"]).toEqual({ a: "1", b: "two", c: "3" });
  });

  it("removing a key that is not stored removes nothing; then some keys; then all", async () => {
    await expectRejectedUnchanged(s, () => remove(otherBot, ["a", "zzz"]), 400, "BAD_REQUEST", "Key does not exist.");
    await expectRejectedUnchanged(s, () => remove(otherBot, ["a", "a"]), 400, "BAD_REQUEST", "Key does not exist.");
    expect((await remove(otherBot, ["a"])).body).toMatchObject({ result: "success" });
    expect((await get(otherBot)).body["storage"]).toEqual({ b: "two", c: "3" });
    expect((await remove(otherBot)).body).toMatchObject({ result: "success" });
    expect((await get(otherBot)).body["storage"]).toEqual({});
  });

  it("refuses a storage that is not a dict of strings, and a missing one", async () => {
    await expectRejectedUnchanged(s, () => put(otherBot, { a: 1 }), 400, "BAD_REQUEST", 'storage["a"] is not a string');
    await expectRejectedUnchanged(s, () => put(otherBot, ["a"]), 400, "BAD_REQUEST", /^storage is not a/);
    await expectRejectedUnchanged(
      s,
      () => s.call(otherBot, "PUT", "/bot_storage", {}),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'storage' argument",
    );
    const keys = encodeParams({ keys: [1] }).toString();
    const r = await s.call(otherBot, "GET", `/bot_storage?${keys}`);
    expect(r.body).toMatchObject({ code: "BAD_REQUEST", msg: "keys[0] is not a string" });
  });
});

describe("the size limit", () => {
  it("counts keys and values in characters, a replaced value once, and refuses what goes past it", async () => {
    const { store } = s.t;
    const bot = store.createUser({
      realmId: s.seed.realm.id,
      email: "big-bot@test.dev",
      fullName: "Big Bot",
      bot: { type: 1, ownerId: s.seed.bob.id },
    });
    // 10 values of a million characters less their keys' length: exactly at the limit.
    const big: Record<string, string> = {};
    for (let i = 0; i < 10; i++) big[`k${i}`] = "x".repeat(USER_STATE_SIZE_LIMIT / 10 - 2);
    store.setBotStorage(bot.id, big);
    await expectRejectedUnchanged(
      s,
      () => put(bot, { z: "" }),
      400,
      "BAD_REQUEST",
      `Request exceeds storage limit by 1 characters. The limit is ${USER_STATE_SIZE_LIMIT} characters.`,
    );
    // A value replaced by one as long fits: an emoji (two UTF-16 units) is one character, as Python counts.
    store.setBotStorage(bot.id, { k0: "🐝".repeat(USER_STATE_SIZE_LIMIT / 10 - 2) });
    expect((await put(bot, { k0: "🐝".repeat(100) })).body).toMatchObject({ result: "success" });
    expect((await put(bot, { k1: "y".repeat(200), z: "w" })).body).toMatchObject({ result: "success" });
    const stored = (await get(bot, ["k0", "z"])).body["storage"] as Record<string, string>;
    expect(stored["k0"]).toBe("🐝".repeat(100));
    expect(stored["z"]).toBe("w");
  });
});
