import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { basicAuth, rawRequest, startServer, type TestServer } from "../support/http.js";

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.close());

describe("HTTP framework", () => {
  it("serves server_settings without auth and reports unknown parameters", async () => {
    const r = await s.call(null, "GET", "/server_settings", { zeta: "1", alpha: "2" });
    expect(r.status).toBe(200);
    expect(r.body["result"]).toBe("success");
    expect(r.body["zulip_feature_level"]).toBe(496);
    expect(r.body["zulip_version"]).toBe("12.0");
    expect(r.body["ignored_parameters_unsupported"]).toEqual(["alpha", "zeta"]);
  });

  it("answers a JSON 404 for unknown API paths", async () => {
    const r = await s.call(null, "GET", "/no/such/thing");
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ result: "error", msg: "Not Found", code: "BAD_REQUEST" });
  });

  it("an empty path segment is no parameter: 404, not another route's 405", async () => {
    for (const path of ["/messages//reactions", "//messages/1/reactions", "/users//"]) {
      const r = await s.call(s.seed.alice, "POST", path, { emoji_name: "octopus" });
      expect([path, r.status, r.body]).toEqual([path, 404, { result: "error", msg: "Not Found", code: "BAD_REQUEST" }]);
    }
    // One trailing slash is still the same route.
    expect((await s.call(s.seed.alice, "GET", "/users/me/")).status).toBe(200);
  });

  it("answers 405 with Allow and allowed_methods", async () => {
    const r = await s.call(null, "DELETE", "/server_settings");
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("GET");
    expect(r.body).toEqual({ result: "error", msg: "Method Not Allowed", allowed_methods: ["GET"] });
  });
});

