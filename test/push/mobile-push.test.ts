/**
 * Mobile push end to end, against a fake bouncer on loopback: client devices, E2EE
 * registration (forwarded to the bouncer through the outbox), notifications decided
 * by Zulip's rules and opened here with each device's key, removals on read, the test
 * notification's errors, and an outbox that loses nothing while the bouncer is down,
 * hangs, or the server restarts.
 */
import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG, type ServerConfig } from "../../src/config/index.js";
import type { Message, User } from "../../src/engine/types.js";
import { internals } from "../../src/engine/internal.js";
import { BouncerClient } from "../../src/push/bouncer-client.js";
import { PushSender } from "../../src/push/sender.js";
import { FakeBouncer, openPayload, type BouncerRequest } from "../support/fake-bouncer.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";
import { seedRealm, tempStore } from "../support/temp-store.js";

const ORG = { ZULIP_ORG_ID: "0b3c5a5e-org", ZULIP_ORG_KEY: "org-secret" };
const AUTH = `Basic ${Buffer.from(`${ORG.ZULIP_ORG_ID}:${ORG.ZULIP_ORG_KEY}`).toString("base64")}`;

let bouncer: FakeBouncer;
let s: TestServer;
let sender: PushSender;
const clientFor = (url: string) =>
  new BouncerClient({ url, orgId: ORG.ZULIP_ORG_ID, orgKey: ORG.ZULIP_ORG_KEY, timeoutMs: 300 });

beforeAll(async () => {
  bouncer = new FakeBouncer();
  await bouncer.up();
  const config: ServerConfig = { ...DEFAULT_CONFIG, PUSH_NOTIFICATION_BOUNCER_URL: bouncer.url, ...ORG };
  s = await startServer({ config, bouncerTimeoutMs: 300 });
  sender = new PushSender(s.t.store, clientFor(bouncer.url), () => s.server.baseUrl, {
    initialBackoffMs: 5,
    maxBackoffMs: 20,
  });
});
afterAll(async () => {
  await sender.stop();
  s.close();
  await bouncer.down();
});
beforeEach(async () => {
  bouncer.mode = { kind: "ok" };
  await sender.runOnce();
  bouncer.requests.length = 0;
});

interface TestDevice {
  readonly id: number;
  key: string;
  keyId: number;
  tokenId: string;
  readonly kind: "fcm" | "apns";
}

const newKey = () => Buffer.concat([Buffer.from([0x31]), randomBytes(32)]).toString("base64");
const newTokenId = () => randomBytes(8).toString("base64");

async function newDevice(user: User): Promise<number> {
  const r = await s.call(user, "POST", "/register_client_device");
  expect(r.status).toBe(200);
  return r.body["device_id"] as number;
}

/** A device registered for push and confirmed by the bouncer. */
async function pushDevice(user: User, kind: "fcm" | "apns" = "fcm"): Promise<TestDevice> {
  const device: TestDevice = {
    id: await newDevice(user),
    key: newKey(),
    keyId: randomBytes(4).readUInt32BE(),
    tokenId: newTokenId(),
    kind,
  };
  const r = await s.call(user, "POST", "/mobile_push/register", {
    device_id: device.id,
    push_key: device.key,
    push_key_id: device.keyId,
    token_kind: kind,
    token_id: device.tokenId,
    bouncer_public_key: "cHVibGljLWtleQ==",
    encrypted_push_registration: "c2VhbGVkLXJlZ2lzdHJhdGlvbg==",
  });
  expect(r.body).toEqual({ result: "success", msg: "" });
  await sender.runOnce();
  return device;
}

/** The plaintext payloads the bouncer received for a device, in order. */
function payloadsFor(
  device: TestDevice,
  requests: readonly BouncerRequest[] = bouncer.to("push/e2ee/notify"),
): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const request of requests) {
    for (const item of request.body["push_requests"] as Record<string, unknown>[]) {
      if (item["token_id"] !== device.tokenId) continue;
      const payload = item["payload"] as Record<string, unknown>;
      expect(payload["push_key_id"]).toBe(device.keyId);
      out.push(openPayload(device.key, payload["encrypted_data"] as string));
    }
  }
  return out;
}

