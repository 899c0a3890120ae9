/**
 * POST /jwt/fetch_api_key over real HTTP, with tokens made by jose: the key and
 * algorithms of the realm's JWT_AUTH_KEYS entry, and every refusal with Zulip's code
 * and message, the store unchanged.
 */
import { exportSPKI, generateKeyPair, SignJWT, UnsecuredJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { expectRejectedUnchanged, rawRequest, startServer, type TestServer } from "../support/http.js";

const SECRET = "a shared secret of the realm's single sign-on, 32+ bytes";
const secret = new TextEncoder().encode(SECRET);
const now = () => Math.floor(Date.now() / 1000);

let s: TestServer;
let rsaPublicPem = "";
let rsaPrivate: Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];

beforeAll(async () => {
  const pair = await generateKeyPair("RS256", { extractable: true });
  rsaPrivate = pair.privateKey;
  rsaPublicPem = await exportSPKI(pair.publicKey);
  const config = parseConfig(
    {
      JWT_AUTH_KEYS: {
        "": { key: SECRET, algorithms: ["HS256"] },
        // A public key listed with an HMAC algorithm too: the classic confusion must not work.
        rsa: { key: rsaPublicPem, algorithms: ["RS256", "HS256"] },
      },
    },
    "test",
  );
  s = await startServer({ config });
  s.t.store.createRealm({ subdomain: "rsa", name: "RSA", owner: { email: "ron@rsa.dev", fullName: "Ron" } });
  s.t.store.createRealm({ subdomain: "plain", name: "Plain", owner: { email: "pat@plain.dev", fullName: "Pat" } });
});
afterAll(() => s.close());

const hs256 = (claims: Record<string, unknown>, alg = "HS256") =>
  new SignJWT(claims).setProtectedHeader({ alg }).sign(secret);
const fetchKey = (params: Record<string, unknown>) => () => s.call(null, "POST", "/jwt/fetch_api_key", params);
const onHost = (host: string, token: string) =>
  rawRequest(
    s.base,
    "POST",
    "/jwt/fetch_api_key",
    { Host: host, "Content-Type": "application/x-www-form-urlencoded" },
    new URLSearchParams({ token }).toString(),
  );

