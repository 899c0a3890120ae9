/**
 * Reminders over HTTP (Zulip's create-message-reminder, get-reminders, delete-reminder):
 * the wire shape, Zulip's refusals in its order, each changing nothing, another user's
 * reminder answered like none, reminders add/remove events to the owner alone, register's
 * reminders and max_reminder_note_length. Delivery: test/scheduler/reminders.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";

let server: TestServer;
beforeEach(async () => {
  server = await startServer();
});
afterEach(() => server.close());

type Ev = Record<string, unknown> & { type: string };

const future = () => Math.floor(Date.now() / 1000) + 3600;
const send = async (user: User, params: Record<string, unknown>) => {
  const res = await server.call(user, "POST", "/messages", params);
  expect(res.status).toBe(200);
  return res.body["id"] as number;
};
const create = (user: User, params: Record<string, unknown>) =>
  server.call(user, "POST", "/reminders", { scheduled_delivery_timestamp: future(), ...params });
const list = async (user: User) => (await server.call(user, "GET", "/reminders")).body["reminders"] as Ev[];
const queue = async (user: User, types: string[]) =>
  (await server.call(user, "POST", "/register", { event_types: types })).body["queue_id"] as string;
const events = async (user: User, q: string) =>
  (await server.call(user, "GET", "/events", { queue_id: q, last_event_id: -1, dont_block: true })).body[
    "events"
  ] as Ev[];

describe("POST/GET/DELETE /reminders", () => {
  it("creates, lists in Zulip's shape, and deletes the caller's reminder", async () => {
    const { alice, general } = server.seed;
    const id = await send(alice, { type: "stream", to: general.id, topic: "plans", content: "meet at 5" });
    const at = future();
    const r = await create(alice, { message_id: id, scheduled_delivery_timestamp: at, note: "bring notes" });
    expect(r.body).toMatchObject({ result: "success", reminder_id: expect.any(Number) });
    const reminderId = r.body["reminder_id"] as number;
    const [item, ...rest] = await list(alice);
    expect(rest).toEqual([]);
    expect(Object.keys(item!).sort()).toEqual(
      [
        "reminder_id",
        "type",
        "to",
        "content",
        "rendered_content",
        "scheduled_delivery_timestamp",
        "failed",
        "reminder_target_message_id",
      ].sort(),
    );
    expect(item).toMatchObject({
      reminder_id: reminderId,
      type: "private",
      to: [alice.id],
      scheduled_delivery_timestamp: at,
      failed: false,
      reminder_target_message_id: id,
    });
    expect(item!["content"]).toMatch(/^You requested a reminder for the following message\. Note:\n > bring notes\n\n/);
    expect(String(item!["content"])).toContain(`/#narrow/channel/${general.id}-general/topic/plans/near/${id})`);
    expect(String(item!["rendered_content"])).toContain("<blockquote>");
    // Not a scheduled message.
    expect((await server.call(alice, "GET", "/scheduled_messages")).body["scheduled_messages"]).toEqual([]);
    expect((await server.call(alice, "DELETE", `/reminders/${reminderId}`)).body).toEqual({
      result: "success",
      msg: "",
    });
    expect(await list(alice)).toEqual([]);
  });

  it("refuses in Zulip's order and changes nothing", async () => {
    const { alice, bob, secret, general } = server.seed;
    const hidden = await send(alice, { type: "stream", to: secret.id, topic: "t", content: "secret" });
    const visible = await send(alice, { type: "stream", to: general.id, topic: "t", content: "open" });
    const post =
      (params: Record<string, unknown>, user = bob) =>
      () =>
        create(user, params);
    // The time is checked before the message.
    await expectRejectedUnchanged(
      server,
      post({ message_id: 999_999, scheduled_delivery_timestamp: 1000 }),
      400,
      "BAD_REQUEST",
      "Scheduled delivery time must be in the future.",
    );
    for (const message_id of [999_999, hidden, 0, -3])
      await expectRejectedUnchanged(server, post({ message_id }), 400, "BAD_REQUEST", "Invalid message(s)");
    // The note's length after stripping, once the message is known readable.
    await expectRejectedUnchanged(
      server,
      post({ message_id: hidden, note: "x".repeat(1001) }),
      400,
      "BAD_REQUEST",
      "Invalid message(s)",
    );
    await expectRejectedUnchanged(
      server,
      post({ message_id: visible, note: "x".repeat(1001) }),
      400,
      "BAD_REQUEST",
      "Maximum reminder note length: 1000 characters",
    );
    expect((await create(bob, { message_id: visible, note: `${"x".repeat(1000)}  \n ` })).status).toBe(200);
    await expectRejectedUnchanged(
      server,
      post({ message_id: "x" }),
      400,
      "BAD_REQUEST",
      "message_id is not an integer",
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(bob, "POST", "/reminders", { message_id: visible }),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'scheduled_delivery_timestamp' argument",
    );
  });

  it("another user's reminder, a scheduled message and an unknown ID are all 'Reminder does not exist'", async () => {
    const { alice, bob, general } = server.seed;
    const id = await send(alice, { type: "stream", to: general.id, topic: "t", content: "x" });
    const reminderId = (await create(alice, { message_id: id })).body["reminder_id"] as number;
    const scheduled = await server.call(bob, "POST", "/scheduled_messages", {
      type: "direct",
      to: JSON.stringify([bob.id]),
      content: "later",
      scheduled_delivery_timestamp: future(),
    });
    const scheduledId = scheduled.body["scheduled_message_id"] as number;
    for (const target of [reminderId, scheduledId, 999_999, "abc"])
      await expectRejectedUnchanged(
        server,
        () => server.call(bob, "DELETE", `/reminders/${target}`),
        404,
        "BAD_REQUEST",
        "Reminder does not exist",
      );
    // Nor do scheduled messages' endpoints reach a reminder.
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "DELETE", `/scheduled_messages/${reminderId}`),
      404,
      "BAD_REQUEST",
      "Scheduled message does not exist",
    );
    expect((await list(alice)).map((r) => r["reminder_id"])).toEqual([reminderId]);
    expect(await list(bob)).toEqual([]);
  });
});

describe("events and register", () => {
  it("reminders add/remove go to the owner alone; register lists them and the note limit", async () => {
    const { alice, bob, general } = server.seed;
    const qa = await queue(alice, ["reminders"]);
    const qb = await queue(bob, ["reminders"]);
    const id = await send(bob, { type: "stream", to: general.id, topic: "t", content: "remember me" });
    const reminderId = (await create(alice, { message_id: id })).body["reminder_id"] as number;
    const registered = await server.call(alice, "POST", "/register", {
      event_types: JSON.stringify(["reminders", "realm"]),
    });
    const section = registered.body["reminders"] as Ev[];
    expect(section).toEqual(await list(alice));
    expect(section.map((r) => r["reminder_id"])).toEqual([reminderId]);
    expect(registered.body["max_reminder_note_length"]).toBe(1000);
    await server.call(alice, "DELETE", `/reminders/${reminderId}`);
    const got = (await events(alice, qa)).filter((e) => e.type === "reminders");
    expect(got.map((e) => ({ ...e, id: 0 }))).toEqual([
      { type: "reminders", op: "add", reminders: section, id: 0 },
      { type: "reminders", op: "remove", reminder_id: reminderId, id: 0 },
    ]);
    expect((await events(bob, qb)).filter((e) => e.type === "reminders")).toEqual([]);
    const again = await server.call(alice, "POST", "/register", { event_types: JSON.stringify(["reminders"]) });
    expect(again.body["reminders"]).toEqual([]);
  });
});
