/**
 * The organization's email domains over HTTP (GET/POST /realm/domains, PATCH/DELETE
 * /realm/domains/{domain}): owners change them, everyone reads them; Zulip's domain
 * checks and messages; refusals change nothing; register's realm_domains and the
 * realm_domains events; removing the last domain lifts emails_restricted_to_domains.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";
import { roleMatrix, type RoleMatrix } from "../support/role-matrix.js";

let server: TestServer;
let m: RoleMatrix;
beforeEach(async () => {
  server = await startServer({ externalHost: "chat.example.com" });
  m = roleMatrix(server);
});
afterEach(() => server.close());

const listed = async (user: User) => (await m.as(user, "GET", "/realm/domains")).body["domains"];

async function openQueue(user: User) {
  const reg = await server.call(user, "POST", "/register", { event_types: ["realm_domains", "realm"] });
  return { queue: reg.body["queue_id"] as string, last: reg.body["last_event_id"] as number };
}

async function eventsOf(user: User, q: { queue: string; last: number }) {
  const polled = await server.call(user, "GET", "/events", { queue_id: q.queue, last_event_id: q.last });
  return (polled.body["events"] as Record<string, unknown>[]).map(({ id: _id, ...e }) => e);
}

describe("realm domains", () => {
  it("owners add, change and remove them; everyone reads them", async () => {
    const ownerOnly = "Must be an organization owner";
    for (const [name, user] of m.everyone) {
      const r = await m.as(user, "POST", "/realm/domains", {
        domain: `${name.replace(" ", "-")}.example`,
        allow_subdomains: false,
      });
      const ok = name === "owner" || name === "another realm";
      expect([name, r.status, r.body["msg"]]).toEqual([name, ok ? 200 : 400, ok ? "" : ownerOnly]);
      if (!ok) expect(r.body["code"]).toBe("UNAUTHORIZED_PRINCIPAL");
      expect([name, (await m.as(user, "GET", "/realm/domains")).status]).toEqual([name, 200]);
    }
    for (const method of ["PATCH", "DELETE"]) {
      for (const [name, user] of m.everyone) {
        if (name === "owner") continue;
        const r = await m.as(user, method, "/realm/domains/owner.example", { allow_subdomains: true });
        // Another realm's owner names a domain their realm does not have.
        const msg = name === "another realm" ? "No entry found for domain owner.example." : ownerOnly;
        expect([name, method, r.status, r.body["msg"]]).toEqual([name, method, 400, msg]);
      }
    }
    expect(await listed(m.users.guest)).toEqual([{ domain: "owner.example", allow_subdomains: false }]);
    expect(await listed(m.users["another realm"])).toEqual([
      { domain: "another-realm.example", allow_subdomains: false },
    ]);
  });

  it("answers new_domain, lists in order, sends realm_domains events and fills register", async () => {
    const { owner, bob } = server.seed;
    const q = await openQueue(bob);
    const a = await server.call(owner, "POST", "/realm/domains", { domain: "  Zulip.ORG ", allow_subdomains: true });
    expect(a.body).toEqual({ result: "success", msg: "", new_domain: [expect.any(Number), "zulip.org"] });
    await server.call(owner, "POST", "/realm/domains", { domain: "acme.test", allow_subdomains: false });
    expect((await server.call(owner, "PATCH", "/realm/domains/acme.test", { allow_subdomains: true })).status).toBe(
      200,
    );
    expect(await listed(bob)).toEqual([
      { domain: "zulip.org", allow_subdomains: true },
      { domain: "acme.test", allow_subdomains: true },
    ]);
    const reg = await server.call(bob, "POST", "/register", { fetch_event_types: ["realm_domains"] });
    expect(reg.body["realm_domains"]).toEqual(await listed(bob));
    expect((await server.call(owner, "DELETE", "/realm/domains/zulip.org")).status).toBe(200);
    expect(await eventsOf(bob, q)).toEqual([
      { type: "realm_domains", op: "add", realm_domain: { domain: "zulip.org", allow_subdomains: true } },
      { type: "realm_domains", op: "add", realm_domain: { domain: "acme.test", allow_subdomains: false } },
      { type: "realm_domains", op: "change", realm_domain: { domain: "acme.test", allow_subdomains: true } },
      { type: "realm_domains", op: "remove", domain: "zulip.org" },
    ]);
  });

  it("removing the last domain turns emails_restricted_to_domains off, with its realm update", async () => {
    const { owner, bob } = server.seed;
    await server.call(owner, "POST", "/realm/domains", { domain: "acme.test", allow_subdomains: false });
    await server.call(owner, "POST", "/realm/domains", { domain: "other.test", allow_subdomains: false });
    expect((await server.call(owner, "PATCH", "/realm", { emails_restricted_to_domains: true })).status).toBe(200);
    const q = await openQueue(bob);
    await server.call(owner, "DELETE", "/realm/domains/acme.test");
    const restricted = async () =>
      (await server.call(bob, "POST", "/register", { fetch_event_types: ["realm"] })).body[
        "realm_emails_restricted_to_domains"
      ];
    expect(await restricted()).toBe(true);
    await server.call(owner, "DELETE", "/realm/domains/other.test");
    expect(await restricted()).toBe(false);
    expect(await eventsOf(bob, q)).toEqual([
      { type: "realm_domains", op: "remove", domain: "acme.test" },
      { type: "realm", op: "update", property: "emails_restricted_to_domains", value: false },
      { type: "realm_domains", op: "remove", domain: "other.test" },
    ]);
  });

  it("refuses bad domains, duplicates and unknown ones with Zulip's messages, changing nothing", async () => {
    const { owner } = server.seed;
    await server.call(owner, "POST", "/realm/domains", { domain: "acme.test", allow_subdomains: false });
    const cases: [string, string, Record<string, unknown>, string][] = [
      ["POST", "/realm/domains", { domain: "  ", allow_subdomains: false }, "Invalid domain: Domain can't be empty."],
      [
        "POST",
        "/realm/domains",
        { domain: "localhost", allow_subdomains: false },
        "Invalid domain: Domain must have at least one dot (.)",
      ],
      [
        "POST",
        "/realm/domains",
        { domain: `${"a".repeat(251)}.test`, allow_subdomains: false },
        "Invalid domain: Domain is too long",
      ],
      [
        "POST",
        "/realm/domains",
        { domain: ".acme.test", allow_subdomains: false },
        "Invalid domain: Domain cannot start or end with a dot (.)",
      ],
      [
        "POST",
        "/realm/domains",
        { domain: "acme..test", allow_subdomains: false },
        "Invalid domain: Consecutive '.' are not allowed.",
      ],
      [
        "POST",
        "/realm/domains",
        { domain: "-acme.test", allow_subdomains: false },
        "Invalid domain: Subdomains cannot start or end with a '-'.",
      ],
      [
        "POST",
        "/realm/domains",
        { domain: "ac_me.test", allow_subdomains: false },
        "Invalid domain: Domain can only have letters, numbers, '.' and '-'s.",
      ],
      [
        "POST",
        "/realm/domains",
        { domain: "ACME.test", allow_subdomains: true },
        "The domain acme.test is already a part of your organization.",
      ],
      // The path names the domain as stored: no case folding (Zulip's lookup).
      ["PATCH", "/realm/domains/ACME.test", { allow_subdomains: true }, "No entry found for domain ACME.test."],
      ["DELETE", "/realm/domains/nowhere.test", {}, "No entry found for domain nowhere.test."],
    ];
    for (const [method, path, params, msg] of cases)
      await expectRejectedUnchanged(server, () => server.call(owner, method, path, params), 400, "BAD_REQUEST", msg);
    await expectRejectedUnchanged(
      server,
      () => server.call(owner, "POST", "/realm/domains", { domain: "x.test" }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'allow_subdomains' argument",
    );
    expect(await listed(owner)).toEqual([{ domain: "acme.test", allow_subdomains: false }]);
  });
});

describe("emails_restricted_to_domains", () => {
  async function restrictTo(domains: [string, boolean][]) {
    const { owner } = server.seed;
    for (const [domain, allow] of domains)
      await server.call(owner, "POST", "/realm/domains", { domain, allow_subdomains: allow });
    expect((await server.call(owner, "PATCH", "/realm", { emails_restricted_to_domains: true })).status).toBe(200);
  }

  it("invitations: addresses outside the domains (or with +) refuse the whole request", async () => {
    const { owner } = server.seed;
    await restrictTo([
      ["acme.test", false],
      ["corp.test", true],
    ]);
    const body = await expectRejectedUnchanged(
      server,
      () =>
        server.call(owner, "POST", "/invites", {
          invitee_emails: "a@acme.test, b@eu.corp.test, c@eu.acme.test, d+x@acme.test, e@other.test",
          stream_ids: [],
        }),
      400,
      "INVITATION_FAILED",
      "Some emails did not validate, so we didn't send any invitations.",
    );
    expect(body["errors"]).toEqual([
      ["c@eu.acme.test", "Outside your domain.", false],
      ["d+x@acme.test", "Email addresses containing + are not allowed.", false],
      ["e@other.test", "Outside your domain.", false],
    ]);
    const ok = await server.call(owner, "POST", "/invites", {
      invitee_emails: "a@ACME.test, b@eu.corp.test, c@corp.test",
      stream_ids: [],
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    // Lifted: any address again.
    expect((await server.call(owner, "PATCH", "/realm", { emails_restricted_to_domains: false })).status).toBe(200);
    const open = await server.call(owner, "POST", "/invites", { invitee_emails: "e@other.test", stream_ids: [] });
    expect(open.status).toBe(200);
  });

  it("POST /users and the join form refuse addresses outside the domains", async () => {
    const { owner } = server.seed;
    await restrictTo([["acme.test", false]]);
    server.t.store.setCanCreateUsers(owner.id, true);
    const create = (email: string) =>
      server.call(owner, "POST", "/users", { email, password: "correct horse battery", full_name: "New One" });
    await expectRejectedUnchanged(
      server,
      () => create("n@other.test"),
      400,
      "BAD_REQUEST",
      "Email 'n@other.test' not allowed in this organization",
    );
    await expectRejectedUnchanged(
      server,
      () => create("n+1@acme.test"),
      400,
      "BAD_REQUEST",
      "Email addresses containing + are not allowed.",
    );
    expect((await create("n@acme.test")).status).toBe(200);

    const link = (await server.call(owner, "POST", "/invites/multiuse", {})).body["invite_link"] as string;
    const join = async (email: string) => {
      const r = await fetch(`${server.base}${new URL(link).pathname}`, {
        method: "POST",
        body: new URLSearchParams({ email, full_name: "Joiner", password: "correct horse battery" }),
      });
      return { status: r.status, text: await r.text() };
    };
    const outside = await join("j@other.test");
    expect(outside.status).toBe(400);
    expect(outside.text).toContain(
      "Your email address, j@other.test, is not in one of the domains that are allowed to register",
    );
    expect((await join("j@acme.test")).status).toBe(200);
  });
});