const avatar = (email: string) =>
  `https://secure.gravatar.com/avatar/${createHash("md5").update(email).digest("hex")}?d=identicon&version=1`;
const realmUrl = () => new URL(s.server.baseUrl).origin;
const dateSent = (id: number) => (internals(s.t.store).tables.messages.get(id) as Message).dateSent;

async function send(user: User, params: Record<string, unknown>): Promise<number> {
  const r = await s.call(user, "POST", "/messages", params);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body["id"] as number;
}

describe("client devices", () => {
  it("register_client_device, register's devices, device events, remove_client_device", async () => {
    const { alice } = s.seed;
    const q = (await s.call(alice, "POST", "/register", { event_types: ["device"] })).body["queue_id"] as string;
    const id = await newDevice(alice);
    const state = await s.call(alice, "POST", "/register", { fetch_event_types: ["device"] });
    expect((state.body["devices"] as Record<string, unknown>)[String(id)]).toEqual({
      push_key_id: null,
      push_token_id: null,
      pending_push_token_id: null,
      push_token_last_updated_timestamp: null,
      push_registration_error_code: null,
    });
    const key = newKey();
    const tokenId = newTokenId();
    await s.call(alice, "POST", "/mobile_push/register", {
      device_id: id,
      push_key: key,
      push_key_id: 7,
      token_kind: "apns",
      token_id: tokenId,
      bouncer_public_key: "a2V5",
      encrypted_push_registration: "cmVn",
    });
    await sender.runOnce();
    // The token group went to the bouncer with the realm's UUID and this server's registration.
    const [registration] = bouncer.to("push/e2ee/register");
    expect(registration!.authorization).toBe(AUTH);
    expect(registration!.userAgent).toMatch(/^ZulipServer\//);
    expect(registration!.contentType).toBe("application/json");
    expect(registration!.body).toEqual({
      realm_uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      token_id: tokenId,
      bouncer_public_key: "a2V5",
      encrypted_push_registration: "cmVn",
    });
    await s.call(alice, "POST", "/remove_client_device", { device_id: id });
    const events = (
      (await s.call(alice, "GET", "/events", { queue_id: q, last_event_id: -1, dont_block: true })).body[
        "events"
      ] as Record<string, unknown>[]
    ).filter((e) => e["type"] === "device");
    const updated = events[1]!["push_token_last_updated_timestamp"];
    expect(typeof updated).toBe("number");
    expect(events.map(({ id: _, ...e }) => e)).toEqual([
      { type: "device", op: "add", device_id: id },
      {
        type: "device",
        op: "update",
        device_id: id,
        push_key_id: 7,
        pending_push_token_id: tokenId,
        push_token_last_updated_timestamp: updated,
        push_registration_error_code: null,
      },
      { type: "device", op: "update", device_id: id, push_token_id: tokenId, pending_push_token_id: null },
      { type: "device", op: "remove", device_id: id },
    ]);
    expect(
      (await s.call(alice, "POST", "/register", { fetch_event_types: ["device"] })).body["devices"],
    ).not.toHaveProperty(String(id));
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "POST", "/remove_client_device", { device_id: id }),
      400,
      "BAD_REQUEST",
      "Invalid `device_id`",
    );
  });

  it("a deactivated user's devices go with them", async () => {
    const t = tempStore();
    try {
      const seed = seedRealm(t.store);
      t.store.registerClientDevice(seed.bob.id);
      t.store.setUserActive(seed.bob.id, false);
      expect(t.store.devices(seed.bob.id)).toEqual([]);
    } finally {
      t.cleanup();
    }
  });
});

