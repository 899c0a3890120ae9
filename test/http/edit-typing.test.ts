/**
 * POST /messages/{message_id}/typing (Zulip feature level 351) over HTTP: the
 * typing_edit_message event in Zulip's shape to a channel message's subscribers or a
 * direct message's participants (not to users who turned typing notifications off),
 * the empty topic as each client asked, Zulip's refusals (not the sender, past the
 * edit time limit, no access, sending typing notifications turned off) and the route
 * beside GET /messages/{id} and /messages/{id}/reactions.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { startServer, type TestServer } from "../support/http.js";
import { setUserSettings } from "../support/user-settings.js";

let server: TestServer;
let clock = 1_900_000_000;
beforeEach(async () => {
  clock = 1_900_000_000;
  server = await startServer({}, { now: () => clock });
});
afterEach(() => server.close());

type Ev = Record<string, unknown> & { type: string };

const send = async (user: User, params: Record<string, unknown>) =>
  (await server.call(user, "POST", "/messages", { content: "draft", ...params })).body["id"] as number;
const typing = (user: User, messageId: number | string, op: string | null = "start") =>
  server.call(user, "POST", `/messages/${messageId}/typing`, op === null ? {} : { op });
const queue = async (user: User, extra: Record<string, unknown> = {}) =>
  (await server.call(user, "POST", "/register", { event_types: ["typing_edit_message"], ...extra })).body[
    "queue_id"
  ] as string;
const events = async (user: User, q: string) =>
  (await server.call(user, "GET", "/events", { queue_id: q, last_event_id: -1, dont_block: true })).body[
    "events"
  ] as Ev[];
const strip = ({ id: _id, ...rest }: Ev) => rest;

describe("POST /messages/{message_id}/typing", () => {
  it("tells the channel's subscribers, in Zulip's shape, the empty topic as each client asked", async () => {
    const { owner, alice, bob, general } = server.seed;
    const id = await send(owner, { type: "stream", to: "general", topic: "" });
    const qAlice = await queue(alice);
    const qBob = await queue(bob, { client_capabilities: { empty_topic_name: true } });
    expect((await typing(owner, id)).body).toEqual({ result: "success", msg: "" });
    expect((await typing(owner, id, "stop")).status).toBe(200);
    const shape = (op: string, topic: string) => ({
      type: "typing_edit_message",
      op,
      sender_id: owner.id,
      message_id: id,
      recipient: { type: "channel", channel_id: general.id, topic },
    });
    expect((await events(alice, qAlice)).map(strip)).toEqual([
      shape("start", "general chat"),
      shape("stop", "general chat"),
    ]);
    expect((await events(bob, qBob)).map(strip)).toEqual([shape("start", ""), shape("stop", "")]);
  });

  it("tells a direct message's participants, not others nor those who turned typing notifications off", async () => {
    const { owner, alice, bob, guest } = server.seed;
    const dm = await send(owner, { type: "direct", to: JSON.stringify([alice.id]) });
    const group = await send(owner, { type: "direct", to: JSON.stringify([alice.id, guest.id]) });
    setUserSettings(server.t.store, guest.id, { receives_typing_notifications: false });
    const [qOwner, qAlice, qBob, qGuest] = await Promise.all([owner, alice, bob, guest].map((u) => queue(u)));
    await typing(owner, dm);
    await typing(owner, group);
    const direct = (messageId: number, userIds: number[]) => ({
      type: "typing_edit_message",
      op: "start",
      sender_id: owner.id,
      message_id: messageId,
      recipient: { type: "direct", user_ids: userIds },
    });
    const both = [direct(dm, [owner.id, alice.id]), direct(group, [owner.id, alice.id])];
    expect((await events(alice, qAlice!)).map(strip)).toEqual(both);
    expect((await events(owner, qOwner!)).map(strip)).toEqual(both);
    expect(await events(bob, qBob!)).toEqual([]);
    expect(await events(guest, qGuest!)).toEqual([]);
  });

  it("refuses with Zulip's errors and tells no one", async () => {
    const { owner, alice, bob } = server.seed;
    const mine = await send(owner, { type: "stream", to: "general", topic: "t" });
    const secret = await send(owner, { type: "stream", to: "secret", topic: "t" });
    const ownSecret = await send(alice, { type: "stream", to: "secret", topic: "t" });
    const qBob = await queue(bob);
    const qOwner = await queue(owner);
    const refused = async (user: User, messageId: number | string, msg: string, op = "start") => {
      const r = await typing(user, messageId, op);
      expect(r.status, msg).toBe(400);
      expect(r.body["msg"]).toBe(msg);
    };
    await refused(alice, mine, "You don't have permission to edit this message");
    await refused(bob, secret, "Invalid message(s)");
    await refused(owner, 999_999, "Invalid message(s)");
    await refused(owner, "abc", "Invalid message(s)");
    await refused(owner, mine, "Invalid op", "type");
    // Alice left the private channel: her own message there is out of reach.
    await server.call(alice, "DELETE", "/users/me/subscriptions", { subscriptions: ["secret"] });
    await refused(alice, ownSecret, "Invalid message(s)");
    setUserSettings(server.t.store, owner.id, { send_stream_typing_notifications: false });
    await refused(owner, mine, "User has disabled typing notifications for channel messages");
    setUserSettings(server.t.store, owner.id, { send_stream_typing_notifications: true });
    clock += 601;
    await refused(owner, mine, "The time limit for editing this message has passed");
    expect(await events(bob, qBob)).toEqual([]);
    expect(await events(owner, qOwner)).toEqual([]);
    const missing = await typing(owner, mine, null);
    expect(missing.body).toMatchObject({ code: "REQUEST_VARIABLE_MISSING", var_name: "op" });
  });

  it("sits beside GET /messages/{id} and /messages/{id}/reactions", async () => {
    const { owner } = server.seed;
    const id = await send(owner, { type: "stream", to: "general", topic: "t" });
    expect((await server.call(owner, "GET", `/messages/${id}`)).status).toBe(200);
    expect((await server.call(owner, "POST", `/messages/${id}/reactions`, { emoji_name: "octopus" })).status).toBe(200);
    expect((await server.call(owner, "GET", `/messages/${id}/typing`)).status).toBe(405);
    expect((await typing(owner, id)).status).toBe(200);
  });
});

describe("POST /typing and the sender's send_*_typing_notifications", () => {
  it("refuses with Zulip's errors when the sender turned them off, before checking recipients, and tells no one", async () => {
    const { owner, alice, general } = server.seed;
    const q = (
      await server.call(alice, "POST", "/register", {
        event_types: ["typing"],
        client_capabilities: { stream_typing_notifications: true },
      })
    ).body["queue_id"] as string;
    const post = (params: Record<string, unknown>) => server.call(owner, "POST", "/typing", { op: "start", ...params });
    const direct = { to: [alice.id] };
    const channel = { type: "channel", stream_id: general.id, topic: "t" };
    const refusedWith = async (params: Record<string, unknown>, msg: string) => {
      const r = await post(params);
      expect([r.status, r.body["code"], r.body["msg"]]).toEqual([400, "BAD_REQUEST", msg]);
    };
    setUserSettings(server.t.store, owner.id, { send_private_typing_notifications: false });
    await refusedWith(direct, "User has disabled typing notifications for direct messages");
    // Zulip checks the setting before the recipients, after the empty list.
    await refusedWith({ to: [999_999] }, "User has disabled typing notifications for direct messages");
    await refusedWith({ to: [] }, "Empty 'to' list");
    // The other kind is unaffected.
    expect((await post(channel)).status).toBe(200);
    setUserSettings(server.t.store, owner.id, {
      send_private_typing_notifications: true,
      send_stream_typing_notifications: false,
    });
    await refusedWith(channel, "User has disabled typing notifications for channel messages");
    await refusedWith(
      { ...channel, stream_id: 999_999 },
      "User has disabled typing notifications for channel messages",
    );
    await refusedWith({ type: "channel", topic: "t" }, "Missing channel ID");
    expect((await post(direct)).status).toBe(200);
    const got = (await server.call(alice, "GET", "/events", { queue_id: q, last_event_id: -1, dont_block: true })).body[
      "events"
    ] as Ev[];
    expect(got.map((e) => [e.type, e["message_type"]])).toEqual([
      ["typing", "stream"],
      ["typing", "direct"],
    ]);
  });
});
