/**
 * Drafts and saved snippets over HTTP: create, list, edit, delete; Zulip's checks
 * with nothing changed on refusal; another user's IDs answer like missing ones;
 * register sections and the events each change emits to the owner's queues only.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";

let s: TestServer;
beforeEach(async () => {
  s = await startServer();
});
afterEach(() => s.close());

type Ev = Record<string, unknown> & { type: string; id: number };

async function register(user: User, types: string[]): Promise<string> {
  const r = await s.call(user, "POST", "/register", { event_types: types });
  expect(r.status).toBe(200);
  return r.body["queue_id"] as string;
}

async function events(user: User, queueId: string): Promise<Ev[]> {
  const r = await s.call(user, "GET", "/events", { queue_id: queueId, last_event_id: -1, dont_block: true });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body["events"] as Ev[]).filter((e) => e.type !== "heartbeat");
}

const create = (user: User, drafts: unknown) => s.call(user, "POST", "/drafts", { drafts });

describe("drafts", () => {
  it("creates channel, direct and unaddressed drafts, lists them newest first, and tells the owner's clients", async () => {
    const { alice, bob, owner, general } = s.seed;
    const qAlice = await register(alice, ["drafts"]);
    const qBob = await register(bob, ["drafts"]);
    const r = await create(alice, [
      { type: "stream", to: [general.id], topic: "plans", content: "channel draft", timestamp: 1000 },
      {
        type: "private",
        to: [bob.id, alice.id, owner.id],
        topic: "ignored",
        content: "group dm  \n",
        timestamp: 3000.5,
      },
      { type: "private", to: [alice.id], topic: "", content: "note to self", timestamp: 2000 },
      { type: "", to: [5, 6], topic: "ignored", content: "unaddressed" },
      { type: "private", to: [], topic: "", content: "nobody yet", timestamp: 500 },
    ]);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const ids = r.body["ids"] as number[];
    expect(ids).toHaveLength(5);
    const now = s.t.store.findUser(alice.id) ? Math.floor(Date.now() / 1000) : 0;
    const list = await s.call(alice, "GET", "/drafts");
    expect(list.status).toBe(200);
    expect(list.body["count"]).toBe(5);
    const drafts = list.body["drafts"] as Record<string, unknown>[];
    expect(drafts.map((d) => d["id"])).toEqual([ids[3], ids[1], ids[2], ids[0], ids[4]]);
    expect(drafts[1]).toEqual({
      id: ids[1],
      type: "private",
      to: [owner.id, bob.id].sort((a, b) => a - b),
      topic: "",
      content: "group dm",
      timestamp: 3000,
    });
    expect(drafts[2]).toEqual({
      id: ids[2],
      type: "private",
      to: [alice.id],
      topic: "",
      content: "note to self",
      timestamp: 2000,
    });
    expect(drafts[3]).toEqual({
      id: ids[0],
      type: "stream",
      to: [general.id],
      topic: "plans",
      content: "channel draft",
      timestamp: 1000,
    });
    expect(drafts[0]).toMatchObject({ type: "", to: [], topic: "", content: "unaddressed" });
    expect(Math.abs((drafts[0]!["timestamp"] as number) - now)).toBeLessThan(5);
    // A direct draft without recipients reads back unaddressed, as in Zulip.
    expect(drafts[4]).toMatchObject({ type: "", to: [] });
    // Bob sees none of them.
    expect((await s.call(bob, "GET", "/drafts")).body).toMatchObject({ count: 0, drafts: [] });
    const got = await events(alice, qAlice);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ type: "drafts", op: "add" });
    expect((got[0]!["drafts"] as { id: number }[]).map((d) => d.id)).toEqual(ids);
    expect(await events(bob, qBob)).toEqual([]);
    // register's section: newest first, the owner's only.
    const reg = await s.call(alice, "POST", "/register", { fetch_event_types: ["drafts"] });
    expect(reg.body["drafts"]).toEqual(drafts);
    expect((await s.call(bob, "POST", "/register", { fetch_event_types: ["drafts"] })).body["drafts"]).toEqual([]);
  });

  it("edits and deletes with events; another user's draft answers exactly like a missing one", async () => {
    const { alice, bob, general } = s.seed;
    const [id] = (await create(alice, [{ type: "", to: [], topic: "", content: "first" }])).body["ids"] as number[];
    const q = await register(alice, ["drafts"]);
    const edited = await s.call(alice, "PATCH", `/drafts/${id}`, {
      draft: { type: "stream", to: [general.id], topic: "t", content: "second", timestamp: 42 },
    });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect((await s.call(alice, "GET", "/drafts")).body["drafts"]).toEqual([
      { id, type: "stream", to: [general.id], topic: "t", content: "second", timestamp: 42 },
    ]);
    const draft = { type: "", to: [], topic: "", content: "x" };
    for (const missing of [id! + 1000, 0]) {
      await expectRejectedUnchanged(
        s,
        () => s.call(alice, "PATCH", `/drafts/${missing}`, { draft }),
        404,
        "BAD_REQUEST",
        "Draft does not exist",
      );
    }
    await expectRejectedUnchanged(
      s,
      () => s.call(bob, "PATCH", `/drafts/${id}`, { draft }),
      404,
      "BAD_REQUEST",
      "Draft does not exist",
    );
    await expectRejectedUnchanged(
      s,
      () => s.call(bob, "DELETE", `/drafts/${id}`),
      404,
      "BAD_REQUEST",
      "Draft does not exist",
    );
    expect((await s.call(alice, "DELETE", `/drafts/${id}`)).status).toBe(200);
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "DELETE", `/drafts/${id}`),
      404,
      "BAD_REQUEST",
      "Draft does not exist",
    );
    expect((await s.call(alice, "GET", "/drafts")).body["count"]).toBe(0);
    expect(await events(alice, q)).toEqual([
      expect.objectContaining({
        type: "drafts",
        op: "update",
        draft: { id, type: "stream", to: [general.id], topic: "t", content: "second", timestamp: 42 },
      }),
      expect.objectContaining({ type: "drafts", op: "remove", draft_id: id }),
    ]);
  });

  it("truncates long topics like messages and keeps timestamps to the second on the wire", async () => {
    const { alice, general } = s.seed;
    const r = await create(alice, [
      { type: "stream", to: [general.id], topic: "é".repeat(100), content: "x", timestamp: 12.9 },
    ]);
    expect(r.status).toBe(200);
    const [d] = (await s.call(alice, "GET", "/drafts")).body["drafts"] as Record<string, unknown>[];
    expect(d).toMatchObject({ topic: `${"é".repeat(57)}...`, timestamp: 12 });
  });

  const refusals: readonly [string, (seed: TestServer["seed"]) => unknown, string][] = [
    [
      "a channel draft with two channels",
      (x) => [{ type: "stream", to: [x.general.id, x.secret.id], topic: "t", content: "c" }],
      "Must specify exactly 1 channel ID for channel messages",
    ],
    [
      "a channel draft without a channel",
      () => [{ type: "stream", to: [], topic: "t", content: "c" }],
      "Must specify exactly 1 channel ID for channel messages",
    ],
    [
      "a channel that does not exist",
      () => [{ type: "stream", to: [99999], topic: "t", content: "c" }],
      "Invalid channel ID",
    ],
    [
      "a private channel bob is not in",
      (x) => [{ type: "stream", to: [x.secret.id], topic: "t", content: "c" }],
      "Invalid channel ID",
    ],
    [
      "a null byte in the topic",
      (x) => [{ type: "stream", to: [x.general.id], topic: "a\u0000b", content: "c" }],
      "Topic must not contain null bytes",
    ],
    [
      "a null byte in the content",
      () => [{ type: "", to: [], topic: "", content: "a\u0000b" }],
      "Message must not contain null bytes",
    ],
    ["empty content", () => [{ type: "", to: [], topic: "", content: "  \n " }], "Message must not be empty"],
    [
      "a user who does not exist",
      () => [{ type: "private", to: [99999], topic: "", content: "c" }],
      "Invalid user ID 99999",
    ],
    [
      "a negative timestamp",
      () => [{ type: "", to: [], topic: "", content: "c", timestamp: -1 }],
      "Timestamp must not be negative.",
    ],
    ["an unknown type", () => [{ type: "channel", to: [], topic: "", content: "c" }], 'Invalid drafts[0]["type"]'],
    [
      "an extra key",
      () => [{ type: "", to: [], topic: "", content: "c", id: 3 }],
      'Argument "id" at drafts is unexpected',
    ],
    ["a missing key", () => [{ type: "", to: [], content: "c" }], 'drafts[0]["topic"] is not a string'],
    [
      "a bad second draft (nothing is stored)",
      (x) => [
        { type: "", to: [], topic: "", content: "fine" },
        { type: "stream", to: [x.secret.id], topic: "t", content: "c" },
      ],
      "Invalid channel ID",
    ],
  ];
  for (const [name, drafts, msg] of refusals) {
    it(`refuses ${name}, changing nothing`, async () => {
      await expectRejectedUnchanged(s, () => create(s.seed.bob, drafts(s.seed)), 400, "BAD_REQUEST", msg);
    });
  }

  it("refuses direct drafts to deactivated users and too many drafts at once", async () => {
    const { alice, bob } = s.seed;
    s.t.store.setUserActive(bob.id, false);
    await expectRejectedUnchanged(
      s,
      () => create(alice, [{ type: "private", to: [bob.id], topic: "", content: "c" }]),
      400,
      "BAD_REQUEST",
      "'bob@test.dev' is no longer using Zulip.",
    );
    const many = Array.from({ length: 1001 }, () => ({ type: "", to: [], topic: "", content: "c" }));
    await expectRejectedUnchanged(
      s,
      () => create(alice, many),
      400,
      "BAD_REQUEST",
      "drafts is too long (limit: 1000 items)",
    );
  });

  it("guests may address only channels they are in; bots keep drafts like anyone", async () => {
    const { guest, general, alice } = s.seed;
    await expectRejectedUnchanged(
      s,
      () => create(guest, [{ type: "stream", to: [general.id], topic: "t", content: "c" }]),
      400,
      "BAD_REQUEST",
      "Invalid channel ID",
    );
    expect((await create(guest, [{ type: "private", to: [alice.id], topic: "", content: "c" }])).status).toBe(200);
    const bot = s.t.store.createUser({
      realmId: s.seed.realm.id,
      email: "bot@test.dev",
      fullName: "Helper Bot",
      bot: { type: 1, ownerId: alice.id },
    });
    expect((await create(bot, [{ type: "", to: [], topic: "", content: "c" }])).status).toBe(200);
  });

  it("refuses every drafts call while synchronization is off", async () => {
    const { alice } = s.seed;
    expect((await s.call(alice, "PATCH", "/settings", { enable_drafts_synchronization: false })).status).toBe(200);
    const msg = "User has disabled synchronizing drafts.";
    const draft = { type: "", to: [], topic: "", content: "c" };
    await expectRejectedUnchanged(s, () => create(alice, [draft]), 400, "BAD_REQUEST", msg);
    await expectRejectedUnchanged(s, () => s.call(alice, "GET", "/drafts"), 400, "BAD_REQUEST", msg);
    await expectRejectedUnchanged(s, () => s.call(alice, "PATCH", "/drafts/1", { draft }), 400, "BAD_REQUEST", msg);
    await expectRejectedUnchanged(s, () => s.call(alice, "DELETE", "/drafts/1"), 400, "BAD_REQUEST", msg);
  });

  it("survives a restart of the store", async () => {
    const { alice } = s.seed;
    expect((await create(alice, [{ type: "", to: [], topic: "", content: "durable" }])).status).toBe(200);
    const reopened = s.t.reopen();
    expect(reopened.drafts(alice.id).map((d) => d.content)).toEqual(["durable"]);
  });
});

describe("saved snippets", () => {
  it("creates, lists, edits and deletes the owner's snippets, with events to the owner only", async () => {
    const { alice, bob } = s.seed;
    const qAlice = await register(alice, ["saved_snippets"]);
    const qBob = await register(bob, ["saved_snippets"]);
    const created = await s.call(alice, "POST", "/saved_snippets", {
      title: "  Welcome ",
      content: "**Welcome** to the team.\n",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body["saved_snippet_id"] as number;
    const [snippet] = (await s.call(alice, "GET", "/saved_snippets")).body["saved_snippets"] as Record<
      string,
      unknown
    >[];
    expect(snippet).toMatchObject({ id, title: "Welcome", content: "**Welcome** to the team." });
    expect(typeof snippet!["date_created"]).toBe("number");
    expect((await s.call(bob, "GET", "/saved_snippets")).body["saved_snippets"]).toEqual([]);
    expect((await s.call(alice, "PATCH", `/saved_snippets/${id}`, { title: "Hello" })).status).toBe(200);
    expect((await s.call(alice, "PATCH", `/saved_snippets/${id}`, { content: "Hi!" })).status).toBe(200);
    // Nothing to change: success, no event.
    expect((await s.call(alice, "PATCH", `/saved_snippets/${id}`, {})).status).toBe(200);
    const reg = await s.call(alice, "POST", "/register", { fetch_event_types: ["saved_snippets"] });
    expect(reg.body["saved_snippets"]).toEqual([
      { id, title: "Hello", content: "Hi!", date_created: snippet!["date_created"] },
    ]);
    expect((await s.call(alice, "DELETE", `/saved_snippets/${id}`)).status).toBe(200);
    expect((await s.call(alice, "GET", "/saved_snippets")).body["saved_snippets"]).toEqual([]);
    const got = await events(alice, qAlice);
    expect(got.map((e) => e["op"])).toEqual(["add", "update", "update", "remove"]);
    expect(got[0]).toMatchObject({
      type: "saved_snippets",
      saved_snippet: { id, title: "Welcome", content: "**Welcome** to the team." },
    });
    expect(got[2]).toMatchObject({ saved_snippet: { id, title: "Hello", content: "Hi!" } });
    expect(got[3]).toMatchObject({ type: "saved_snippets", op: "remove", saved_snippet_id: id });
    expect(await events(bob, qBob)).toEqual([]);
  });

  it("refuses empty and over-long titles and contents, and other users' or missing snippets, changing nothing", async () => {
    const { alice, bob } = s.seed;
    const id = (await s.call(alice, "POST", "/saved_snippets", { title: "T", content: "C" })).body[
      "saved_snippet_id"
    ] as number;
    const post = (params: Record<string, unknown>) => () => s.call(alice, "POST", "/saved_snippets", params);
    await expectRejectedUnchanged(s, post({ title: "", content: "c" }), 400, "BAD_REQUEST", "title cannot be blank");
    await expectRejectedUnchanged(s, post({ title: "   ", content: "c" }), 400, "BAD_REQUEST", "title cannot be blank");
    await expectRejectedUnchanged(
      s,
      post({ title: "t", content: " \n" }),
      400,
      "BAD_REQUEST",
      "content cannot be blank",
    );
    await expectRejectedUnchanged(
      s,
      post({ title: "x".repeat(61), content: "c" }),
      400,
      "BAD_REQUEST",
      "title is too long (limit: 60 characters)",
    );
    await expectRejectedUnchanged(
      s,
      post({ title: "t", content: "x".repeat(10001) }),
      400,
      "BAD_REQUEST",
      "content is too long (limit: 10000 characters)",
    );
    await expectRejectedUnchanged(
      s,
      post({ content: "c" }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'title' argument",
    );
    // Surrounding whitespace does not count toward the limit.
    expect(
      (await s.call(alice, "POST", "/saved_snippets", { title: ` ${"x".repeat(60)} `, content: "c" })).status,
    ).toBe(200);
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "PATCH", `/saved_snippets/${id}`, { title: "" }),
      400,
      "BAD_REQUEST",
      "title cannot be blank",
    );
    const missing = "Saved snippet does not exist.";
    await expectRejectedUnchanged(
      s,
      () => s.call(bob, "PATCH", `/saved_snippets/${id}`, { title: "mine" }),
      404,
      "BAD_REQUEST",
      missing,
    );
    await expectRejectedUnchanged(s, () => s.call(bob, "DELETE", `/saved_snippets/${id}`), 404, "BAD_REQUEST", missing);
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "DELETE", "/saved_snippets/99999"),
      404,
      "BAD_REQUEST",
      missing,
    );
    await expectRejectedUnchanged(
      s,
      () => s.call(alice, "PATCH", "/saved_snippets/99999", { content: "c" }),
      404,
      "BAD_REQUEST",
      missing,
    );
  });

  it("guests and bots keep their own snippets", async () => {
    const { guest, alice } = s.seed;
    expect((await s.call(guest, "POST", "/saved_snippets", { title: "g", content: "c" })).status).toBe(200);
    const bot = s.t.store.createUser({
      realmId: s.seed.realm.id,
      email: "bot@test.dev",
      fullName: "Helper Bot",
      bot: { type: 1, ownerId: alice.id },
    });
    expect((await s.call(bot, "POST", "/saved_snippets", { title: "b", content: "c" })).status).toBe(200);
    expect(((await s.call(guest, "GET", "/saved_snippets")).body["saved_snippets"] as unknown[]).length).toBe(1);
  });
});