describe("POST /mobile_push/register", () => {
  it("refuses every bad parameter with Zulip's error and changes nothing", async () => {
    const { alice, bob } = s.seed;
    const id = await newDevice(alice);
    const bobs = await newDevice(bob);
    const key = newKey();
    const token = {
      token_kind: "fcm",
      token_id: newTokenId(),
      bouncer_public_key: "a2V5",
      encrypted_push_registration: "cmVn",
    };
    const reject = (params: Record<string, unknown>, msg: string, user: User = alice) =>
      expectRejectedUnchanged(s, () => s.call(user, "POST", "/mobile_push/register", params), 400, "BAD_REQUEST", msg);
    await reject({ device_id: bobs, push_key: key, push_key_id: 1, ...token }, "Invalid `device_id`");
    await reject({ device_id: 1_999_999, push_key: key, push_key_id: 1, ...token }, "Invalid `device_id`");
    await reject(
      { device_id: id },
      "Missing parameters: must provide either all push key fields, all token fields, or both.",
    );
    await reject(
      { device_id: id, push_key: key, token_kind: "fcm" },
      "Missing parameters: must provide either all push key fields, all token fields, or both.",
    );
    await reject({ device_id: id, push_key: key, push_key_id: 1 }, "No push registration exists to rotate key for.");
    await reject({ device_id: id, ...token }, "No push registration exists to rotate token for.");
    const short = Buffer.concat([Buffer.from([0x31]), randomBytes(31)]).toString("base64");
    const wrongSystem = Buffer.concat([Buffer.from([0x32]), randomBytes(32)]).toString("base64");
    await reject({ device_id: id, push_key: short, push_key_id: 1, ...token }, "Invalid `push_key`");
    await reject({ device_id: id, push_key: wrongSystem, push_key_id: 1, ...token }, "Invalid `push_key`");
    await reject({ device_id: id, push_key: "not base64!", push_key_id: 1, ...token }, "Invalid `push_key`");
    await reject(
      { device_id: id, push_key: key, push_key_id: 1, ...token, token_id: "***" },
      "`token_id` is not Base64 encoded",
    );
    await reject(
      { device_id: id, push_key: key, push_key_id: 1, ...token, token_id: randomBytes(9).toString("base64") },
      "Invalid `token_id`",
    );
    await reject({ device_id: id, push_key: key, push_key_id: -1, ...token }, "push_key_id is too small");
    await reject({ device_id: id, push_key: key, push_key_id: 2 ** 32, ...token }, "push_key_id is too large");
    await reject({ device_id: id, push_key: key, push_key_id: 1, ...token, token_kind: "gcm" }, "Invalid token_kind");
    await reject({ device_id: "one", push_key: key, push_key_id: 1, ...token }, "device_id is not an integer");
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "POST", "/mobile_push/register", { push_key: key, push_key_id: 1 }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'device_id' argument",
    );
    // A registration the bouncer has not answered yet.
    bouncer.mode = { kind: "error", status: 503 };
    await s.call(alice, "POST", "/mobile_push/register", { device_id: id, push_key: key, push_key_id: 1, ...token });
    await reject(
      { device_id: id, push_key: key, push_key_id: 1, ...token, token_id: newTokenId() },
      "A registration for the device already in progress.",
    );
    bouncer.mode = { kind: "ok" };
    await sender.runOnce();
  });

  it("is PUSH_SERVICE_NOT_CONFIGURED without a bouncer", async () => {
    const plain = await startServer();
    try {
      const id = plain.t.store.registerClientDevice(plain.seed.alice.id);
      const params = {
        device_id: id,
        push_key: newKey(),
        push_key_id: 1,
        token_kind: "fcm",
        token_id: newTokenId(),
        bouncer_public_key: "a2V5",
        encrypted_push_registration: "cmVn",
      };
      await expectRejectedUnchanged(
        plain,
        () => plain.call(plain.seed.alice, "POST", "/mobile_push/register", params),
        400,
        "PUSH_SERVICE_NOT_CONFIGURED",
        "Server is not configured to use push notification service.",
      );
    } finally {
      plain.close();
    }
  });

  it("records the bouncer's refusal of a registration on the device", async () => {
    const { owner } = s.seed;
    const id = await newDevice(owner);
    bouncer.mode = { kind: "refuse", status: 400, code: "INVALID_BOUNCER_PUBLIC_KEY" };
    await s.call(owner, "POST", "/mobile_push/register", {
      device_id: id,
      push_key: newKey(),
      push_key_id: 3,
      token_kind: "fcm",
      token_id: newTokenId(),
      bouncer_public_key: "b2xk",
      encrypted_push_registration: "cmVn",
    });
    await sender.runOnce();
    const device = (await s.call(owner, "POST", "/register", { fetch_event_types: ["device"] })).body[
      "devices"
    ] as Record<string, Record<string, unknown>>;
    expect(device[String(id)]!["push_registration_error_code"]).toBe("INVALID_BOUNCER_PUBLIC_KEY");
    expect(device[String(id)]!["push_token_id"]).toBeNull();
  });

  it("rotates the key (notifications use the new one) and the token (sent to the bouncer again)", async () => {
    const { alice, bob } = s.seed;
    const device = await pushDevice(bob);
    const key = newKey();
    expect(
      (await s.call(bob, "POST", "/mobile_push/register", { device_id: device.id, push_key: key, push_key_id: 99 }))
        .status,
    ).toBe(200);
    device.key = key;
    device.keyId = 99;
    expect(bouncer.to("push/e2ee/register")).toHaveLength(1);
    const tokenId = newTokenId();
    expect(
      (
        await s.call(bob, "POST", "/mobile_push/register", {
          device_id: device.id,
          token_kind: "fcm",
          token_id: tokenId,
          bouncer_public_key: "bmV3",
          encrypted_push_registration: "cm90YXRlZA==",
        })
      ).status,
    ).toBe(200);
    await sender.runOnce();
    expect(bouncer.to("push/e2ee/register").map((r) => r.body["token_id"])).toEqual([device.tokenId, tokenId]);
    device.tokenId = tokenId;
    // The same token again changes nothing and sends nothing.
    await s.call(bob, "POST", "/mobile_push/register", {
      device_id: device.id,
      token_kind: "fcm",
      token_id: tokenId,
      bouncer_public_key: "bmV3",
      encrypted_push_registration: "cm90YXRlZA==",
    });
    await sender.runOnce();
    expect(bouncer.to("push/e2ee/register")).toHaveLength(2);
    const id = await send(alice, { type: "direct", to: JSON.stringify([bob.id]), content: "after rotation" });
    await sender.runOnce();
    expect(payloadsFor(device).map((p) => p["message_id"])).toEqual([id]);
    await s.call(bob, "POST", "/remove_client_device", { device_id: device.id });
  });
});