describe("POST /jwt/fetch_api_key", () => {
  it("answers the API key and real email for a valid token, and the user object when asked", async () => {
    const { alice } = s.seed;
    const r = await fetchKey({ token: await hs256({ email: "Alice@test.dev", exp: now() + 60 }) })();
    expect(r.body).toEqual({ result: "success", msg: "", api_key: alice.apiKey, email: "alice@test.dev" });
    const withProfile = await fetchKey({ token: await hs256({ email: "alice@test.dev" }), include_profile: true })();
    const viaUsers = await s.call(alice, "GET", `/users/${alice.id}`, { client_gravatar: false });
    expect(withProfile.body["user"]).toEqual(viaUsers.body["user"]);
    expect(Object.keys(withProfile.body["user"] as object).sort()).toEqual(
      [
        "avatar_url",
        "avatar_version",
        "date_joined",
        "delivery_email",
        "email",
        "full_name",
        "is_active",
        "is_admin",
        "is_bot",
        "is_guest",
        "is_imported_stub",
        "is_owner",
        "role",
        "timezone",
        "user_id",
        "bot_type",
      ].sort(),
    );
  });

  it("verifies RS256 with the configured public key and refuses an HS256 token signed with that key as a secret", async () => {
    const rs = await new SignJWT({ email: "ron@rsa.dev" }).setProtectedHeader({ alg: "RS256" }).sign(rsaPrivate);
    const ok = await onHost("rsa.localhost", rs);
    expect([ok.status, ok.body["email"]]).toEqual([200, "ron@rsa.dev"]);
    const forged = await new SignJWT({ email: "ron@rsa.dev" })
      .setProtectedHeader({ alg: "HS256" })
      .sign(new TextEncoder().encode(rsaPublicPem));
    const refused = await onHost("rsa.localhost", forged);
    expect([refused.status, refused.body["code"], refused.body["msg"]]).toEqual([
      400,
      "BAD_REQUEST",
      "Bad JSON web token",
    ]);
  });

  it("refuses every bad token with Zulip's errors, changing nothing", async () => {
    const bad = ["BAD_REQUEST", "Bad JSON web token"] as const;
    await expectRejectedUnchanged(s, fetchKey({}), 400, "BAD_REQUEST", "No JSON web token passed in request");
    await expectRejectedUnchanged(
      s,
      fetchKey({ token: "" }),
      400,
      "BAD_REQUEST",
      "No JSON web token passed in request",
    );
    await expectRejectedUnchanged(s, fetchKey({ token: "not.a.jwt" }), 400, ...bad);
    const otherSecret = await new SignJWT({ email: "alice@test.dev" })
      .setProtectedHeader({ alg: "HS256" })
      .sign(new TextEncoder().encode("some other secret entirely, also long"));
    await expectRejectedUnchanged(s, fetchKey({ token: otherSecret }), 400, ...bad);
    // The right secret with an algorithm the realm does not list.
    await expectRejectedUnchanged(
      s,
      fetchKey({ token: await hs256({ email: "alice@test.dev" }, "HS384") }),
      400,
      ...bad,
    );
    await expectRejectedUnchanged(
      s,
      fetchKey({ token: new UnsecuredJWT({ email: "alice@test.dev" }).encode() }),
      400,
      ...bad,
    );
    await expectRejectedUnchanged(
      s,
      fetchKey({ token: await hs256({ email: "alice@test.dev", exp: now() - 10 }) }),
      400,
      ...bad,
    );
    await expectRejectedUnchanged(
      s,
      fetchKey({ token: await hs256({ email: "alice@test.dev", nbf: now() + 3600 }) }),
      400,
      ...bad,
    );
    // A valid signature over a changed payload.
    const [header, , signature] = (await hs256({ email: "bob@test.dev" })).split(".");
    const tampered = `${header}.${Buffer.from(JSON.stringify({ email: "owner@test.dev" })).toString("base64url")}.${signature}`;
    await expectRejectedUnchanged(s, fetchKey({ token: tampered }), 400, ...bad);
    await expectRejectedUnchanged(
      s,
      fetchKey({ token: await hs256({ sub: "alice" }) }),
      400,
      "BAD_REQUEST",
      "No email specified in JSON web token claims",
    );
    await expectRejectedUnchanged(
      s,
      fetchKey({ token: await hs256({ email: null }) }),
      400,
      "BAD_REQUEST",
      "No email specified in JSON web token claims",
    );
    await expectRejectedUnchanged(
      s,
      fetchKey({ token: await hs256({ email: "alice@test.dev" }), include_profile: "maybe" }),
      400,
      "BAD_REQUEST",
      "include_profile is not a boolean",
    );
  });

  it("refuses unknown, deactivated and other realms' users with the login errors", async () => {
    const failed = ["AUTHENTICATION_FAILED", "Your username or password is incorrect"] as const;
    await expectRejectedUnchanged(s, fetchKey({ token: await hs256({ email: "nobody@test.dev" }) }), 401, ...failed);
    await expectRejectedUnchanged(s, fetchKey({ token: await hs256({ email: 42 }) }), 401, ...failed);
    await expectRejectedUnchanged(s, fetchKey({ token: await hs256({ email: "ron@rsa.dev" }) }), 401, ...failed);
    const { bob, realm } = s.seed;
    s.t.store.setUserActive(bob.id, false);
    try {
      await expectRejectedUnchanged(
        s,
        fetchKey({ token: await hs256({ email: "bob@test.dev" }) }),
        401,
        "USER_DEACTIVATED",
        "Account is deactivated",
      );
    } finally {
      s.t.store.setUserActive(bob.id, true);
    }
    s.t.store.setRealmDeactivated(realm.id, true);
    try {
      await expectRejectedUnchanged(
        s,
        fetchKey({ token: await hs256({ email: "bob@test.dev" }) }),
        401,
        "REALM_DEACTIVATED",
        "This organization has been deactivated",
      );
    } finally {
      s.t.store.setRealmDeactivated(realm.id, false);
    }
  });

  it("refuses realms JWT is not configured for, and subdomains without a realm", async () => {
    const token = await hs256({ email: "pat@plain.dev" });
    const plain = await onHost("plain.localhost", token);
    expect([plain.status, plain.body["code"], plain.body["msg"]]).toEqual([
      400,
      "BAD_REQUEST",
      "JWT authentication is not enabled for this organization",
    ]);
    const none = await onHost("nosuch.localhost", token);
    expect([none.status, none.body["code"]]).toEqual([404, "NONEXISTENT_SUBDOMAIN"]);
  });

  it("ignores Basic credentials: the token alone decides", async () => {
    const r = await s.call(s.seed.owner, "POST", "/jwt/fetch_api_key", {
      token: await hs256({ email: "bob@test.dev" }),
    });
    expect(r.body["email"]).toBe("bob@test.dev");
  });
});
