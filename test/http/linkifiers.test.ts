/**
 * Linkifiers over HTTP (GET /realm/linkifiers, POST /realm/filters, PATCH and DELETE
 * /realm/filters/{filter_id}, PATCH /realm/linkifiers): permission matrices over
 * owner, administrator, moderator, member, guest, bot and another realm's owner;
 * refusals change nothing; Zulip's `errors` field; register's realm_linkifiers and the
 * realm_linkifiers events for clients with linkifier_url_template only; topic_links in
 * message objects and in update_message events.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";
import { roleMatrix, type RoleMatrix } from "../support/role-matrix.js";

let server: TestServer;
let matrix: RoleMatrix;
let admin: User;
let stranger: User;
beforeEach(async () => {
  server = await startServer({ externalHost: "chat.example.com" });
  matrix = roleMatrix(server, "chat.example.com");
  ({ admin, "another realm": stranger } = matrix.users);
});
afterEach(() => server.close());

/** A request as `user`, to their own realm (another realm's owner asks their own subdomain). */
const as = (user: User, method: string, path: string, params: Record<string, unknown> = {}) =>
  matrix.as(user, method, path, params);

const everyone = () => matrix.everyone;

const TRAC = { pattern: "#(?P<id>[0-9]{2,8})", url_template: "https://trac.example.com/ticket/{id}" };

async function addLinkifier(params: Record<string, unknown> = TRAC, user: User = server.seed.owner): Promise<number> {
  const r = await as(user, "POST", "/realm/filters", params);
  expect(r.body, JSON.stringify(r.body)).toMatchObject({ result: "success" });
  return r.body["id"] as number;
}

const listed = async (user: User) =>
  (await as(user, "GET", "/realm/linkifiers")).body["linkifiers"] as Record<string, unknown>[];

describe("linkifier permissions", () => {
  it("administrators add, change, reorder and remove; everyone reads their own realm's", async () => {
    const adminOnly = "Must be an organization administrator";
    const mine = await addLinkifier();
    const theirs = await addLinkifier(
      { pattern: "BEE-(?P<n>[0-9]+)", url_template: "https://bee.example/{n}" },
      stranger,
    );
    for (const [role, user] of everyone()) {
      const canAdminister = role === "owner" || role === "admin" || role === "another realm";
      const ownId = role === "another realm" ? theirs : mine;
      expect(
        (await listed(user)).map((l) => l["id"]),
        role,
      ).toContain(ownId);
      // Reordering names every linkifier of the realm: read them when the request is made.
      const reversed = async () => (await listed(user)).map((l) => l["id"]).reverse();
      const attempts: [string, string, () => Promise<Record<string, unknown>>][] = [
        [
          "PATCH",
          `/realm/filters/${ownId}`,
          async () => ({ pattern: `${role}#(?P<id>[0-9]+)`, url_template: "https://y.example/{id}" }),
        ],
        ["PATCH", "/realm/linkifiers", async () => ({ ordered_linkifier_ids: JSON.stringify(await reversed()) })],
        [
          "POST",
          "/realm/filters",
          async () => ({ pattern: `${role}-(?P<id>[0-9]+)`, url_template: "https://x.example/{id}" }),
        ],
      ];
      for (const [method, path, paramsOf] of attempts) {
        const params = await paramsOf();
        if (canAdminister) {
          const r = await as(user, method, path, params);
          expect(r.body, `${role} ${method} ${path}`).toMatchObject({ result: "success" });
        } else {
          await expectRejectedUnchanged(
            server,
            () => as(user, method, path, params),
            400,
            "UNAUTHORIZED_PRINCIPAL",
            adminOnly,
          );
        }
      }
      if (!canAdminister) {
        expect(
          (await listed(user)).map((l) => l["id"]),
          role,
        ).toContain(ownId);
        await expectRejectedUnchanged(
          server,
          () => as(user, "DELETE", `/realm/filters/${ownId}`),
          400,
          "UNAUTHORIZED_PRINCIPAL",
          adminOnly,
        );
      }
    }
    // Each realm's administrators know only their own linkifiers.
    await expectRejectedUnchanged(
      server,
      () => as(server.seed.owner, "DELETE", `/realm/filters/${theirs}`),
      400,
      "BAD_REQUEST",
      "Linkifier not found.",
    );
    await expectRejectedUnchanged(
      server,
      () => as(stranger, "PATCH", `/realm/filters/${mine}`, TRAC),
      400,
      "BAD_REQUEST",
      "Linkifier not found.",
    );
    for (const missing of ["999999", "abc", "-1"])
      await expectRejectedUnchanged(
        server,
        () => as(admin, "DELETE", `/realm/filters/${missing}`),
        400,
        "BAD_REQUEST",
        "Linkifier not found.",
      );
    expect((await as(admin, "DELETE", `/realm/filters/${mine}`)).body).toEqual({ result: "success", msg: "" });
    expect((await listed(server.seed.bob)).map((l) => l["pattern"])).toEqual([
      "owner-(?P<id>[0-9]+)",
      "admin-(?P<id>[0-9]+)",
    ]);
    expect((await listed(stranger)).map((l) => l["id"])).toContain(theirs);
  });
});

