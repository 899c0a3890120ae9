/**
 * GET /users/me/{stream_id}/topics over HTTP: Zulip's answer shape and order, the
 * empty topic under the realm's display name unless allow_empty_topic_name, topics
 * differing only in case reported once in their newest spelling, protected history,
 * Zulip's error for channels the caller may not read, and the route beside
 * /users/me/subscriptions.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { startServer, type TestServer } from "../support/http.js";

let server: TestServer;
beforeEach(async () => {
  server = await startServer();
});
afterEach(() => server.close());

const send = async (user: User, to: string, topic: string) =>
  (await server.call(user, "POST", "/messages", { type: "stream", to, topic, content: "hi" })).body["id"] as number;
const topics = (user: User, channelId: number | string, params: Record<string, unknown> = {}) =>
  server.call(user, "GET", `/users/me/${channelId}/topics`, params);

describe("GET /users/me/{stream_id}/topics", () => {
  it("answers {name, max_id} newest first, the empty topic under the realm's display name, case-folded topics once", async () => {
    const { owner, bob, general } = server.seed;
    const lunch = await send(owner, "general", "lunch");
    const empty = await send(owner, "general", "");
    const lunch2 = await send(bob, "general", "Lunch");
    const r = await topics(bob, general.id);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      result: "success",
      msg: "",
      topics: [
        { name: "Lunch", max_id: lunch2 },
        { name: "general chat", max_id: empty },
      ],
    });
    expect(lunch).toBeLessThan(empty);
    const modern = await topics(bob, general.id, { allow_empty_topic_name: true });
    expect(modern.body["topics"]).toEqual([
      { name: "Lunch", max_id: lunch2 },
      { name: "", max_id: empty },
    ]);
  });

  it("lists only the messages a protected-history subscriber received, and refuses who may not read the channel", async () => {
    const { owner, alice, bob, guest, secret } = server.seed;
    const before = await send(owner, "secret", "before");
    await server.call(owner, "POST", "/users/me/subscriptions", {
      subscriptions: [{ name: "secret" }],
      principals: [bob.id],
    });
    const after = await send(alice, "secret", "after");
    expect((await topics(owner, secret.id)).body["topics"]).toEqual([
      { name: "after", max_id: after },
      { name: "before", max_id: before },
    ]);
    expect((await topics(bob, secret.id)).body["topics"]).toEqual([{ name: "after", max_id: after }]);
    const refusals = [
      await topics(guest, secret.id),
      await topics(guest, server.seed.general.id),
      await topics(bob, 999_999),
      await topics(bob, "abc"),
      await topics(bob, "-1"),
    ];
    for (const r of refusals) {
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ result: "error", msg: "Invalid channel ID", code: "BAD_REQUEST" });
    }
  });

  it("follows a PATCH /messages topic move after the list was cached", async () => {
    const { owner, bob, general } = server.seed;
    const a1 = await send(owner, "general", "a");
    await send(owner, "general", "a");
    await send(owner, "general", "b");
    expect(((await topics(bob, general.id)).body["topics"] as { name: string }[]).map((t) => t.name)).toEqual([
      "b",
      "a",
    ]);
    const moved = await server.call(owner, "PATCH", `/messages/${a1}`, {
      topic: "B",
      propagate_mode: "change_all",
      send_notification_to_new_thread: false,
    });
    expect(moved.status).toBe(200);
    // What GET /messages shows the caller, grouped by case-folded topic at its newest message.
    const r = await server.call(bob, "GET", "/messages", {
      anchor: "newest",
      num_before: 100,
      num_after: 0,
      narrow: [{ operator: "channel", operand: general.id }],
    });
    const newest = new Map<string, { name: string; max_id: number }>();
    for (const m of (r.body["messages"] as { id: number; subject: string }[]).reverse())
      if (!newest.has(m.subject.toUpperCase())) newest.set(m.subject.toUpperCase(), { name: m.subject, max_id: m.id });
    expect((await topics(bob, general.id)).body["topics"]).toEqual([...newest.values()]);
    // "a" merged into "b", whose newest message still spells it "b".
    expect([...newest.values()].map((t) => t.name)).toEqual(["b"]);
  });

  it("lives beside the /users/me/subscriptions routes without taking them", async () => {
    const { owner, general } = server.seed;
    expect((await server.call(owner, "GET", "/users/me/subscriptions")).body["subscriptions"]).toBeInstanceOf(Array);
    const wrongMethod = await server.call(owner, "POST", `/users/me/${general.id}/topics`);
    expect(wrongMethod.status).toBe(405);
    const bad = await topics(owner, general.id, { allow_empty_topic_name: "maybe" });
    expect(bad.status).toBe(400);
    expect(bad.body["code"]).toBe("BAD_REQUEST");
  });
});
