/**
 * Scheduled messages over HTTP (seed endpoints 1 and 2, list, delete): every
 * parameter's rules and Zulip's errors, refused requests change nothing, register
 * and events.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";

let server: TestServer;
beforeEach(async () => {
  server = await startServer();
});
afterEach(() => server.close());

const future = () => Math.floor(Date.now() / 1000) + 3600;

async function schedule(params: Record<string, unknown>, user = server.seed.alice): Promise<number> {
  const r = await server.call(user, "POST", "/scheduled_messages", {
    scheduled_delivery_timestamp: future(),
    content: "later",
    ...params,
  });
  expect(r.body, JSON.stringify(r.body)).toMatchObject({ result: "success" });
  return r.body["scheduled_message_id"] as number;
}

async function list(user = server.seed.alice): Promise<Record<string, unknown>[]> {
  return (await server.call(user, "GET", "/scheduled_messages")).body["scheduled_messages"] as Record<
    string,
    unknown
  >[];
}

describe("POST /scheduled_messages", () => {
  it("channel and direct messages under every type spelling", async () => {
    const { general, bob, alice } = server.seed;
    const at = future();
    const a = await schedule({ type: "stream", to: general.id, topic: "plans", scheduled_delivery_timestamp: at });
    const b = await schedule({
      type: "channel",
      to: [general.id],
      topic: "(no topic)",
      scheduled_delivery_timestamp: at + 1,
    });
    const c = await schedule({ type: "private", to: [bob.id], scheduled_delivery_timestamp: at + 2 });
    const d = await schedule({ type: "direct", to: bob.id, topic: "ignored", scheduled_delivery_timestamp: at + 3 });
    const items = await list();
    expect(items.map((i) => i["scheduled_message_id"])).toEqual([a, b, c, d]);
    expect(items[0]).toEqual({
      scheduled_message_id: a,
      to: general.id,
      type: "stream",
      topic: "plans",
      content: "later",
      rendered_content: "<p>later</p>",
      scheduled_delivery_timestamp: at,
      failed: false,
    });
    expect(items[1]!["topic"]).toBe("general chat");
    expect(items[2]).toMatchObject({ to: [bob.id], type: "private" });
    expect(items[3]).not.toHaveProperty("topic");
    expect(await list(bob)).toEqual([]);
    expect(alice).toBeDefined();
  });

  it("bad input gets Zulip's errors and changes nothing", async () => {
    const { general, secret, bob } = server.seed;
    const post =
      (params: Record<string, unknown>, user = server.seed.alice) =>
      () =>
        server.call(user, "POST", "/scheduled_messages", {
          type: "stream",
          to: general.id,
          topic: "t",
          content: "c",
          scheduled_delivery_timestamp: future(),
          ...params,
        });
    await expectRejectedUnchanged(
      server,
      post({ to: 9999 }),
      400,
      "STREAM_DOES_NOT_EXIST",
      "Channel with ID '9999' does not exist",
    ).then((b) => expect(b["stream_id"]).toBe(9999));
    await expectRejectedUnchanged(
      server,
      post({ to: secret.id }, bob),
      400,
      "STREAM_DOES_NOT_EXIST",
      `Channel with ID '${secret.id}' does not exist`,
    );
    await expectRejectedUnchanged(
      server,
      post({ type: "direct", to: [10, bob.id] }),
      400,
      "BAD_REQUEST",
      "Invalid user ID 10",
    );
    await expectRejectedUnchanged(
      server,
      post({ scheduled_delivery_timestamp: 1000 }),
      400,
      "BAD_REQUEST",
      "Scheduled delivery time must be in the future.",
    );
    await expectRejectedUnchanged(
      server,
      post({ scheduled_delivery_timestamp: "soon" }),
      400,
      "BAD_REQUEST",
      "scheduled_delivery_timestamp is not an integer",
    );
    await expectRejectedUnchanged(server, post({ type: "bogus" }), 400, "BAD_REQUEST", "Invalid type");
    await expectRejectedUnchanged(server, post({ to: "general" }), 400, "BAD_REQUEST", "to is not valid JSON");
    await expectRejectedUnchanged(server, post({ to: [1, 2] }), 400, "BAD_REQUEST", "Expected exactly one channel");
    await expectRejectedUnchanged(server, post({ topic: undefined }), 400, "BAD_REQUEST", "Missing topic");
    await expectRejectedUnchanged(server, post({ content: "  " }), 400, "BAD_REQUEST", "Message must not be empty");
    await expectRejectedUnchanged(
      server,
      post({ read_by_sender: "yes" }),
      400,
      "BAD_REQUEST",
      "read_by_sender is not a boolean",
    );
    await expectRejectedUnchanged(
      server,
      () =>
        server.call(server.seed.alice, "POST", "/scheduled_messages", {
          type: "stream",
          to: general.id,
          topic: "t",
          content: "c",
        }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'scheduled_delivery_timestamp' argument",
    );
    expect(await list()).toEqual([]);
  });
});

describe("PATCH, DELETE and events", () => {
  it("edits content, time, type and recipient with Zulip's rules", async () => {
    const { general, bob, alice } = server.seed;
    const id = await schedule({ type: "stream", to: general.id, topic: "t" });
    const patch =
      (params: Record<string, unknown>, user = alice) =>
      () =>
        server.call(user, "PATCH", `/scheduled_messages/${id}`, params);
    await expectRejectedUnchanged(server, patch({}), 400, "BAD_REQUEST", "Nothing to change");
    await expectRejectedUnchanged(
      server,
      patch({ type: "direct" }),
      400,
      "BAD_REQUEST",
      "Recipient required when updating type of scheduled message.",
    );
    await expectRejectedUnchanged(
      server,
      patch({ type: "direct", to: [424242] }),
      400,
      "BAD_REQUEST",
      "Invalid user ID 424242",
    );
    await expectRejectedUnchanged(
      server,
      patch({ to: 777 }),
      400,
      "STREAM_DOES_NOT_EXIST",
      "Channel with ID '777' does not exist",
    );
    await expectRejectedUnchanged(
      server,
      patch({ scheduled_delivery_timestamp: 5 }),
      400,
      "BAD_REQUEST",
      "Scheduled delivery time must be in the future.",
    );
    await expectRejectedUnchanged(
      server,
      patch({ content: "x" }, bob),
      404,
      "BAD_REQUEST",
      "Scheduled message does not exist",
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "PATCH", "/scheduled_messages/98765", { content: "x" }),
      404,
      "BAD_REQUEST",
      "Scheduled message does not exist",
    );
    expect(
      (await server.call(alice, "PATCH", `/scheduled_messages/${id}`, { type: "private", to: [bob.id] })).status,
    ).toBe(200);
    expect((await list())[0]).toMatchObject({ type: "private", to: [bob.id] });
    await expectRejectedUnchanged(
      server,
      patch({ type: "stream", to: general.id }),
      400,
      "BAD_REQUEST",
      "Topic required when updating scheduled message type to stream.",
    );
    expect(
      (
        await server.call(alice, "PATCH", `/scheduled_messages/${id}`, {
          type: "channel",
          to: general.id,
          topic: "back",
          content: "new words",
        })
      ).status,
    ).toBe(200);
    expect((await list())[0]).toMatchObject({ type: "stream", to: general.id, topic: "back", content: "new words" });
  });

  it("delete, register and events reach the sender only", async () => {
    const { general, alice, bob } = server.seed;
    const q = (await server.call(alice, "POST", "/register", { event_types: ["scheduled_messages"] })).body[
      "queue_id"
    ] as string;
    const qb = (await server.call(bob, "POST", "/register", { event_types: ["scheduled_messages"] })).body[
      "queue_id"
    ] as string;
    const id = await schedule({ type: "stream", to: general.id, topic: "t" });
    await server.call(alice, "PATCH", `/scheduled_messages/${id}`, { content: "changed" });
    const reg = await server.call(alice, "POST", "/register", { fetch_event_types: ["scheduled_messages"] });
    expect(reg.body["scheduled_messages"]).toEqual(await list());
    expect((await server.call(alice, "DELETE", `/scheduled_messages/${id}`)).status).toBe(200);
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "DELETE", `/scheduled_messages/${id}`),
      404,
      "BAD_REQUEST",
      "Scheduled message does not exist",
    );
    const events = (await server.call(alice, "GET", "/events", { queue_id: q, last_event_id: -1, dont_block: true }))
      .body["events"] as Record<string, unknown>[];
    expect(events.map((e) => e["op"])).toEqual(["add", "update", "remove"]);
    expect(events[2]).toMatchObject({ type: "scheduled_messages", op: "remove", scheduled_message_id: id });
    expect((events[1]!["scheduled_message"] as Record<string, unknown>)["content"]).toBe("changed");
    expect(
      (await server.call(bob, "GET", "/events", { queue_id: qb, last_event_id: -1, dont_block: true })).body["events"],
    ).toEqual([]);
  });
});
