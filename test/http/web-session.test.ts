/**
 * The web client's browser session over real HTTP (http/session, actions/web-sessions):
 * POST /accounts/login/ sets an HttpOnly SameSite cookie and a CSRF token; the cookie
 * authenticates API requests and /user_uploads; writes need X-CSRFToken; logout ends
 * the session on the server; it survives a restart and ends on deactivation, password
 * and API key changes.
 */
import { afterEach, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/engine/index.js";
import { createServer } from "../../src/http/server.js";
import { expectRejectedUnchanged, startServer, TEST_SCRYPT_COST, type TestServer } from "../support/http.js";

let s: TestServer;
afterEach(() => s?.close());

const ALICE_PASSWORD = "violet-harbour-42";

async function boot(): Promise<TestServer> {
  s = await startServer();
  s.t.store.setPassword(s.seed.alice.id, await hashPassword(ALICE_PASSWORD, TEST_SCRYPT_COST));
  return s;
}

interface Session {
  /** The Cookie header a browser would send back. */
  readonly cookie: string;
  readonly csrf: string;
  readonly setCookies: readonly string[];
}

async function post(
  path: string,
  params: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown>; setCookies: string[] }> {
  const response = await fetch(`${s.base}${path}`, { method: "POST", headers, body: new URLSearchParams(params) });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
    setCookies: response.headers.getSetCookie(),
  };
}

async function login(params: Record<string, string> = { password: ALICE_PASSWORD }): Promise<Session> {
  const r = await post("/accounts/login/", { username: "alice@test.dev", ...params });
  expect(r.status).toBe(200);
  const pairs = r.setCookies.map((c) => c.split(";")[0]!);
  const csrf = pairs.find((p) => p.startsWith("csrftoken="))!.slice("csrftoken=".length);
  return { cookie: pairs.join("; "), csrf, setCookies: r.setCookies };
}

/** An API request as the web client's page makes it: the cookie, and the token on writes. */
function asPage(session: Session, method: string, path: string, params: Record<string, string> = {}, csrf = true) {
  return s.call(null, method, path, params, {
    headers: { Cookie: session.cookie, ...(csrf ? { "X-CSRFToken": session.csrf } : {}) },
  });
}

describe("POST /accounts/login/", () => {
  it("sets an HttpOnly SameSite=Lax session cookie and a readable CSRF cookie, and hands out no API key", async () => {
    await boot();
    const r = await post("/accounts/login/", { username: "ALICE@test.dev", password: ALICE_PASSWORD });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ result: "success", msg: "", user_id: s.seed.alice.id, email: "alice@test.dev" });
    const [session, csrf] = r.setCookies;
    expect(session).toMatch(/^sessionid=\d+\.[A-Za-z0-9_-]{43}; Path=\/; Max-Age=1209600; SameSite=Lax; HttpOnly$/);
    expect(csrf).toMatch(/^csrftoken=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=1209600; SameSite=Lax$/);
    expect(JSON.stringify(r)).not.toContain(s.seed.alice.apiKey);
    expect(s.t.store.webSessionCount(s.seed.alice.id)).toBe(1);
  });

  it("accepts the account's API key instead of a password", async () => {
    await boot();
    const session = await login({ api_key: s.seed.alice.apiKey });
    const me = await asPage(session, "GET", "/users/me");
    expect(me.body["user_id"]).toBe(s.seed.alice.id);
  });

  it("refuses a wrong password or key with no cookie, and a login posted from another site's page", async () => {
    await boot();
    const wrong = await post("/accounts/login/", { username: "alice@test.dev", password: "not-it" });
    expect([wrong.status, wrong.body["code"], wrong.setCookies]).toEqual([401, "AUTHENTICATION_FAILED", []]);
    const badKey = await post("/accounts/login/", { username: "alice@test.dev", api_key: s.seed.bob.apiKey });
    expect([badKey.status, badKey.body["code"], badKey.setCookies]).toEqual([401, "UNAUTHORIZED", []]);
    const both = await post("/accounts/login/", { username: "alice@test.dev", password: "x", api_key: "y" });
    expect([both.status, both.body["code"]]).toEqual([400, "BAD_REQUEST"]);
    const crossSite = await post(
      "/accounts/login/",
      { username: "alice@test.dev", password: ALICE_PASSWORD },
      { Origin: "https://evil.example" },
    );
    expect([crossSite.status, crossSite.body["code"], crossSite.setCookies]).toEqual([403, "CSRF_FAILED", []]);
    expect(s.t.store.webSessionCount(s.seed.alice.id)).toBe(0);
  });
});