describe("notifications", () => {
  let bobPhone: TestDevice;
  let bobTablet: TestDevice;
  let alicePhone: TestDevice;
  beforeAll(async () => {
    alicePhone = await pushDevice(s.seed.alice, "fcm");
    bobPhone = await pushDevice(s.seed.bob, "fcm");
    bobTablet = await pushDevice(s.seed.bob, "apns");
  });

  it("a direct message: Zulip's payload, encrypted for each device, in Zulip's request shape", async () => {
    const { alice, bob } = s.seed;
    const id = await send(alice, { type: "direct", to: JSON.stringify([bob.id]), content: "Hello **Bob** &amp; co" });
    await sender.runOnce();
    const [request] = bouncer.to("push/e2ee/notify");
    expect(request!.authorization).toBe(AUTH);
    const items = request!.body["push_requests"] as Record<string, unknown>[];
    expect(request!.body["realm_uuid"]).toEqual(expect.stringMatching(/^[0-9a-f-]{36}$/));
    expect(items.find((i) => i["token_id"] === bobPhone.tokenId)).toMatchObject({
      fcm_priority: "high",
      payload: { push_key_id: bobPhone.keyId },
    });
    expect(items.find((i) => i["token_id"] === bobTablet.tokenId)).toMatchObject({
      http_headers: { apns_priority: 10, apns_push_type: "alert" },
      payload: { push_key_id: bobTablet.keyId, aps: { "mutable-content": 1, alert: { title: "New notification" } } },
    });
    const expected = {
      content: "Hello Bob & co",
      message_id: id,
      realm_name: "Test",
      realm_url: realmUrl(),
      recipient_type: "direct",
      recipient_user_ids: [alice.id, bob.id].sort((a, b) => a - b),
      sender_avatar_url: avatar("alice@test.dev"),
      sender_full_name: "Alice",
      sender_id: alice.id,
      time: dateSent(id),
      type: "message",
      user_id: bob.id,
    };
    expect(payloadsFor(bobPhone)).toEqual([expected]);
    expect(payloadsFor(bobTablet)).toEqual([expected]);
    // The sender gets none, though she has a device too.
    expect(payloadsFor(alicePhone)).toEqual([]);
    expect(items).toHaveLength(2);
  });

  it("a channel mention; a plain channel message notifies no one (channel push is off by default)", async () => {
    const { alice, bob } = s.seed;
    await send(alice, { type: "stream", to: "general", topic: "quiet", content: "nothing for phones" });
    const id = await send(alice, { type: "stream", to: "general", topic: "ping", content: "look @**Bob**" });
    await sender.runOnce();
    expect(payloadsFor(bobPhone)).toEqual([
      {
        channel_id: s.seed.general.id,
        channel_name: "general",
        content: "look @Bob",
        message_id: id,
        realm_name: "Test",
        realm_url: realmUrl(),
        recipient_type: "channel",
        sender_avatar_url: avatar("alice@test.dev"),
        sender_full_name: "Alice",
        sender_id: alice.id,
        time: dateSent(id),
        topic: "ping",
        type: "message",
        user_id: bob.id,
      },
    ]);
  });

  it("a group mention names the group; a direct mention as well does not", async () => {
    const { alice, bob } = s.seed;
    const group = s.t.store.createGroup(alice.id, { name: "oncall", members: [bob.id] });
    const id = await send(alice, { type: "stream", to: "general", topic: "pager", content: "@*oncall* please" });
    const both = await send(alice, {
      type: "stream",
      to: "general",
      topic: "pager",
      content: "@*oncall* and @**Bob**",
    });
    await sender.runOnce();
    const [byGroup, byName] = payloadsFor(bobPhone);
    expect(byGroup).toMatchObject({
      message_id: id,
      mentioned_user_group_id: group.id,
      mentioned_user_group_name: "oncall",
      recipient_type: "channel",
      topic: "pager",
    });
    expect(byName!["message_id"]).toBe(both);
    expect(byName).not.toHaveProperty("mentioned_user_group_id");
  });

  it("a followed topic notifies; a muted topic does not, even with channel push on; wildcards follow the settings", async () => {
    const { alice, bob, general } = s.seed;
    await s.call(bob, "POST", "/user_topics", { stream_id: general.id, topic: "followed", visibility_policy: 3 });
    await s.call(bob, "POST", "/user_topics", { stream_id: general.id, topic: "muted", visibility_policy: 1 });
    await s.call(bob, "POST", "/users/me/subscriptions/properties", {
      subscription_data: JSON.stringify([{ stream_id: general.id, property: "push_notifications", value: true }]),
    });
    const followed = await send(alice, { type: "stream", to: "general", topic: "followed", content: "news" });
    await send(alice, { type: "stream", to: "general", topic: "muted", content: "noise" });
    await send(alice, { type: "stream", to: "general", topic: "muted", content: "noise for @**all**" });
    const channelPush = await send(alice, { type: "stream", to: "general", topic: "other", content: "channel push" });
    await s.call(bob, "PATCH", "/settings", {
      wildcard_mentions_notify: false,
      enable_stream_push_notifications: false,
    });
    await s.call(bob, "POST", "/users/me/subscriptions/properties", {
      subscription_data: JSON.stringify([{ stream_id: general.id, property: "push_notifications", value: false }]),
    });
    await send(alice, { type: "stream", to: "general", topic: "other", content: "@**all** wildcard, off" });
    const inFollowed = await send(alice, {
      type: "stream",
      to: "general",
      topic: "followed",
      content: "@**all** in a followed topic",
    });
    await sender.runOnce();
    expect(payloadsFor(bobPhone).map((p) => [p["message_id"], p["topic"]])).toEqual([
      [followed, "followed"],
      [channelPush, "other"],
      [inFollowed, "followed"],
    ]);
    await s.call(bob, "PATCH", "/settings", { wildcard_mentions_notify: true });
  });

  it("reading notified messages sends a removal; reading others sends none", async () => {
    const { alice, bob } = s.seed;
    const first = await send(alice, { type: "direct", to: JSON.stringify([bob.id]), content: "one" });
    const second = await send(alice, { type: "direct", to: JSON.stringify([bob.id]), content: "two" });
    const quiet = await send(alice, { type: "stream", to: "general", topic: "quiet", content: "not notified" });
    await sender.runOnce();
    bouncer.requests.length = 0;
    await s.call(bob, "POST", "/messages/flags", {
      messages: JSON.stringify([first, second, quiet]),
      op: "add",
      flag: "read",
    });
    await sender.runOnce();
    const expected = {
      message_ids: [first, second],
      realm_name: "Test",
      realm_url: realmUrl(),
      type: "remove",
      user_id: bob.id,
    };
    expect(payloadsFor(bobPhone)).toEqual([expected]);
    expect(payloadsFor(bobTablet)).toEqual([expected]);
    const tablet = (bouncer.to("push/e2ee/notify")[0]!.body["push_requests"] as Record<string, unknown>[]).find(
      (i) => i["token_id"] === bobTablet.tokenId,
    );
    expect(tablet).toMatchObject({ http_headers: { apns_priority: 5, apns_push_type: "background" } });
    // Marking them read again, or unread and read, removes nothing more.
    bouncer.requests.length = 0;
    await s.call(bob, "POST", "/messages/flags", { messages: JSON.stringify([first]), op: "remove", flag: "read" });
    await s.call(bob, "POST", "/messages/flags", { messages: JSON.stringify([first]), op: "add", flag: "read" });
    await sender.runOnce();
    expect(bouncer.requests).toEqual([]);
  });

  it("a message read before the bouncer took it is not shown", async () => {
    const { alice, bob } = s.seed;
    bouncer.mode = { kind: "error", status: 502 };
    const id = await send(alice, { type: "direct", to: JSON.stringify([bob.id]), content: "read on the desktop" });
    await sender.runOnce();
    await s.call(bob, "POST", "/messages/flags", { messages: JSON.stringify([id]), op: "add", flag: "read" });
    bouncer.mode = { kind: "ok" };
    bouncer.requests.length = 0;
    await sender.runOnce();
    expect(payloadsFor(bobPhone).map((p) => p["type"])).toEqual(["remove"]);
  });
});

