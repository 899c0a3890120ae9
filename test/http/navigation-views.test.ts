/**
 * Navigation views over HTTP: GET/POST /navigation_views, PATCH/DELETE /navigation_views/{fragment}, Zulip's
 * refusals (nothing changed by one), navigation_view events to the owner alone, register's section, and the views
 * kept across a restart of the store.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.close());

const views = async (user: User) => {
  const r = await s.call(user, "GET", "/navigation_views");
  expect(r.body).toMatchObject({ result: "success", msg: "" });
  return r.body["navigation_views"];
};
const ok = async (user: User, method: string, path: string, params: Record<string, unknown> = {}) => {
  const r = await s.call(user, method, path, params);
  expect(r.body, JSON.stringify(r.body)).toEqual({ result: "success", msg: "" });
};
const at = (fragment: string) => `/navigation_views/${encodeURIComponent(fragment)}`;

async function register(user: User): Promise<string> {
  const r = await s.call(user, "POST", "/register", { event_types: ["navigation_view"] });
  expect(r.status).toBe(200);
  return r.body["queue_id"] as string;
}
async function events(user: User, queueId: string): Promise<Record<string, unknown>[]> {
  const r = await s.call(user, "GET", "/events", { queue_id: queueId, last_event_id: -1, dont_block: true });
  expect(r.status).toBe(200);
  return (r.body["events"] as Record<string, unknown>[]).map(({ id: _id, ...event }) => event);
}

describe("navigation views", () => {
  it("adds, edits and removes the caller's views, telling their queues alone", async () => {
    const { alice, bob } = s.seed;
    const aliceQueue = await register(alice);
    const bobQueue = await register(bob);
    expect(await views(alice)).toEqual([]);
    await ok(alice, "POST", "/navigation_views", { fragment: "inbox", is_pinned: false });
    await ok(alice, "POST", "/navigation_views", { fragment: " narrow/is/alerted ", is_pinned: true, name: "Alerts" });
    expect(await views(alice)).toEqual([
      { fragment: "inbox", is_pinned: false, name: null },
      { fragment: "narrow/is/alerted", is_pinned: true, name: "Alerts" },
    ]);
    await ok(alice, "PATCH", at("narrow/is/alerted"), { name: "Alert words" });
    await ok(alice, "PATCH", at("inbox"), { is_pinned: true });
    await ok(alice, "DELETE", at("inbox"));
    expect(await views(alice)).toEqual([{ fragment: "narrow/is/alerted", is_pinned: true, name: "Alert words" }]);
    expect(await events(alice, aliceQueue)).toEqual([
      {
        type: "navigation_view",
        op: "add",
        navigation_view: { fragment: "inbox", is_pinned: false, name: null },
      },
      {
        type: "navigation_view",
        op: "add",
        navigation_view: { fragment: "narrow/is/alerted", is_pinned: true, name: "Alerts" },
      },
      { type: "navigation_view", op: "update", fragment: "narrow/is/alerted", data: { name: "Alert words" } },
      { type: "navigation_view", op: "update", fragment: "inbox", data: { is_pinned: true } },
      { type: "navigation_view", op: "remove", fragment: "inbox" },
    ]);
    expect(await events(bob, bobQueue)).toEqual([]);
    expect(await views(bob)).toEqual([]);
    const registered = await s.call(alice, "POST", "/register", { fetch_event_types: ["navigation_views"] });
    expect(registered.body["navigation_views"]).toEqual(await views(alice));
  });

  it("refuses Zulip's bad requests and another user's views, changing nothing", async () => {
    const { alice, bob } = s.seed;
    await ok(alice, "POST", "/navigation_views", { fragment: "narrow/is/starred", is_pinned: true });
    await ok(alice, "POST", "/navigation_views", { fragment: "narrow/channel/9", is_pinned: false, name: "Nine" });
    const cases: [User, string, string, Record<string, unknown>, number, string, string][] = [
      [
        alice,
        "POST",
        "/navigation_views",
        { fragment: "narrow/x", is_pinned: true },
        400,
        "BAD_REQUEST",
        "Custom views must have a valid name.",
      ],
      [
        alice,
        "POST",
        "/navigation_views",
        { fragment: "feed", is_pinned: true, name: "F" },
        400,
        "BAD_REQUEST",
        "Built-in views cannot have a custom name.",
      ],
      [
        alice,
        "POST",
        "/navigation_views",
        { fragment: "narrow/is/starred", is_pinned: false },
        400,
        "BAD_REQUEST",
        "Navigation view already exists.",
      ],
      [
        alice,
        "POST",
        "/navigation_views",
        { fragment: "narrow/y", is_pinned: true, name: "Nine" },
        400,
        "BAD_REQUEST",
        "Navigation view already exists.",
      ],
      [
        alice,
        "POST",
        "/navigation_views",
        { fragment: "  ", is_pinned: true, name: "B" },
        400,
        "BAD_REQUEST",
        "fragment cannot be blank",
      ],
      [
        alice,
        "POST",
        "/navigation_views",
        { fragment: "narrow/z", name: "Z" },
        400,
        "REQUEST_VARIABLE_MISSING",
        "Missing 'is_pinned' argument",
      ],
      [
        alice,
        "PATCH",
        at("narrow/is/starred"),
        { name: "S" },
        400,
        "BAD_REQUEST",
        "Built-in views cannot have a custom name.",
      ],
      [alice, "PATCH", at("narrow/channel/9"), { name: "Nine" }, 400, "BAD_REQUEST", "Navigation view already exists."],
      [alice, "PATCH", at("narrow/none"), { is_pinned: true }, 404, "BAD_REQUEST", "Navigation view does not exist."],
      [alice, "DELETE", at("narrow/none"), {}, 404, "BAD_REQUEST", "Navigation view does not exist."],
      [
        bob,
        "PATCH",
        at("narrow/channel/9"),
        { is_pinned: true },
        404,
        "BAD_REQUEST",
        "Navigation view does not exist.",
      ],
      [bob, "DELETE", at("narrow/channel/9"), {}, 404, "BAD_REQUEST", "Navigation view does not exist."],
    ];
    for (const [user, method, path, params, status, code, msg] of cases) {
      await expectRejectedUnchanged(s, () => s.call(user, method, path, params), status, code, msg);
    }
    expect((await s.call(null, "GET", "/navigation_views")).status).toBe(401);
  });

  it("keeps the views across a restart", async () => {
    const { alice } = s.seed;
    const before = await views(alice);
    expect(before).not.toEqual([]);
    const store = s.t.reopen();
    expect(store.navigationViews(alice.id)).toEqual(
      (before as { fragment: string; is_pinned: boolean; name: string | null }[]).map((v) => ({
        fragment: v.fragment,
        isPinned: v.is_pinned,
        name: v.name,
      })),
    );
  });
});