describe("a session request", () => {
  it("is authenticated by the cookie for API reads and /user_uploads, and the Authorization header wins over it", async () => {
    await boot();
    const form = new FormData();
    form.append("file", new Blob(["session bytes"]), "s.txt");
    const upload = await s.call(s.seed.alice, "POST", "/user_uploads", {}, { body: form });
    const url = String(upload.body["url"]);
    const session = await login();
    expect((await asPage(session, "GET", "/users/me")).body["user_id"]).toBe(s.seed.alice.id);
    const file = await fetch(`${s.base}${url}`, { headers: { Cookie: session.cookie } });
    expect([file.status, await file.text()]).toEqual([200, "session bytes"]);
    const anonymous = await fetch(`${s.base}${url}`);
    expect(anonymous.status).not.toBe(200);
    const bob = await s.call(s.seed.bob, "GET", "/users/me", {}, { headers: { Cookie: session.cookie } });
    expect(bob.body["user_id"]).toBe(s.seed.bob.id);
  });

  it("refuses a write without the CSRF token, with a wrong one, or from another origin (403 CSRF_FAILED), changing nothing", async () => {
    await boot();
    const session = await login();
    const send = { type: "stream", to: "general", topic: "t", content: "from the page" };
    const sendWith = (headers: Record<string, string>) =>
      s.call(null, "POST", "/messages", send, { headers: { Cookie: session.cookie, ...headers } });
    await expectRejectedUnchanged(s, () => sendWith({}), 403, "CSRF_FAILED", "CSRF error: CSRF token missing.");
    await expectRejectedUnchanged(
      s,
      () => sendWith({ "X-CSRFToken": `${session.csrf.slice(1)}x` }),
      403,
      "CSRF_FAILED",
      "CSRF error: CSRF token incorrect.",
    );
    await expectRejectedUnchanged(
      s,
      () => sendWith({ "X-CSRFToken": session.csrf, Origin: "https://evil.example" }),
      403,
      "CSRF_FAILED",
      /^CSRF error: Origin checking failed/,
    );
    const sent = await sendWith({ "X-CSRFToken": session.csrf, Origin: s.base });
    expect(sent.status).toBe(200);
    expect(sent.body["id"]).toEqual(expect.any(Number));
  });

  it("refused to a page's script challenges with Session, not Basic (no browser password prompt); API clients keep Basic", async () => {
    await boot();
    const script = await s.call(null, "GET", "/users/me", {}, { headers: { "Sec-Fetch-Site": "same-origin" } });
    expect([script.status, script.headers.get("www-authenticate")]).toEqual([401, 'Session realm="zulip"']);
    const client = await s.call(null, "GET", "/users/me");
    expect([client.status, client.headers.get("www-authenticate")]).toEqual([401, 'Basic realm="zulip"']);
  });

  it("without a session is 401 UNAUTHORIZED, whatever the cookie holds", async () => {
    await boot();
    for (const cookie of ["sessionid=", "sessionid=1.abc", `sessionid=${s.seed.alice.id}.${"A".repeat(43)}`]) {
      const r = await s.call(null, "GET", "/users/me", {}, { headers: { Cookie: cookie } });
      expect([r.status, r.body["code"]]).toEqual([401, "UNAUTHORIZED"]);
    }
  });
});

describe("the session ends", () => {
  it("at logout, for every request carrying the cookie (all tabs), which logout clears; a CSRF-less logout is refused", async () => {
    await boot();
    const session = await login();
    const refused = await post("/accounts/logout/", {}, { Cookie: session.cookie });
    expect([refused.status, refused.body["code"]]).toEqual([403, "CSRF_FAILED"]);
    expect((await asPage(session, "GET", "/users/me")).status).toBe(200);
    const out = await post("/accounts/logout/", {}, { Cookie: session.cookie, "X-CSRFToken": session.csrf });
    expect(out.status).toBe(200);
    expect(out.setCookies.map((c) => c.split(";")[0])).toEqual(["sessionid=", "csrftoken="]);
    expect((await asPage(session, "GET", "/users/me")).status).toBe(401);
    expect(s.t.store.webSessionCount(s.seed.alice.id)).toBe(0);
  });

  it("not at a restart: the session is in the store", async () => {
    await boot();
    const session = await login();
    s.server.close();
    const store = s.t.reopen();
    const server = createServer(store, { rateLimit: false, logError: () => undefined, dataDir: s.t.dir });
    const port = await server.listen(0, "127.0.0.1");
    try {
      const me = await fetch(`http://127.0.0.1:${port}/api/v1/users/me`, { headers: { Cookie: session.cookie } });
      expect(me.status).toBe(200);
    } finally {
      server.close();
    }
  });

  it("when the user is deactivated (and stays ended after reactivation)", async () => {
    await boot();
    const session = await login();
    await s.call(s.seed.owner, "DELETE", `/users/${s.seed.alice.id}`);
    expect(s.t.store.webSessionCount(s.seed.alice.id)).toBe(0);
    await s.call(s.seed.owner, "POST", `/users/${s.seed.alice.id}/reactivate`);
    expect((await asPage(session, "GET", "/users/me")).status).toBe(401);
  });

  it("when the password or the API key changes", async () => {
    await boot();
    const first = await login();
    const change = { old_password: ALICE_PASSWORD, new_password: "granite-lantern-9" };
    expect((await s.call(s.seed.alice, "PATCH", "/settings", change)).status).toBe(200);
    expect((await asPage(first, "GET", "/users/me")).status).toBe(401);
    const second = await login({ password: "granite-lantern-9" });
    expect((await asPage(second, "GET", "/users/me")).status).toBe(200);
    expect((await s.call(s.seed.alice, "POST", "/users/me/api_key/regenerate")).status).toBe(200);
    expect((await asPage(second, "GET", "/users/me")).status).toBe(401);
  });
});
