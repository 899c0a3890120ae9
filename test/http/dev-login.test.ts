/**
 * POST /dev_fetch_api_key and GET /dev_list_users: refused with Zulip's production
 * answer unless the configuration turns DEV_AUTH_BACKEND on; with it, a login by
 * email alone and the realm's users, administrators apart.
 */
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";

let s: TestServer;
afterEach(() => s.close());

describe("development login", () => {
  it("is refused by default, changing nothing", async () => {
    s = await startServer();
    const { bob } = s.seed;
    for (const call of [
      () => s.call(null, "POST", "/dev_fetch_api_key", { username: bob.deliveryEmail }),
      () => s.call(null, "GET", "/dev_list_users"),
    ])
      await expectRejectedUnchanged(s, call, 400, "BAD_REQUEST", "Endpoint not available in production.");
  });

  it("with DEV_AUTH_BACKEND: the API key by email alone, the realm's users", async () => {
    s = await startServer({ config: parseConfig({ DEV_AUTH_BACKEND: true }, "test") });
    const { bob, owner } = s.seed;
    const r = await s.call(null, "POST", "/dev_fetch_api_key", { username: bob.deliveryEmail.toUpperCase() });
    expect(r.body).toEqual({
      result: "success",
      msg: "",
      api_key: s.t.store.getUser(bob.id).apiKey,
      email: bob.deliveryEmail,
      user_id: bob.id,
    });
    const me = await s.call(
      null,
      "GET",
      "/users/me",
      {},
      {
        headers: {
          Authorization: `Basic ${Buffer.from(`${bob.deliveryEmail}:${r.body["api_key"] as string}`).toString("base64")}`,
        },
      },
    );
    expect(me.body["user_id"]).toBe(bob.id);
    await expectRejectedUnchanged(
      s,
      () => s.call(null, "POST", "/dev_fetch_api_key", { username: "nobody@example.com" }),
      401,
      "AUTHENTICATION_FAILED",
      "Your username or password is incorrect",
    );
    const list = await s.call(null, "GET", "/dev_list_users");
    const admins = list.body["direct_admins"] as { email: string; realm_url: string }[];
    const users = list.body["direct_users"] as { email: string; realm_url: string }[];
    expect(admins.map((u) => u.email)).toContain(owner.deliveryEmail);
    expect(users.map((u) => u.email)).toContain(bob.deliveryEmail);
    expect(users.map((u) => u.email)).not.toContain(owner.deliveryEmail);
    const emails = users.map((u) => u.email);
    expect(emails).toEqual([...emails].sort());
    expect(new Set([...admins, ...users].map((u) => u.realm_url)).size).toBe(1);
  });
});
