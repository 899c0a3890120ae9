/**
 * Code playgrounds (seed endpoint 18): administrators add and remove them; the URL
 * template is RFC 6570 with `code` its only variable; Pygments language checked as
 * Zulip; refusals change nothing; register's realm_playgrounds and the complete-list
 * event to every user of the realm.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";

let server: TestServer;
beforeEach(async () => {
  server = await startServer();
});
afterEach(() => server.close());

const python = {
  name: "Python playground",
  pygments_language: "Python",
  url_template: "https://python.example.com{?code}",
};

describe("POST /realm/playgrounds", () => {
  it("an administrator adds playgrounds; register lists them", async () => {
    const { owner, alice } = server.seed;
    const a = await server.call(owner, "POST", "/realm/playgrounds", python);
    expect(a.body).toEqual({ result: "success", msg: "", id: expect.any(Number) });
    const b = await server.call(owner, "POST", "/realm/playgrounds", {
      name: "C++ online",
      pygments_language: "C++",
      url_template: "https://cpp.example.com/#{code}",
    });
    expect(b.status).toBe(200);
    const reg = await server.call(alice, "POST", "/register", { fetch_event_types: ["realm_playgrounds"] });
    expect(reg.body["realm_playgrounds"]).toEqual([
      {
        id: a.body["id"],
        name: "Python playground",
        pygments_language: "Python",
        url_template: "https://python.example.com{?code}",
      },
      {
        id: b.body["id"],
        name: "C++ online",
        pygments_language: "C++",
        url_template: "https://cpp.example.com/#{code}",
      },
    ]);
  });

  it("refuses members, guests and bots; and every invalid field, with Zulip's texts", async () => {
    const { owner, alice, guest, realm } = server.seed;
    const bot = server.t.store.createUser({
      realmId: realm.id,
      email: "pg-bot@test.dev",
      fullName: "PG bot",
      bot: { type: 1, ownerId: owner.id },
    });
    for (const who of [alice, guest, bot]) {
      await expectRejectedUnchanged(
        server,
        () => server.call(who, "POST", "/realm/playgrounds", python),
        400,
        "UNAUTHORIZED_PRINCIPAL",
        "Must be an organization administrator",
      );
    }
    const bad = (over: Record<string, string>, msg: string) =>
      expectRejectedUnchanged(
        server,
        () => server.call(owner, "POST", "/realm/playgrounds", { ...python, ...over }),
        400,
        "BAD_REQUEST",
        msg,
      );
    await bad({ pygments_language: "a$b$c" }, "Invalid characters in pygments language");
    await bad({ pygments_language: "x".repeat(41) }, "Ensure this value has at most 40 characters (it has 41).");
    await bad({ pygments_language: "" }, "This field cannot be blank.");
    await bad({ name: "" }, "This field cannot be blank.");
    await bad(
      { url_template: "https://template.com{?test,code}" },
      '"code" should be the only variable present in the URL template',
    );
    await bad({ url_template: "https://template.com?test={test" }, "Invalid URL template.");
    await bad({ url_template: "https://template.com/}{code}" }, "Invalid URL template.");
    await bad(
      { url_template: "https://template.com{?test}" },
      'Missing the required variable "code" in the URL template',
    );
    await bad({ url_template: "https://template.com" }, 'Missing the required variable "code" in the URL template');
    await expectRejectedUnchanged(
      server,
      () => server.call(owner, "POST", "/realm/playgrounds", { name: "x", pygments_language: "y" }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'url_template' argument",
    );
    await server.call(owner, "POST", "/realm/playgrounds", python);
    await bad({}, "Realm playground with this Realm, Pygments language and Name already exists.");
    // The same name for another language is another playground.
    expect(
      (await server.call(owner, "POST", "/realm/playgrounds", { ...python, pygments_language: "Python3" })).status,
    ).toBe(200);
  });
});

describe("DELETE /realm/playgrounds/{id}", () => {
  it("removes one; unknown IDs and non-administrators are refused", async () => {
    const { owner, alice } = server.seed;
    const id = (await server.call(owner, "POST", "/realm/playgrounds", python)).body["id"] as number;
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "DELETE", `/realm/playgrounds/${id}`),
      400,
      "UNAUTHORIZED_PRINCIPAL",
      "Must be an organization administrator",
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(owner, "DELETE", `/realm/playgrounds/${id + 1}`),
      400,
      "BAD_REQUEST",
      "Invalid playground",
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(owner, "DELETE", `/realm/playgrounds/abc`),
      400,
      "BAD_REQUEST",
      "Invalid playground",
    );
    expect((await server.call(owner, "DELETE", `/realm/playgrounds/${id}`)).body).toEqual({
      result: "success",
      msg: "",
    });
    expect(server.t.store.realmPlaygrounds(server.seed.realm.id)).toEqual([]);
    await expectRejectedUnchanged(
      server,
      () => server.call(owner, "DELETE", `/realm/playgrounds/${id}`),
      400,
      "BAD_REQUEST",
      "Invalid playground",
    );
  });

  it("another realm's playground is refused exactly like a missing one", async () => {
    const other = server.t.store.createRealm({
      subdomain: "elsewhere",
      name: "Elsewhere",
      owner: { email: "boss@else.test", fullName: "Boss" },
    });
    const foreign = server.t.store.addPlayground(other.owner.id, {
      name: "P",
      pygmentsLanguage: "Python",
      urlTemplate: "https://p.test/{code}",
    });
    const missing = await server.call(server.seed.owner, "DELETE", `/realm/playgrounds/${foreign.id + 100}`);
    await expectRejectedUnchanged(
      server,
      () => server.call(server.seed.owner, "DELETE", `/realm/playgrounds/${foreign.id}`),
      400,
      "BAD_REQUEST",
      missing.body["msg"] as string,
    );
    expect(server.t.store.realmPlaygrounds(other.realm.id)).toHaveLength(1);
  });

  it("sends the complete list to every user of the realm, guests included", async () => {
    const { owner, alice, guest } = server.seed;
    const queues = new Map<number, string>();
    for (const u of [owner, alice, guest])
      queues.set(
        u.id,
        (await server.call(u, "POST", "/register", { event_types: ["realm_playgrounds"] })).body["queue_id"] as string,
      );
    const a = (await server.call(owner, "POST", "/realm/playgrounds", python)).body["id"] as number;
    const b = (await server.call(owner, "POST", "/realm/playgrounds", { ...python, name: "Other" })).body[
      "id"
    ] as number;
    await server.call(owner, "DELETE", `/realm/playgrounds/${a}`);
    for (const u of [owner, alice, guest]) {
      const r = await server.call(u, "GET", "/events", {
        queue_id: queues.get(u.id)!,
        last_event_id: -1,
        dont_block: true,
      });
      const evs = r.body["events"] as { type: string; realm_playgrounds: { id: number }[] }[];
      expect(evs.map((e) => e.type)).toEqual(["realm_playgrounds", "realm_playgrounds", "realm_playgrounds"]);
      expect(evs.map((e) => e.realm_playgrounds.map((p) => p.id))).toEqual([[a], [a, b], [b]]);
    }
  });
});
