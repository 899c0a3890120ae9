import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";
import { fingerprint } from "../support/snapshot.js";

let s: TestServer;
let dm: number;
let channelMsg: number;
let mention: number;
let emptyTopic: number;
beforeAll(async () => {
  s = await startServer();
  const { alice, bob } = s.seed;
  const send = async (params: Record<string, unknown>) =>
    (await s.call(alice, "POST", "/messages", params)).body["id"] as number;
  dm = await send({ type: "direct", to: [bob.id], content: "hello bob" });
  channelMsg = await send({ type: "stream", to: "general", topic: "lunch", content: "food?" });
  mention = await send({ type: "stream", to: "general", topic: "lunch", content: "@**Bob** ping" });
  emptyTopic = await send({ type: "stream", to: "general", topic: "", content: "no topic" });
  await s.call(bob, "POST", "/messages/flags", { messages: [channelMsg], op: "add", flag: "starred" });
});
afterAll(() => s.close());

const rejects = (
  call: () => Promise<{ status: number; body: Record<string, unknown> }>,
  status: number,
  code: string,
  msg: string | RegExp,
) => expectRejectedUnchanged(s, call, status, code, msg);

type Wire = Record<string, unknown>;

describe("POST /register", () => {
  it("returns the whole initial state without event_types", async () => {
    const { bob, alice, general } = s.seed;
    const before = fingerprint(s.t.store);
    const r = await s.call(bob, "POST", "/register");
    expect(r.status).toBe(200);
    const b = r.body;
    expect(fingerprint(s.t.store)).toBe(before);
    expect(typeof b["queue_id"]).toBe("string");
    expect(b).toMatchObject({
      last_event_id: -1,
      zulip_feature_level: 496,
      zulip_version: "12.0",
      idle_queue_timeout_secs: 600,
    });
    expect(typeof b["zulip_merge_base"]).toBe("string");
    // realm
    expect(b).toMatchObject({
      max_message_length: 10000,
      max_topic_length: 60,
      max_stream_name_length: 60,
      max_stream_description_length: 1024,
      max_file_upload_size_mib: 100,
      realm_empty_topic_display_name: "general chat",
      realm_topics_policy: "allow_empty_topic",
      realm_name: "Test",
    });
    expect(b["realm_uri"]).toBe(s.base.replace("127.0.0.1", "localhost"));
    expect(b["realm_url"]).toBe(b["realm_uri"]);
    // realm_user
    expect(b).toMatchObject({
      user_id: bob.id,
      email: "bob@test.dev",
      delivery_email: "bob@test.dev",
      full_name: "Bob",
      is_admin: false,
      is_owner: false,
      is_moderator: false,
      is_guest: false,
    });
    expect(typeof b["avatar_url"]).toBe("string");
    const users = b["realm_users"] as Wire[];
    expect(users.map((u) => u["user_id"])).toEqual([1, 2, 3, 4]);
    expect(users[0]!["avatar_url"]).toBeNull();
    expect(b["realm_non_active_users"]).toEqual([]);
    expect(b["cross_realm_bots"]).toEqual([]);
    // subscriptions
    const subs = b["subscriptions"] as Wire[];
    expect(subs.map((x) => x["name"])).toEqual(["general"]);
    expect(subs[0]!["subscribers"]).toBeUndefined();
    expect(b["unsubscribed"]).toEqual([]);
    expect(b["never_subscribed"]).toEqual([]);
    expect((b["streams"] as Wire[]).map((x) => x["name"])).toEqual(["general"]);
    expect(b["realm_default_streams"]).toEqual([]);
    expect((b["realm_user_groups"] as Wire[]).length).toBeGreaterThan(0);
    // messages
    expect(b["max_message_id"]).toBe(emptyTopic);
    expect(b["starred_messages"]).toEqual([channelMsg]);
    const unread = b["unread_msgs"] as Wire;
    expect(unread["count"]).toBe(4);
    expect(unread["pms"]).toEqual([{ other_user_id: alice.id, sender_id: alice.id, unread_message_ids: [dm] }]);
    expect(unread["streams"]).toEqual([
      { stream_id: general.id, topic: "lunch", unread_message_ids: [channelMsg, mention] },
      { stream_id: general.id, topic: "general chat", unread_message_ids: [emptyTopic] },
    ]);
    expect(unread["huddles"]).toEqual([]);
    expect(unread["mentions"]).toEqual([mention]);
    expect(unread["old_unreads_missing"]).toBe(false);
  });

  it("fetches only the requested sections", async () => {
    const { bob } = s.seed;
    const r = await s.call(bob, "POST", "/register", { event_types: ["message"] });
    expect(r.body["max_message_id"]).toBe(emptyTopic);
    expect(r.body["unread_msgs"]).toBeUndefined();
    expect(r.body["realm_users"]).toBeUndefined();
    expect(r.body["max_message_length"]).toBeUndefined();
    expect(r.body["subscriptions"]).toBeUndefined();
    const both = await s.call(bob, "POST", "/register", {
      event_types: ["message", "update_message_flags"],
      client_capabilities: { empty_topic_name: true },
    });
    const streams = (both.body["unread_msgs"] as Wire)["streams"] as Wire[];
    expect(streams.map((x) => x["topic"])).toEqual(["lunch", ""]);
    const fetchOnly = await s.call(bob, "POST", "/register", {
      event_types: ["message"],
      fetch_event_types: ["realm"],
    });
    expect(fetchOnly.body["max_message_id"]).toBeUndefined();
    expect(fetchOnly.body["max_message_length"]).toBe(10000);
    const unknown = await s.call(bob, "POST", "/register", { event_types: ["no_such_type"] });
    expect(unknown.status).toBe(200);
    expect(Object.keys(unknown.body).sort()).toEqual([
      "idle_queue_timeout_secs",
      "last_event_id",
      "msg",
      "queue_id",
      "result",
      "zulip_feature_level",
      "zulip_merge_base",
      "zulip_version",
    ]);
  });

  it("lists subscribers, unsubscribed and never_subscribed channels", async () => {
    const { owner, alice, bob, secret, general } = s.seed;
    await s.call(alice, "POST", "/users/me/subscriptions", { subscriptions: [{ name: "side" }] });
    await s.call(bob, "POST", "/users/me/subscriptions", { subscriptions: [{ name: "old" }] });
    await s.call(bob, "DELETE", "/users/me/subscriptions", { subscriptions: ["old"] });
    const r = await s.call(bob, "POST", "/register", { event_types: ["subscription"], include_subscribers: true });
    const subs = r.body["subscriptions"] as Wire[];
    expect(subs.find((x) => x["stream_id"] === general.id)!["subscribers"]).toEqual([owner.id, alice.id, bob.id]);
    expect((r.body["unsubscribed"] as Wire[]).map((x) => x["name"])).toEqual(["old"]);
    const never = r.body["never_subscribed"] as Wire[];
    expect(never.map((x) => x["name"])).toEqual(["side"]);
    expect(never[0]!["subscribers"]).toEqual([alice.id]);
    // An administrator sees private channels' metadata in never_subscribed.
    const admin = await s.call(owner, "POST", "/register", { event_types: ["subscription"] });
    const ownerNames = [...(admin.body["subscriptions"] as Wire[]), ...(admin.body["never_subscribed"] as Wire[])].map(
      (x) => x["stream_id"],
    );
    expect(ownerNames).toContain(secret.id);
    expect(r.body["realm_users"]).toBeUndefined();
  });

  it("accepts the other registration parameters and reports unknown ones", async () => {
    const r = await s.call(s.seed.alice, "POST", "/register", {
      event_types: ["realm_user"],
      apply_markdown: true,
      client_gravatar: false,
      slim_presence: true,
      all_public_streams: true,
      narrow: [["channel", "general"]],
      client_capabilities: { notification_settings_null: true, user_avatar_url_field_optional: false },
      idle_queue_timeout: "mobile",
      bogus: 1,
    });
    expect(r.status).toBe(200);
    expect(r.body["idle_queue_timeout_secs"]).toBe(43200);
    expect(r.body["ignored_parameters_unsupported"]).toEqual(["bogus"]);
    expect((r.body["realm_users"] as Wire[])[0]!["avatar_url"]).toEqual(expect.stringContaining("gravatar"));
    const other = await s.call(s.seed.alice, "POST", "/register", { event_types: [], idle_queue_timeout: 3600 });
    expect(other.body["idle_queue_timeout_secs"]).toBe(3600);
    expect(other.body["queue_id"]).not.toBe(r.body["queue_id"]);
  });

  it("puts deactivated users in realm_non_active_users and bots in realm_users", async () => {
    const { alice } = s.seed;
    const realmId = s.seed.realm.id;
    const bot = s.t.store.createUser({
      realmId,
      email: "reg-bot@test.dev",
      fullName: "Reg Bot",
      bot: { type: 2, ownerId: alice.id },
    });
    const gone = s.t.store.createUser({ realmId, email: "reg-gone@test.dev", fullName: "Reg Gone" });
    s.t.store.setUserActive(gone.id, false);
    const r = await s.call(alice, "POST", "/register", { event_types: ["realm_user"] });
    const active = r.body["realm_users"] as Wire[];
    expect(active.find((u) => u["user_id"] === bot.id)).toMatchObject({
      is_bot: true,
      bot_type: 2,
      bot_owner_id: alice.id,
    });
    expect(active.find((u) => u["user_id"] === gone.id)).toBeUndefined();
    expect((r.body["realm_non_active_users"] as Wire[]).map((u) => [u["user_id"], u["is_active"]])).toEqual([
      [gone.id, false],
    ]);
  });

  it("rejects bad input and credentials", async () => {
    const { alice } = s.seed;
    const reg = (params: Record<string, unknown>) => () => s.call(alice, "POST", "/register", params);
    await rejects(reg({ event_types: "message" }), 400, "BAD_REQUEST", "event_types is not valid JSON");
    await rejects(reg({ event_types: [1] }), 400, "BAD_REQUEST", "event_types[0] is not a string");
    await rejects(reg({ fetch_event_types: {} }), 400, "BAD_REQUEST", "fetch_event_types is not a list");
    await rejects(reg({ apply_markdown: "sure" }), 400, "BAD_REQUEST", "apply_markdown is not a boolean");
    await rejects(reg({ client_gravatar: "1" }), 400, "BAD_REQUEST", "client_gravatar is not a boolean");
    await rejects(reg({ include_subscribers: "some" }), 400, "BAD_REQUEST", "Invalid include_subscribers");
    await rejects(reg({ narrow: "[[" }), 400, "BAD_REQUEST", "narrow is not valid JSON");
    await rejects(reg({ narrow: {} }), 400, "BAD_REQUEST", "narrow is not a list");
    await rejects(
      reg({ client_capabilities: { empty_topic_name: "yes" } }),
      400,
      "BAD_REQUEST",
      'client_capabilities["empty_topic_name"] is not a boolean',
    );
    await rejects(reg({ idle_queue_timeout: 0 }), 400, "BAD_REQUEST", "idle_queue_timeout is too small");
    await rejects(reg({ idle_queue_timeout: "desktop" }), 400, "BAD_REQUEST", "Invalid idle_queue_timeout");
    await rejects(
      reg({ presence_history_limit_days: -1 }),
      400,
      "BAD_REQUEST",
      "presence_history_limit_days is too small",
    );
    const anon = await s.call(null, "POST", "/register");
    expect(anon.status).toBe(401);
    expect(anon.body).toEqual({
      result: "error",
      msg: "Not logged in: API authentication or user session required",
      code: "UNAUTHORIZED",
    });
    const wrong = await s.call(
      null,
      "POST",
      "/register",
      {},
      { headers: { Authorization: `Basic ${Buffer.from("alice@test.dev:short").toString("base64")}` } },
    );
    expect(wrong.status).toBe(401);
    expect(wrong.body["msg"]).toBe("Malformed API key");
  });
});