describe("the outbox loses nothing", () => {
  it("while the bouncer is down, refuses or hangs, and delivers in order when it is back", async () => {
    const { alice, bob } = s.seed;
    const phone = await pushDevice(bob);
    await bouncer.down();
    const sent = [await send(alice, { type: "direct", to: JSON.stringify([bob.id]), content: "1" })];
    await sender.runOnce();
    await bouncer.up();
    bouncer.mode = { kind: "hang" };
    sent.push(await send(alice, { type: "direct", to: JSON.stringify([bob.id]), content: "2" }));
    await sender.runOnce();
    bouncer.mode = { kind: "error", status: 500 };
    sent.push(await send(alice, { type: "direct", to: JSON.stringify([bob.id]), content: "3" }));
    await sender.runOnce();
    bouncer.mode = { kind: "refuse", status: 401, code: "INVALID_ZULIP_SERVER" };
    await sender.runOnce();
    expect(s.t.store.pushOutboxItems().map((i) => (i.kind === "message" ? i.messageId : null))).toEqual(
      expect.arrayContaining(sent),
    );
    bouncer.mode = { kind: "ok" };
    bouncer.requests.length = 0;
    await sender.runOnce();
    expect(payloadsFor(phone).map((p) => p["message_id"])).toEqual(sent);
    expect(s.t.store.pushOutboxItems()).toEqual([]);
    await s.call(bob, "POST", "/remove_client_device", { device_id: phone.id });
  });

  it("the running sender backs off, then delivers by itself when the bouncer returns", async () => {
    const { alice, bob } = s.seed;
    const phone = await pushDevice(bob);
    await bouncer.down();
    sender.start();
    try {
      const id = await send(alice, { type: "direct", to: JSON.stringify([bob.id]), content: "queued" });
      await new Promise((r) => setTimeout(r, 50));
      await bouncer.up();
      bouncer.requests.length = 0;
      await expect
        .poll(() => payloadsFor(phone).map((p) => p["message_id"]), { timeout: 3000, interval: 20 })
        .toEqual([id]);
    } finally {
      await sender.stop();
    }
    await s.call(bob, "POST", "/remove_client_device", { device_id: phone.id });
  });

  it("a restart resumes: what was written before is sent by the next process's sender", async () => {
    const t = tempStore();
    try {
      const seed = seedRealm(t.store);
      const device = t.store.registerClientDevice(seed.bob.id);
      const key = newKey();
      const tokenId = newTokenId();
      t.store.registerPushDevice(
        seed.bob.id,
        {
          deviceId: device,
          pushKey: key,
          pushKeyId: 5,
          tokenKind: "fcm",
          tokenId,
          bouncerPublicKey: "a2V5",
          encryptedPushRegistration: "cmVn",
        },
        true,
      );
      const id = t.store.sendMessage({
        senderId: seed.alice.id,
        to: { type: "direct", users: [seed.bob.id] },
        content: "before the crash",
      }).id;
      expect(t.store.pushOutboxItems().map((i) => i.kind)).toEqual(["register", "message"]);
      const store = t.reopen();
      bouncer.requests.length = 0;
      const next = new PushSender(store, clientFor(bouncer.url), () => "http://chat.example.test");
      expect(await next.runOnce()).toBe(2);
      expect(bouncer.to("push/e2ee/register")).toHaveLength(1);
      expect(payloadsFor({ id: device, key, keyId: 5, tokenId, kind: "fcm" })).toMatchObject([
        { message_id: id, realm_url: "http://chat.example.test", content: "before the crash" },
      ]);
      expect(store.pushOutboxItems()).toEqual([]);
    } finally {
      t.cleanup();
    }
  });
});

