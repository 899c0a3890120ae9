/**
 * Zulip's legacy push token endpoints over HTTP: tokens stored per user and kind (a
 * repeat is success), Zulip's checks in its order (human users only, the app ID, empty or
 * over 4096 characters, hex for APNs), each refusal changing nothing, and removal of an
 * unknown token answered as Zulip does without a bouncer ("Token does not exist") and
 * with one (success).
 */
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";

let server: TestServer | undefined;
afterEach(() => server?.close());

const APNS = "/users/me/apns_device_token";
const FCM = "/users/me/android_gcm_reg_id";
const HEX = "c0ffee00".repeat(8);

describe("without a bouncer", () => {
  it("adds and removes each kind, per user; a repeat is success", async () => {
    const s = (server = await startServer());
    const { alice, bob } = s.seed;
    const ok = { result: "success", msg: "" };
    expect((await s.call(alice, "POST", APNS, { token: HEX, appid: "org.zulip.Zulip" })).body).toEqual(ok);
    expect((await s.call(alice, "POST", APNS, { token: HEX, appid: "org.zulip.Zulip" })).body).toEqual(ok);
    expect((await s.call(alice, "POST", FCM, { token: "fcm:token-1" })).body).toEqual(ok);
    expect((await s.call(bob, "POST", FCM, { token: "fcm:token-1" })).body).toEqual(ok);
    const store = s.t.store;
    expect(store.legacyPushTokens(alice.id, "apns")).toEqual([HEX]);
    expect(store.legacyPushTokens(alice.id, "gcm")).toEqual(["fcm:token-1"]);
    // The same token as the other kind, or another user's, is not the caller's to remove.
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "DELETE", FCM, { token: HEX }),
      400,
      "BAD_REQUEST",
      "Token does not exist",
    );
    expect((await s.call(bob, "DELETE", FCM, { token: "fcm:token-1" })).body).toEqual(ok);
    expect(store.legacyPushTokens(alice.id, "gcm")).toEqual(["fcm:token-1"]);
    expect((await s.call(alice, "DELETE", APNS, { token: HEX })).body).toEqual(ok);
    expect((await s.call(alice, "DELETE", FCM, { token: "fcm:token-1" })).body).toEqual(ok);
    expect(store.legacyPushTokens(alice.id, "apns")).toEqual([]);
    expect(store.legacyPushTokens(alice.id, "gcm")).toEqual([]);
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "DELETE", APNS, { token: HEX }),
      400,
      "BAD_REQUEST",
      "Token does not exist",
    );
  });

  it("refuses bad tokens, app IDs and bots with Zulip's errors, changing nothing", async () => {
    const s = (server = await startServer());
    const { alice } = s.seed;
    const bot = s.t.store.createUser({
      realmId: alice.realmId,
      email: "pusher-bot@test.dev",
      fullName: "Pusher",
      bot: { type: 1, ownerId: alice.id },
    });
    const cases: [string, string, Record<string, unknown>, string][] = [
      ["POST", APNS, { token: "", appid: "org.zulip.Zulip" }, "Empty or invalid length token"],
      ["POST", APNS, { token: "ab".repeat(2049), appid: "org.zulip.Zulip" }, "Empty or invalid length token"],
      ["POST", APNS, { token: "not hex!", appid: "org.zulip.Zulip" }, "Invalid APNS token"],
      ["POST", APNS, { token: "abc", appid: "org.zulip.Zulip" }, "Invalid APNS token"],
      ["POST", APNS, { token: HEX, appid: "org/zulip" }, "Invalid app ID"],
      ["DELETE", APNS, { token: "zz" }, "Invalid APNS token"],
      ["POST", FCM, { token: "" }, "Empty or invalid length token"],
      ["POST", FCM, { token: "🐙".repeat(4097) }, "Empty or invalid length token"],
      ["DELETE", FCM, { token: "" }, "Empty or invalid length token"],
    ];
    for (const [method, path, params, msg] of cases)
      await expectRejectedUnchanged(s, () => s.call(alice, method, path, params), 400, "BAD_REQUEST", msg);
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "POST", APNS, { token: HEX }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'appid' argument",
    );
    await expectRejectedUnchanged(
      s,
      () => s.call(bot, "POST", FCM, { token: "t" }),
      400,
      "BAD_REQUEST",
      "This endpoint does not accept bot requests.",
    );
    // Accepted at the limits: 4096 characters, and hex pairs with spaces between them (Python's bytes.fromhex).
    expect((await s.call(alice, "POST", FCM, { token: "🐙".repeat(4096) })).status).toBe(200);
    expect((await s.call(alice, "POST", APNS, { token: " c0 ff ee ", appid: "org.zulip.Zulip" })).status).toBe(200);
  });
});

describe("with a bouncer configured", () => {
  it("removing an unknown token is success, as Zulip's bouncer branch answers", async () => {
    const config = parseConfig(
      { PUSH_NOTIFICATION_BOUNCER_URL: "http://127.0.0.1:9", ZULIP_ORG_ID: "t", ZULIP_ORG_KEY: "t" },
      "test",
    );
    const s = (server = await startServer({ config, bouncerTimeoutMs: 200 }));
    const { alice } = s.seed;
    expect((await s.call(alice, "DELETE", FCM, { token: "never-added" })).body).toEqual({ result: "success", msg: "" });
    expect((await s.call(alice, "POST", FCM, { token: "added" })).status).toBe(200);
    expect((await s.call(alice, "DELETE", FCM, { token: "added" })).status).toBe(200);
    expect(s.t.store.legacyPushTokens(alice.id, "gcm")).toEqual([]);
  });
});
