/**
 * Alert words over HTTP (Zulip's get/add/remove-alert-words): every kind of user keeps
 * their own list, each call answers the whole list, alert_words events to the user
 * alone and register's alert_words; bad input changes nothing. The has_alert_word flag
 * at send (message events, is:alerted) only for receivers whose word the content
 * holds, and re-derived at a content edit (update_message flags).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { decodeAlertWordsEvent } from "../support/flutter-decoders.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";

let server: TestServer;
beforeEach(async () => {
  server = await startServer();
});
afterEach(() => server.close());

type Ev = Record<string, unknown> & { type: string };

const words = (user: User) => server.call(user, "GET", "/users/me/alert_words");
const add = (user: User, list: unknown) =>
  server.call(user, "POST", "/users/me/alert_words", { alert_words: JSON.stringify(list) });
const remove = (user: User, list: unknown) =>
  server.call(user, "DELETE", "/users/me/alert_words", { alert_words: JSON.stringify(list) });
const queue = async (user: User, types: string[]) =>
  (await server.call(user, "POST", "/register", { event_types: types })).body["queue_id"] as string;
const events = async (user: User, q: string) =>
  (await server.call(user, "GET", "/events", { queue_id: q, last_event_id: -1, dont_block: true })).body[
    "events"
  ] as Ev[];
const send = async (user: User, params: Record<string, unknown>) => {
  const res = await server.call(user, "POST", "/messages", params);
  expect(res.status).toBe(200);
  return res.body["id"] as number;
};
const alertedIds = async (user: User) =>
  (
    (
      await server.call(user, "GET", "/messages", {
        anchor: "newest",
        num_before: 100,
        num_after: 0,
        narrow: JSON.stringify([{ operator: "is", operand: "alerted" }]),
      })
    ).body["messages"] as { id: number }[]
  ).map((m) => m.id);

describe("GET/POST/DELETE /users/me/alert_words", () => {
  it("keeps each user's own list (guests and bots too), as typed, distinct case-insensitively", async () => {
    const { owner, alice, guest } = server.seed;
    const bot = server.t.store.createUser({
      realmId: owner.realmId,
      email: "helper-bot@test.dev",
      fullName: "Helper",
      bot: { type: 1, ownerId: alice.id },
    });
    for (const user of [alice, guest, bot]) {
      expect((await words(user)).body).toEqual({ result: "success", msg: "", alert_words: [] });
      expect((await add(user, [" Deploy ", "on call", "", "  "])).body["alert_words"]).toEqual(["Deploy", "on call"]);
      expect((await add(user, ["deploy", "PAGER", "pager"])).body["alert_words"]).toEqual([
        "Deploy",
        "on call",
        "pager",
      ]);
      expect((await remove(user, ["DEPLOY", "missing"])).body["alert_words"]).toEqual(["on call", "pager"]);
      expect((await words(user)).body["alert_words"]).toEqual(["on call", "pager"]);
      const snapshot = (await server.call(user, "POST", "/register", { fetch_event_types: ["alert_words"] })).body;
      expect(snapshot["alert_words"]).toEqual(["on call", "pager"]);
    }
    expect((await words(owner)).body["alert_words"]).toEqual([]);
  });

  it("sends the user (only) the whole list after each change", async () => {
    const { alice, bob } = server.seed;
    const qAlice = await queue(alice, ["alert_words"]);
    const qBob = await queue(bob, ["alert_words"]);
    await add(alice, ["one", "two"]);
    await remove(alice, ["one"]);
    const raw = await events(alice, qAlice);
    // zulip-flutter's decoder accepts them.
    expect(raw.map((e) => decodeAlertWordsEvent(e))).toEqual([["one", "two"], ["two"]]);
    const evs = raw.map(({ id: _id, ...e }) => e);
    expect(evs).toEqual([
      { type: "alert_words", alert_words: ["one", "two"] },
      { type: "alert_words", alert_words: ["two"] },
    ]);
    expect(await events(bob, qBob)).toEqual([]);
  });

  it("refuses a word over 100 characters and malformed lists, changing nothing", async () => {
    const { alice } = server.seed;
    await add(alice, ["kept"]);
    await expectRejectedUnchanged(
      server,
      () => add(alice, ["fine", "x".repeat(101)]),
      400,
      "BAD_REQUEST",
      "alert_words[1] is too long (limit: 100 characters)",
    );
    await expectRejectedUnchanged(server, () => add(alice, [1]), 400, "BAD_REQUEST", "alert_words[0] is not a string");
    await expectRejectedUnchanged(server, () => remove(alice, "kept"), 400, "BAD_REQUEST", "alert_words is not a list");
    const missing = await server.call(alice, "POST", "/users/me/alert_words", {});
    expect(missing.body["code"]).toBe("REQUEST_VARIABLE_MISSING");
    expect((await add(alice, ["y".repeat(100)])).status).toBe(200);
    expect((await words(alice)).body["alert_words"]).toEqual(["kept", "y".repeat(100)]);
  });
});

describe("the has_alert_word flag", () => {
  it("is set at send for receivers whose word the content holds, in message events and is:alerted", async () => {
    const { owner, alice, bob, guest } = server.seed;
    const { owner: stranger } = server.t.store.createRealm({
      subdomain: "elsewhere",
      name: "Elsewhere",
      owner: { email: "eve@else.dev", fullName: "Eve" },
    });
    await add(alice, ["Deploy"]);
    await add(bob, ["rollback"]);
    // The guest is not subscribed to general; the stranger's realm has a matcher of its own.
    await add(guest, ["deploy"]);
    server.t.store.addAlertWords(stranger.id, ["deploy"]);
    const qAlice = await queue(alice, ["message"]);
    const qBob = await queue(bob, ["message"]);
    const hit = await send(owner, { type: "stream", to: "general", topic: "t", content: "We DEPLOY at noon." });
    const miss = await send(owner, {
      type: "stream",
      to: "general",
      topic: "t",
      content: "redeploy\n```\ndeploy\n```",
    });
    const direct = await send(owner, { type: "direct", to: JSON.stringify([guest.id]), content: "deploy?" });
    const flagsOf = async (user: User, q: string) =>
      new Map((await events(user, q)).map((e) => [(e["message"] as { id: number }).id, e["flags"] as string[]]));
    const aliceFlags = await flagsOf(alice, qAlice);
    expect(aliceFlags.get(hit)).toContain("has_alert_word");
    expect(aliceFlags.get(miss)).not.toContain("has_alert_word");
    expect((await flagsOf(bob, qBob)).get(hit)).not.toContain("has_alert_word");
    expect(await alertedIds(alice)).toEqual([hit]);
    expect(await alertedIds(bob)).toEqual([]);
    expect(await alertedIds(guest)).toEqual([direct]);
    // Removing the word changes no stored flag; later messages no longer match.
    await remove(alice, ["deploy"]);
    await send(owner, { type: "stream", to: "general", topic: "t", content: "deploy again" });
    expect(await alertedIds(alice)).toEqual([hit]);
  });

  it("follows a content edit, with the new flags in the update_message event", async () => {
    const { owner, alice, bob } = server.seed;
    await add(alice, ["deploy"]);
    await add(bob, ["rollback"]);
    const id = await send(owner, { type: "stream", to: "general", topic: "t", content: "deploy soon" });
    expect(await alertedIds(alice)).toEqual([id]);
    const qAlice = await queue(alice, ["update_message"]);
    const qBob = await queue(bob, ["update_message"]);
    expect((await server.call(owner, "PATCH", `/messages/${id}`, { content: "rollback instead" })).status).toBe(200);
    expect(await alertedIds(alice)).toEqual([]);
    expect(await alertedIds(bob)).toEqual([id]);
    const [aliceEv] = await events(alice, qAlice);
    const [bobEv] = await events(bob, qBob);
    expect(aliceEv!["flags"]).not.toContain("has_alert_word");
    expect(bobEv!["flags"]).toContain("has_alert_word");
    await server.call(owner, "PATCH", `/messages/${id}`, { content: "deploy and rollback" });
    expect(await alertedIds(alice)).toEqual([id]);
    expect(await alertedIds(bob)).toEqual([id]);
  });
});