describe("linkifier requests", () => {
  it("answers Zulip's fields and refusals with `errors`, changing nothing", async () => {
    const id = await addLinkifier();
    expect(await listed(server.seed.guest)).toEqual([
      { pattern: "#(?P<id>[0-9]{2,8})", url_template: "https://trac.example.com/ticket/{id}", id },
    ]);
    const body = await expectRejectedUnchanged(
      server,
      () => as(admin, "POST", "/realm/filters", { pattern: "(foo", url_template: "https://x.example/" }),
      400,
      "BAD_REQUEST",
      "Bad regular expression: missing ): (foo",
    );
    expect(body["errors"]).toEqual({ __all__: ["Bad regular expression: missing ): (foo"] });
    await expectRejectedUnchanged(
      server,
      () => as(admin, "PATCH", `/realm/filters/${id}`, { pattern: "#(?P<id>[123])", url_template: "{id" }),
      400,
      "BAD_REQUEST",
      "Invalid URL template.",
    );
    await expectRejectedUnchanged(
      server,
      () => as(admin, "POST", "/realm/filters", { pattern: "#(?P<id>[123])" }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'url_template' argument",
    );
    await expectRejectedUnchanged(
      server,
      () => as(admin, "PATCH", "/realm/linkifiers", { ordered_linkifier_ids: JSON.stringify([id, id]) }),
      400,
      "BAD_REQUEST",
      "The ordered list must not contain duplicated linkifiers",
    );
    await expectRejectedUnchanged(
      server,
      () => as(admin, "PATCH", "/realm/linkifiers", { ordered_linkifier_ids: "[]" }),
      400,
      "BAD_REQUEST",
      "The ordered list must enumerate all existing linkifiers exactly once",
    );
    const r = await as(admin, "PATCH", `/realm/filters/${id}`, {
      pattern: "#(?P<id>[0-9]+)",
      url_template: "https://realm.com/my_realm_filter/issues/{id}",
    });
    expect(r.body).toEqual({ result: "success", msg: "" });
    expect(await listed(server.seed.bob)).toEqual([
      { pattern: "#(?P<id>[0-9]+)", url_template: "https://realm.com/my_realm_filter/issues/{id}", id },
    ]);
  });

  it("register lists them and events carry the whole list, only for clients with linkifier_url_template", async () => {
    const { bob, guest } = server.seed;
    const register = async (user: User, capable: boolean) =>
      (
        await as(user, "POST", "/register", {
          event_types: JSON.stringify(["realm_linkifiers", "realm_filters"]),
          client_capabilities: JSON.stringify(capable ? { linkifier_url_template: true } : {}),
        })
      ).body;
    const a = await addLinkifier();
    const capable = await register(guest, true);
    const legacy = await register(bob, false);
    expect(capable["realm_linkifiers"]).toEqual(await listed(guest));
    expect(capable["realm_filters"]).toEqual([]);
    expect(legacy["realm_linkifiers"]).toEqual([]);
    expect(legacy["realm_filters"]).toEqual([]);

    const b = await addLinkifier({ pattern: "B-(?P<id>[0-9]+)", url_template: "https://b.example/{id}" });
    expect(
      (await as(admin, "PATCH", "/realm/linkifiers", { ordered_linkifier_ids: JSON.stringify([b, a]) })).status,
    ).toBe(200);
    expect((await as(admin, "DELETE", `/realm/filters/${a}`)).status).toBe(200);
    const poll = async (reg: Record<string, unknown>, user: User) =>
      (
        (
          await as(user, "GET", "/events", {
            queue_id: reg["queue_id"],
            last_event_id: reg["last_event_id"],
            dont_block: true,
          })
        ).body["events"] as Record<string, unknown>[]
      ).map(({ id: _id, ...e }) => e);
    const bLinkifier = { pattern: "B-(?P<id>[0-9]+)", url_template: "https://b.example/{id}", id: b };
    const aLinkifier = { ...TRAC, id: a };
    expect(await poll(capable, guest)).toEqual([
      { type: "realm_linkifiers", realm_linkifiers: [aLinkifier, bLinkifier] },
      { type: "realm_linkifiers", realm_linkifiers: [bLinkifier, aLinkifier] },
      { type: "realm_linkifiers", realm_linkifiers: [bLinkifier] },
    ]);
    expect(await poll(legacy, bob)).toEqual([]);
  });

  it("message objects and update_message events carry topic_links; content sent before keeps its HTML", async () => {
    const { alice, bob } = server.seed;
    const send = async (topic: string, content: string) =>
      (await as(alice, "POST", "/messages", { type: "stream", to: "general", topic, content })).body["id"] as number;
    const old = await send("about #123", "fix #123");
    // Fetched (and cached) before the realm has linkifiers: the cached message object must not be served again.
    const early = (await as(bob, "GET", "/messages", { anchor: "newest", num_before: 1, num_after: 0 })).body[
      "messages"
    ] as Record<string, unknown>[];
    expect(early[0]?.["topic_links"]).toEqual([]);
    await addLinkifier();
    const fresh = await send("about #123 and #4567", "fix #123");
    const dm = (await as(alice, "POST", "/messages", { type: "direct", to: JSON.stringify([bob.id]), content: "#123" }))
      .body["id"] as number;
    const fetched = (await as(bob, "GET", "/messages", { anchor: "newest", num_before: 10, num_after: 0 })).body[
      "messages"
    ] as Record<string, unknown>[];
    const byId = new Map(fetched.map((m) => [m["id"], m]));
    const link = (id: string) => ({ text: `#${id}`, url: `https://trac.example.com/ticket/${id}` });
    expect(byId.get(old)?.["topic_links"]).toEqual([link("123")]);
    expect(byId.get(old)?.["content"]).toBe("<p>fix #123</p>");
    expect(byId.get(fresh)?.["topic_links"]).toEqual([link("123"), link("4567")]);
    expect(byId.get(fresh)?.["content"]).toBe('<p>fix <a href="https://trac.example.com/ticket/123">#123</a></p>');
    expect(byId.get(dm)?.["topic_links"]).toEqual([]);

    const reg = (await as(bob, "POST", "/register", { event_types: JSON.stringify(["update_message", "message"]) }))
      .body;
    expect(
      (await as(alice, "PATCH", `/messages/${fresh}`, { topic: "now #99", propagate_mode: "change_one" })).status,
    ).toBe(200);
    await send("and #77", "x");
    const events = (
      await as(bob, "GET", "/events", {
        queue_id: reg["queue_id"],
        last_event_id: reg["last_event_id"],
        dont_block: true,
      })
    ).body["events"] as Record<string, unknown>[];
    const update = events.find((e) => e["type"] === "update_message");
    expect(update?.["topic_links"]).toEqual([link("99")]);
    // The last message event: the move itself posts a notice in the new topic first.
    const message = events.filter((e) => e["type"] === "message").at(-1)?.["message"] as Record<string, unknown>;
    expect(message["topic_links"]).toEqual([link("77")]);
  });
});