describe("POST /mobile_push/e2ee/test_notification", () => {
  it("sends Zulip's test payload to one device or all, and answers Zulip's errors", async () => {
    const { guest } = s.seed;
    const call =
      (params: Record<string, unknown> = {}) =>
      () =>
        s.call(guest, "POST", "/mobile_push/e2ee/test_notification", params);
    await expectRejectedUnchanged(s, call(), 400, "NO_ACTIVE_PUSH_DEVICE", "No active registered push device");
    const phone = await pushDevice(guest, "fcm");
    const tablet = await pushDevice(guest, "apns");
    const before = Math.floor(Date.now() / 1000);
    expect((await call({ device_id: tablet.id })()).body).toEqual({ result: "success", msg: "" });
    expect(payloadsFor(phone)).toEqual([]);
    const [test] = payloadsFor(tablet);
    expect(test).toEqual({
      realm_name: "Test",
      realm_url: realmUrl(),
      time: expect.any(Number),
      type: "test",
      user_id: guest.id,
    });
    expect(test!["time"]).toBeGreaterThanOrEqual(before);
    bouncer.requests.length = 0;
    expect((await call()()).status).toBe(200);
    expect([payloadsFor(phone).length, payloadsFor(tablet).length]).toEqual([1, 1]);
    await expectRejectedUnchanged(
      s,
      call({ device_id: 1_999_999 }),
      400,
      "NO_ACTIVE_PUSH_DEVICE",
      "No active registered push device",
    );

    bouncer.mode = { kind: "error", status: 500 };
    await expectRejectedUnchanged(
      s,
      call(),
      502,
      "INTERNAL_SERVER_ERROR_ON_BOUNCER",
      "Internal server error on Zulip push notification service, retry later.",
    );
    bouncer.mode = { kind: "refuse", status: 403, code: "PUSH_NOTIFICATIONS_DISALLOWED", msg: "plan expired" };
    await expectRejectedUnchanged(
      s,
      call(),
      403,
      "ADMIN_ACTION_REQUIRED",
      "Push notification configuration issue on server, contact the server administrator or retry later.",
    );
    bouncer.mode = { kind: "refuse", status: 401, code: "INVALID_ZULIP_SERVER" };
    await expectRejectedUnchanged(
      s,
      call(),
      403,
      "ADMIN_ACTION_REQUIRED",
      "Push notification configuration issue on server, contact the server administrator or retry later.",
    );
    bouncer.mode = { kind: "hang" };
    await expectRejectedUnchanged(
      s,
      call(),
      502,
      "FAILED_TO_CONNECT_BOUNCER",
      "Network error while connecting to Zulip push notification service.",
    );
    await bouncer.down();
    try {
      await expectRejectedUnchanged(
        s,
        call(),
        502,
        "FAILED_TO_CONNECT_BOUNCER",
        "Network error while connecting to Zulip push notification service.",
      );
    } finally {
      await bouncer.up();
    }
    // The bouncer no longer knows either token: both registrations are cleared, and none is active.
    bouncer.mode = { kind: "ok", deleteTokenIds: [phone.tokenId, tablet.tokenId] };
    const gone = await call()();
    expect([gone.status, gone.body["code"]]).toEqual([400, "NO_ACTIVE_PUSH_DEVICE"]);
    const devices = (await s.call(guest, "POST", "/register", { fetch_event_types: ["device"] })).body[
      "devices"
    ] as Record<string, Record<string, unknown>>;
    expect([devices[String(phone.id)]!["push_token_id"], devices[String(tablet.id)]!["push_token_id"]]).toEqual([
      null,
      null,
    ]);
  });
});