describe("limits, failures and realms", () => {
  it("rate-limits per user with 429, Retry-After and X-RateLimit headers", async () => {
    const limited = await startServer({ rateLimit: { requests: 3, windowSeconds: 60 } });
    try {
      const { alice, bob } = limited.seed;
      const params = { anchor: "newest", num_before: 1, num_after: 0 };
      const first = await limited.call(alice, "GET", "/messages", params);
      expect(first.status).toBe(200);
      expect(first.headers.get("x-ratelimit-limit")).toBe("3");
      expect(first.headers.get("x-ratelimit-remaining")).toBe("2");
      expect(Number(first.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000);
      await limited.call(alice, "GET", "/messages", params);
      await limited.call(alice, "GET", "/messages", params);
      const blocked = await limited.call(alice, "GET", "/messages", params);
      expect(blocked.status).toBe(429);
      expect(blocked.body["code"]).toBe("RATE_LIMIT_HIT");
      expect(blocked.body["msg"]).toBe("API usage exceeded rate limit");
      expect(Number(blocked.body["retry-after"])).toBeGreaterThan(0);
      expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
      const other = await limited.call(bob, "GET", "/messages", params);
      expect(other.status).toBe(200);
    } finally {
      limited.close();
    }
  });

  it("limits failed authentication per client address with 429 and Retry-After, before checking credentials", async () => {
    const limited = await startServer({ authFailureLimit: { requests: 3, windowSeconds: 60 } });
    try {
      const { alice } = limited.seed;
      const params = { anchor: "newest", num_before: 1, num_after: 0 };
      // Successful requests do not count.
      for (let i = 0; i < 5; i++) expect((await limited.call(alice, "GET", "/messages", params)).status).toBe(200);
      const wrongKey = {
        headers: { Authorization: `Basic ${Buffer.from(`${alice.email}:${"x".repeat(32)}`).toString("base64")}` },
      };
      for (let i = 0; i < 3; i++) {
        const r = await limited.call(null, "GET", "/messages", params, wrongKey);
        expect(r.status).toBe(401);
        expect(r.body["msg"]).toBe("Invalid API key");
      }
      for (const user of [null, alice]) {
        const blocked = await limited.call(
          null,
          "GET",
          "/messages",
          params,
          user === null ? wrongKey : { headers: { Authorization: basicAuth(user) } },
        );
        expect(blocked.status).toBe(429);
        expect(blocked.body["code"]).toBe("RATE_LIMIT_HIT");
        expect(blocked.body["msg"]).toBe("API usage exceeded rate limit");
        expect(Number(blocked.body["retry-after"])).toBeGreaterThan(0);
        expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
      }
    } finally {
      limited.close();
    }
  });

  it("answers 500 without internals when the engine fails unexpectedly, and logs it", async () => {
    const logged: string[] = [];
    const failing = await startServer({ logError: (message) => logged.push(message) });
    try {
      failing.t.store.getMessageWindow = () => {
        throw new Error("disk on fire at /secret/path");
      };
      const r = await failing.call(failing.seed.alice, "GET", "/messages", {
        anchor: "newest",
        num_before: 1,
        num_after: 0,
      });
      expect(r.status).toBe(500);
      expect(r.body).toEqual({ result: "error", msg: "Internal server error" });
      expect(logged).toEqual(["GET /api/v1/messages: unexpected error"]);
    } finally {
      failing.close();
    }
  });

  it("refuses bodies over the limit with 413", async () => {
    const small = await startServer({ maxBodyBytes: 1000 });
    try {
      const r = await small.call(small.seed.alice, "POST", "/messages", {
        type: "stream",
        to: "general",
        topic: "t",
        content: "x".repeat(5000),
      });
      expect(r.status).toBe(413);
      expect(r.body).toEqual({ result: "error", msg: "Request body too large", code: "BAD_REQUEST" });
    } finally {
      small.close();
    }
  });

  it("accepts multipart/form-data bodies", async () => {
    const form = new FormData();
    form.set("type", "stream");
    form.set("to", "general");
    form.set("topic", "multipart");
    form.set("content", "sent as multipart");
    const r = await s.call(s.seed.alice, "POST", "/messages", {}, { body: form });
    expect(r.status).toBe(200);
    expect(typeof r.body["id"]).toBe("number");
  });

  it("chooses the realm by Host subdomain and refuses deactivated realms", async () => {
    const other = s.t.store.createRealm({
      subdomain: "acme",
      name: "Acme",
      owner: { email: "boss@acme.dev", fullName: "Boss" },
    });
    const auth = { Authorization: basicAuth(other.owner) };
    const path = "/messages?anchor=newest&num_before=1&num_after=0";
    const viaSub = await rawRequest(s.base, "GET", path, { ...auth, Host: "acme.localhost" });
    expect(viaSub.status).toBe(200);
    const wrongRealm = await rawRequest(s.base, "GET", path, { ...auth, Host: "127.0.0.1" });
    expect(wrongRealm.status).toBe(401);
    expect(wrongRealm.body["msg"]).toBe("Account is not associated with this subdomain");
    // A foreign domain does not select realm "acme": like Zulip, it is the root realm.
    const foreign = await rawRequest(s.base, "GET", path, { ...auth, Host: "acme.evil.com" });
    expect(foreign.status).toBe(401);
    expect(foreign.body["msg"]).toBe("Account is not associated with this subdomain");
    const unknown = await rawRequest(s.base, "GET", path, { ...auth, Host: "nowhere.localhost" });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ result: "error", msg: "Invalid subdomain", code: "NONEXISTENT_SUBDOMAIN" });
    s.t.store.setRealmDeactivated(other.realm.id, true);
    const deactivated = await rawRequest(s.base, "GET", path, { ...auth, Host: "acme.localhost" });
    expect(deactivated.status).toBe(401);
    expect(deactivated.body).toEqual({
      result: "error",
      msg: "This organization has been deactivated",
      code: "UNAUTHORIZED",
    });
  });
});

describe("listening", () => {
  it("refuses a port another server holds instead of sharing it", async () => {
    const { createServer } = await import("../../src/http/server.js");
    const port = Number(new URL(s.base).port);
    const second = createServer(s.t.store, { rateLimit: false });
    await expect(second.listen(port, "127.0.0.1")).rejects.toThrow(/cannot listen on 127\.0\.0\.1:\d+/);
  });
});
