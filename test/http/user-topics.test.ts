/**
 * Topic visibility policies (seed endpoint 7) and subscription properties over HTTP:
 * POST /user_topics with Zulip's access rules and errors, its effects on is:muted,
 * is:followed, in:home, unread counts and first_unread; Zulip's automatic policies on
 * send (automatic_new_visibility_policy, follow where mentioned); POST
 * /users/me/subscriptions/properties; register sections and events.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";
import { setUserSettings } from "../support/user-settings.js";

let server: TestServer;
beforeEach(async () => {
  server = await startServer();
});
afterEach(() => server.close());

type Ev = Record<string, unknown> & { type: string };

const setPolicy = (user: User, stream_id: number, topic: string, visibility_policy: number) =>
  server.call(user, "POST", "/user_topics", { stream_id, topic, visibility_policy });
const send = (user: User, to: string, topic: string, content = "hello") =>
  server.call(user, "POST", "/messages", { type: "stream", to, topic, content });
const topicsOf = async (user: User) =>
  (
    (await server.call(user, "POST", "/register", { fetch_event_types: ["user_topic"] })).body["user_topics"] as Record<
      string,
      unknown
    >[]
  ).map((t) => [t["stream_id"], t["topic_name"], t["visibility_policy"]]);
const ids = async (user: User, narrow: unknown[]) =>
  (
    (await server.call(user, "GET", "/messages", { anchor: "newest", num_before: 100, num_after: 0, narrow })).body[
      "messages"
    ] as { id: number }[]
  ).map((m) => m.id);
const queue = async (user: User, types: string[], extra: Record<string, unknown> = {}) =>
  (await server.call(user, "POST", "/register", { event_types: types, ...extra })).body["queue_id"] as string;
const events = async (user: User, q: string) =>
  (await server.call(user, "GET", "/events", { queue_id: q, last_event_id: -1, dont_block: true })).body[
    "events"
  ] as Ev[];

describe("POST /user_topics", () => {
  it("sets each policy, also for topics without messages, and removes it; register lists them; events to the user", async () => {
    const { bob, general } = server.seed;
    const q = await queue(bob, ["user_topic"]);
    for (const [topic, policy] of [
      ["quiet", 1],
      ["loud", 3],
      ["later", 2],
    ] as const)
      expect((await setPolicy(bob, general.id, topic, policy)).body).toEqual({ result: "success", msg: "" });
    expect(await topicsOf(bob)).toEqual(
      expect.arrayContaining([
        [general.id, "quiet", 1],
        [general.id, "loud", 3],
        [general.id, "later", 2],
      ]),
    );
    await setPolicy(bob, general.id, "later", 0);
    expect((await topicsOf(bob)).map((t) => t[1]).sort()).toEqual(["loud", "quiet"]);
    const evs = await events(bob, q);
    expect(evs.map((e) => [e["topic_name"], e["visibility_policy"]])).toEqual([
      ["quiet", 1],
      ["loud", 3],
      ["later", 2],
      ["later", 0],
    ]);
    expect(evs[0]).toMatchObject({ type: "user_topic", stream_id: general.id, last_updated: expect.any(Number) });
  });

  it("the empty-topic display name is the empty topic; setting the same policy again tells no one", async () => {
    const { bob, general } = server.seed;
    const q = await queue(bob, ["user_topic"], { client_capabilities: { empty_topic_name: true } });
    await setPolicy(bob, general.id, "general chat", 3);
    expect(await topicsOf(bob)).toEqual([[general.id, "general chat", 3]]);
    const modern = await server.call(bob, "POST", "/register", {
      fetch_event_types: ["user_topic"],
      client_capabilities: { empty_topic_name: true },
    });
    expect(modern.body["user_topics"]).toEqual([expect.objectContaining({ topic_name: "" })]);
    await setPolicy(bob, general.id, "", 3);
    await setPolicy(bob, general.id, "never had one", 0);
    expect((await events(bob, q)).map((e) => e["topic_name"])).toEqual([""]);
  });

  it("the deprecated muted_topics list reaches clients that asked for it and not user_topic", async () => {
    const { bob, general } = server.seed;
    const legacy = await queue(bob, ["muted_topics"]);
    const both = await queue(bob, ["muted_topics", "user_topic"]);
    await setPolicy(bob, general.id, "quiet", 1);
    await setPolicy(bob, general.id, "general chat", 1);
    await setPolicy(bob, general.id, "quiet", 3);
    const lists = (await events(bob, legacy)).map((e) =>
      (e["muted_topics"] as [string, string, number][]).map(([c, t]) => [c, t]),
    );
    expect(lists).toEqual([
      [["general", "quiet"]],
      [
        ["general", "quiet"],
        ["general", "general chat"],
      ],
      [["general", "general chat"]],
    ]);
    expect((await events(bob, both)).map((e) => e.type)).toEqual(["user_topic", "user_topic", "user_topic"]);
  });

  it("refuses what Zulip refuses, changing nothing", async () => {
    const { bob, guest, alice, owner, general, secret } = server.seed;
    const refuse = (user: User, params: Record<string, unknown>, code: string, msg: string) =>
      expectRejectedUnchanged(server, () => server.call(user, "POST", "/user_topics", params), 400, code, msg);
    await refuse(
      bob,
      { stream_id: general.id, topic: "t", visibility_policy: 4 },
      "BAD_REQUEST",
      "Invalid visibility_policy",
    );
    await refuse(
      bob,
      { stream_id: general.id, topic: "t", visibility_policy: -1 },
      "BAD_REQUEST",
      "Invalid visibility_policy",
    );
    await refuse(bob, { stream_id: secret.id, topic: "t", visibility_policy: 1 }, "BAD_REQUEST", "Invalid channel ID");
    await refuse(bob, { stream_id: 99999, topic: "t", visibility_policy: 1 }, "BAD_REQUEST", "Invalid channel ID");
    // A guest has no access to a public channel they are not in; an administrator none to private content.
    await refuse(
      guest,
      { stream_id: general.id, topic: "t", visibility_policy: 3 },
      "BAD_REQUEST",
      "Invalid channel ID",
    );
    await server.call(owner, "DELETE", "/users/me/subscriptions", { subscriptions: ["secret"] });
    await refuse(
      owner,
      { stream_id: secret.id, topic: "t", visibility_policy: 1 },
      "BAD_REQUEST",
      "Invalid channel ID",
    );
    await refuse(
      bob,
      { stream_id: general.id, topic: "x".repeat(61), visibility_policy: 1 },
      "BAD_REQUEST",
      "topic is too long (limit: 60 characters)",
    );
    await refuse(
      bob,
      { stream_id: general.id, topic: "a\u0000b", visibility_policy: 1 },
      "BAD_REQUEST",
      "Topic must not contain null bytes",
    );
    await refuse(
      bob,
      { stream_id: general.id, visibility_policy: 1 },
      "REQUEST_VARIABLE_MISSING",
      "Missing 'topic' argument",
    );
    await refuse(
      bob,
      { stream_id: "general", topic: "t", visibility_policy: 1 },
      "BAD_REQUEST",
      "stream_id is not an integer",
    );
    // Removing works where access was lost since (Zulip's access_stream_to_remove_visibility_policy_by_id).
    await setPolicy(alice, secret.id, "s", 1);
    await server.call(alice, "DELETE", "/users/me/subscriptions", { subscriptions: ["secret"] });
    await refuse(
      alice,
      { stream_id: secret.id, topic: "s", visibility_policy: 3 },
      "BAD_REQUEST",
      "Invalid channel ID",
    );
    expect((await setPolicy(alice, secret.id, "s", 0)).status).toBe(200);
    expect(await topicsOf(alice)).toEqual([]);
  });

  it("takes effect in is:muted, is:followed, in:home, unread counts and first_unread", async () => {
    const { alice, bob, general } = server.seed;
    await setUserSettings(server.t.store, alice.id, { automatically_follow_topics_policy: 4 });
    const quiet = (await send(alice, "general", "quiet")).body["id"] as number;
    const loud = (await send(alice, "general", "loud")).body["id"] as number;
    const plain = (await send(alice, "general", "plain")).body["id"] as number;
    await setPolicy(bob, general.id, "quiet", 1);
    await setPolicy(bob, general.id, "loud", 3);
    expect(await ids(bob, [{ operator: "is", operand: "muted" }])).toEqual([quiet]);
    expect(await ids(bob, [{ operator: "is", operand: "followed" }])).toEqual([loud]);
    expect(await ids(bob, [{ operator: "in", operand: "home" }])).toEqual([loud, plain]);
    const unread = (
      await server.call(bob, "POST", "/register", { fetch_event_types: ["message", "update_message_flags"] })
    ).body["unread_msgs"] as { count: number; streams: unknown[] };
    expect(unread.count).toBe(2);
    expect(unread.streams).toHaveLength(3);
    const first = await server.call(bob, "GET", "/messages", {
      anchor: "first_unread",
      num_before: 0,
      num_after: 1,
      narrow: [{ operator: "in", operand: "home" }],
    });
    expect(first.body["anchor"]).toBe(loud);
    // A muted channel hides everything but its unmuted and followed topics.
    await server.call(bob, "POST", "/users/me/subscriptions/properties", {
      subscription_data: [{ stream_id: general.id, property: "is_muted", value: true }],
    });
    expect(await ids(bob, [{ operator: "in", operand: "home" }])).toEqual([loud]);
    await setPolicy(bob, general.id, "plain", 2);
    expect(await ids(bob, [{ operator: "in", operand: "home" }])).toEqual([loud, plain]);
    const muted = (
      await server.call(bob, "POST", "/register", { fetch_event_types: ["message", "update_message_flags"] })
    ).body["unread_msgs"] as { count: number };
    expect(muted.count).toBe(2);
  });
});

describe("automatic policies on send", () => {
  it("starting a topic follows it (the default) and says so; later sends say nothing", async () => {
    const { alice, bob, general } = server.seed;
    const q = await queue(alice, ["user_topic"]);
    const first = await send(alice, "general", "new topic");
    expect(first.body["automatic_new_visibility_policy"]).toBe(3);
    expect((await send(alice, "general", "new topic")).body).not.toHaveProperty("automatic_new_visibility_policy");
    // Bob did not start it: no change under the default (follow topics I start).
    expect((await send(bob, "general", "new topic")).body).not.toHaveProperty("automatic_new_visibility_policy");
    expect(await topicsOf(bob)).toEqual([]);
    expect((await events(alice, q)).map((e) => [e["topic_name"], e["visibility_policy"]])).toEqual([["new topic", 3]]);
    expect(await topicsOf(alice)).toEqual([[general.id, "new topic", 3]]);
  });

  it("follow on send, unmute in a muted channel, never: as each user set", async () => {
    const { alice, bob, owner, general } = server.seed;
    await send(owner, "general", "t");
    setUserSettings(server.t.store, bob.id, { automatically_follow_topics_policy: 2 });
    expect((await send(bob, "general", "t")).body["automatic_new_visibility_policy"]).toBe(3);
    // Alice muted general: sending unmutes the topic (default: on send).
    await server.call(alice, "POST", "/users/me/subscriptions/properties", {
      subscription_data: [{ stream_id: general.id, property: "is_muted", value: true }],
    });
    expect((await send(alice, "general", "t")).body["automatic_new_visibility_policy"]).toBe(2);
    expect((await send(alice, "general", "t")).body).not.toHaveProperty("automatic_new_visibility_policy");
    // A followed topic is never downgraded to unmuted.
    await setPolicy(alice, general.id, "u", 3);
    await send(owner, "general", "u");
    expect((await send(alice, "general", "u")).body).not.toHaveProperty("automatic_new_visibility_policy");
    expect(await topicsOf(alice)).toEqual(
      expect.arrayContaining([
        [general.id, "t", 2],
        [general.id, "u", 3],
      ]),
    );
    // Never: nothing, even on a new topic.
    setUserSettings(server.t.store, owner.id, {
      automatically_follow_topics_policy: 4,
      automatically_unmute_topics_in_muted_streams_policy: 4,
    });
    expect((await send(owner, "general", "fresh")).body).not.toHaveProperty("automatic_new_visibility_policy");
    // Direct messages never change policies.
    expect(
      (await server.call(bob, "POST", "/messages", { type: "direct", to: [alice.id], content: "hi" })).body,
    ).not.toHaveProperty("automatic_new_visibility_policy");
  });

  it("mentioned subscribers follow unless they muted the topic or turned it off; bots never", async () => {
    const { alice, bob, owner, guest, general, realm } = server.seed;
    await send(owner, "general", "m");
    await setPolicy(alice, general.id, "m", 1);
    const q = await queue(bob, ["user_topic"]);
    await send(owner, "general", "m", "@**Alice** @**Bob** @**Gus Guest**");
    expect(await topicsOf(bob)).toEqual([[general.id, "m", 3]]);
    expect(await topicsOf(alice)).toEqual([[general.id, "m", 1]]);
    // The guest is not subscribed to general: nothing for them.
    expect(await topicsOf(guest)).toEqual([]);
    expect((await events(bob, q)).map((e) => e["visibility_policy"])).toEqual([3]);
    setUserSettings(server.t.store, bob.id, { automatically_follow_topics_where_mentioned: false });
    await send(owner, "general", "m2");
    await send(owner, "general", "m2", "@**Bob**");
    expect((await topicsOf(bob)).map((t) => t[1])).toEqual(["m"]);
    const bot = server.t.store.createUser({
      realmId: realm.id,
      email: "auto-bot@test.dev",
      fullName: "Auto",
      bot: { type: 1, ownerId: owner.id },
    });
    server.t.store.subscribe(owner.id, { channels: [{ name: "general" }], principals: [bot.id] });
    const byBot = await send(bot, "general", "bot topic");
    expect(byBot.body).not.toHaveProperty("automatic_new_visibility_policy");
    expect(await topicsOf(bot)).toEqual([]);
  });
});

describe("participation", () => {
  it("reacting follows (or unmutes in a muted channel) for users who chose participation; not by default", async () => {
    const { alice, bob, owner, general } = server.seed;
    const id = (await send(owner, "general", "p")).body["id"] as number;
    await server.call(bob, "POST", `/messages/${id}/reactions`, { emoji_name: "octopus" });
    expect(await topicsOf(bob)).toEqual([]);
    setUserSettings(server.t.store, bob.id, { automatically_follow_topics_policy: 1 });
    await server.call(bob, "DELETE", `/messages/${id}/reactions`, { emoji_name: "octopus" });
    await server.call(bob, "POST", `/messages/${id}/reactions`, { emoji_name: "octopus" });
    expect(await topicsOf(bob)).toEqual([[general.id, "p", 3]]);
    setUserSettings(server.t.store, alice.id, { automatically_unmute_topics_in_muted_streams_policy: 1 });
    await server.call(alice, "POST", `/messages/${id}/reactions`, { emoji_name: "octopus" });
    expect(await topicsOf(alice)).toEqual([]);
    await server.call(alice, "POST", "/users/me/subscriptions/properties", {
      subscription_data: [{ stream_id: general.id, property: "is_muted", value: true }],
    });
    await server.call(alice, "POST", `/messages/${id}/reactions`, { emoji_name: "heart" });
    expect(await topicsOf(alice)).toEqual([[general.id, "p", 2]]);
  });
});

describe("POST /users/me/subscriptions/properties", () => {
  it("changes each property; register shows them; events name each (muting also in_home_view)", async () => {
    const { bob, general } = server.seed;
    const q = await queue(bob, ["subscription"]);
    const data = [
      { stream_id: general.id, property: "color", value: "#abcdef" },
      { stream_id: general.id, property: "pin_to_top", value: true },
      { stream_id: general.id, property: "desktop_notifications", value: true },
      { stream_id: general.id, property: "audible_notifications", value: false },
      { stream_id: general.id, property: "push_notifications", value: true },
      { stream_id: general.id, property: "email_notifications", value: false },
      { stream_id: general.id, property: "wildcard_mentions_notify", value: true },
      { stream_id: general.id, property: "in_home_view", value: false },
    ];
    expect(
      (await server.call(bob, "POST", "/users/me/subscriptions/properties", { subscription_data: data })).body,
    ).toEqual({ result: "success", msg: "" });
    const subs = (await server.call(bob, "GET", "/users/me/subscriptions")).body["subscriptions"] as Record<
      string,
      unknown
    >[];
    expect(subs.find((s) => s["stream_id"] === general.id)).toMatchObject({
      color: "#abcdef",
      pin_to_top: true,
      desktop_notifications: true,
      audible_notifications: false,
      push_notifications: true,
      email_notifications: false,
      wildcard_mentions_notify: true,
      is_muted: true,
      in_home_view: false,
    });
    const evs = await events(bob, q);
    expect(evs.map((e) => [e["op"], e["stream_id"], e["property"], e["value"]])).toEqual([
      ["update", general.id, "color", "#abcdef"],
      ["update", general.id, "pin_to_top", true],
      ["update", general.id, "desktop_notifications", true],
      ["update", general.id, "audible_notifications", false],
      ["update", general.id, "push_notifications", true],
      ["update", general.id, "email_notifications", false],
      ["update", general.id, "wildcard_mentions_notify", true],
      ["update", general.id, "is_muted", true],
      ["update", general.id, "in_home_view", false],
    ]);
  });

  it("refuses bad changes with Zulip's texts and applies none of a list with one", async () => {
    const { bob, guest, general, secret } = server.seed;
    const refuse = (user: User, data: unknown, code: string, msg: string) =>
      expectRejectedUnchanged(
        server,
        () => server.call(user, "POST", "/users/me/subscriptions/properties", { subscription_data: data }),
        400,
        code,
        msg,
      );
    const ok = { stream_id: general.id, property: "pin_to_top", value: true };
    await refuse(
      bob,
      [ok, { stream_id: general.id, property: "color", value: "blue" }],
      "BAD_REQUEST",
      "color is not a valid hex color code",
    );
    await refuse(
      bob,
      [ok, { stream_id: general.id, property: "color", value: true }],
      "BAD_REQUEST",
      "color is not a string",
    );
    await refuse(
      bob,
      [ok, { stream_id: general.id, property: "is_muted", value: "yes" }],
      "BAD_REQUEST",
      "is_muted is not a boolean",
    );
    await refuse(
      bob,
      [ok, { stream_id: general.id, property: "name", value: "x" }],
      "BAD_REQUEST",
      "Unknown subscription property: name",
    );
    await refuse(
      bob,
      [ok, { stream_id: secret.id, property: "pin_to_top", value: true }],
      "BAD_REQUEST",
      "Invalid channel ID",
    );
    await refuse(
      bob,
      [ok, { stream_id: 99999, property: "pin_to_top", value: true }],
      "BAD_REQUEST",
      "Invalid channel ID",
    );
    await refuse(guest, [ok], "BAD_REQUEST", "Invalid channel ID");
    await server.call(bob, "DELETE", "/users/me/subscriptions", { subscriptions: ["general"] });
    await refuse(bob, [ok], "BAD_REQUEST", `Not subscribed to channel ID ${general.id}`);
    await refuse(
      bob,
      [{ stream_id: general.id, property: "pin_to_top" }],
      "BAD_REQUEST",
      'subscription_data[0]["value"] is not a boolean',
    );
    await refuse(bob, "nope", "BAD_REQUEST", "subscription_data is not valid JSON");
    await expectRejectedUnchanged(
      server,
      () => server.call(bob, "POST", "/users/me/subscriptions/properties", {}),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'subscription_data' argument",
    );
  });
});

describe("PATCH /users/me/subscriptions/muted_topics (deprecated)", () => {
  const legacy = (user: User, params: Record<string, unknown>) =>
    server.call(user, "PATCH", "/users/me/subscriptions/muted_topics", params);

  it("mutes by channel ID or name and unmutes, with user_topic events; a followed topic is not unmuted", async () => {
    const { bob, general } = server.seed;
    const q = await queue(bob, ["user_topic"]);
    expect((await legacy(bob, { stream_id: general.id, topic: "quiet", op: "add" })).body).toEqual({
      result: "success",
      msg: "",
    });
    expect((await legacy(bob, { stream: "general", topic: "general chat", op: "add" })).status).toBe(200);
    expect(await topicsOf(bob)).toEqual(
      expect.arrayContaining([
        [general.id, "quiet", 1],
        [general.id, "general chat", 1],
      ]),
    );
    expect((await legacy(bob, { stream: "general", topic: "quiet", op: "remove" })).status).toBe(200);
    expect((await legacy(bob, { stream_id: general.id, topic: "general chat", op: "remove" })).status).toBe(200);
    expect(await topicsOf(bob)).toEqual([]);
    expect((await events(bob, q)).map((e) => [e["topic_name"], e["visibility_policy"]])).toEqual([
      ["quiet", 1],
      ["general chat", 1],
      ["quiet", 0],
      ["general chat", 0],
    ]);
    await setPolicy(bob, general.id, "loud", 3);
    await expectRejectedUnchanged(
      server,
      () => legacy(bob, { stream_id: general.id, topic: "loud", op: "remove" }),
      400,
      "BAD_REQUEST",
      "Topic is not muted",
    );
    expect(await topicsOf(bob)).toEqual([[general.id, "loud", 3]]);
  });

  it("refuses with Zulip's legacy errors, changing nothing", async () => {
    const { bob, general, secret } = server.seed;
    await legacy(bob, { stream_id: general.id, topic: "quiet", op: "add" });
    const refuse = (params: Record<string, unknown>, code: string, msg: string) =>
      expectRejectedUnchanged(server, () => legacy(bob, params), 400, code, msg);
    await refuse({ stream_id: general.id, topic: "quiet", op: "add" }, "BAD_REQUEST", "Topic already muted");
    await refuse({ stream: "general", topic: "Quiet", op: "add" }, "BAD_REQUEST", "Topic already muted");
    await refuse({ stream_id: general.id, topic: "other", op: "remove" }, "BAD_REQUEST", "Topic is not muted");
    await refuse({ stream_id: secret.id, topic: "t", op: "add" }, "BAD_REQUEST", "Invalid channel ID");
    await refuse({ stream_id: 99999, topic: "t", op: "add" }, "BAD_REQUEST", "Invalid channel ID");
    await refuse({ stream: "secret", topic: "t", op: "add" }, "BAD_REQUEST", "Invalid channel name 'secret'");
    await refuse({ stream: "nowhere", topic: "t", op: "add" }, "BAD_REQUEST", "Invalid channel name 'nowhere'");
    await refuse({ stream_id: 99999, topic: "quiet", op: "remove" }, "BAD_REQUEST", "Topic is not muted");
    await refuse({ stream: "nowhere", topic: "quiet", op: "remove" }, "BAD_REQUEST", "Topic is not muted");
    await refuse({ topic: "t", op: "add" }, "REQUEST_VARIABLE_MISSING", "Missing 'stream_id' argument");
    await refuse(
      { stream_id: general.id, stream: "general", topic: "t", op: "add" },
      "BAD_REQUEST",
      "Unsupported parameter combination: stream_id, stream",
    );
    await refuse({ stream_id: general.id, topic: "t", op: "toggle" }, "BAD_REQUEST", "Invalid op");
    await refuse(
      { stream_id: general.id, topic: "x".repeat(61), op: "add" },
      "BAD_REQUEST",
      "topic is too long (limit: 60 characters)",
    );
    expect(await topicsOf(bob)).toEqual([[general.id, "quiet", 1]]);
  });
});