describe("POST /mobile_push/test_notification (legacy tokens)", () => {
  it("asks the bouncer to test the named token or all of the caller's, and answers Zulip's errors", async () => {
    const { alice } = s.seed;
    const call =
      (params: Record<string, unknown> = {}) =>
      () =>
        s.call(alice, "POST", "/mobile_push/test_notification", params);
    // No legacy token: nothing to test, as in Zulip.
    expect((await call()()).body).toEqual({ result: "success", msg: "" });
    expect(bouncer.to("push/test_notification")).toEqual([]);
    await expectRejectedUnchanged(
      s,
      call({ token: "not-mine" }),
      400,
      "INVALID_PUSH_DEVICE_TOKEN",
      "Device not recognized",
    );
    expect((await s.call(alice, "POST", "/users/me/android_gcm_reg_id", { token: "fcm-token-1" })).status).toBe(200);
    const apns = { token: "c0ffee", appid: "org.zulip.Zulip" };
    expect((await s.call(alice, "POST", "/users/me/apns_device_token", apns)).status).toBe(200);
    expect((await call({ token: "fcm-token-1" })()).status).toBe(200);
    const [request] = bouncer.to("push/test_notification");
    expect(request!.authorization).toBe(AUTH);
    expect(request!.body).toEqual({
      realm_uuid: expect.any(String),
      user_id: alice.id,
      token: "fcm-token-1",
      token_kind: 2,
      base_payload: {
        server: new URL(s.server.baseUrl).host,
        realm_id: s.seed.realm.id,
        realm_name: "Test",
        realm_uri: realmUrl(),
        realm_url: realmUrl(),
        user_id: alice.id,
      },
    });
    bouncer.requests.length = 0;
    expect((await call()()).status).toBe(200);
    expect(bouncer.to("push/test_notification").map((r) => [r.body["token"], r.body["token_kind"]])).toEqual([
      ["c0ffee", 1],
      ["fcm-token-1", 2],
    ]);
    bouncer.mode = { kind: "refuse", status: 400, code: "INVALID_REMOTE_PUSH_DEVICE_TOKEN" };
    await expectRejectedUnchanged(
      s,
      call({ token: "c0ffee" }),
      400,
      "INVALID_REMOTE_PUSH_DEVICE_TOKEN",
      "Device not recognized by the push bouncer",
    );
    bouncer.mode = { kind: "error", status: 500 };
    await expectRejectedUnchanged(
      s,
      call(),
      502,
      "INTERNAL_SERVER_ERROR_ON_BOUNCER",
      "Internal server error on Zulip push notification service, retry later.",
    );
  });

  it("sends nothing and succeeds on a server without a bouncer, as Zulip with no push service", async () => {
    const plain = await startServer();
    try {
      const { bob } = plain.seed;
      expect((await plain.call(bob, "POST", "/users/me/android_gcm_reg_id", { token: "fcm-x" })).status).toBe(200);
      expect((await plain.call(bob, "POST", "/mobile_push/test_notification", { token: "fcm-x" })).status).toBe(200);
      const refused = await plain.call(bob, "POST", "/mobile_push/test_notification", { token: "fcm-y" });
      expect([refused.status, refused.body["code"]]).toEqual([400, "INVALID_PUSH_DEVICE_TOKEN"]);
    } finally {
      plain.close();
    }
  });
});
