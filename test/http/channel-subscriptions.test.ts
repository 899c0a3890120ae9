/**
 * Creating channels and managing subscriptions over HTTP: POST /channels/create,
 * default channels (POST/DELETE /default_streams), PATCH /users/me/subscriptions (add
 * and delete together) and /users/me/subscriptions/{id} (one property), other users'
 * subscriptions (GET /users/{id}/subscriptions/{stream_id}, GET /users/{id}/channels),
 * and the deprecated mark_all_as_read / mark_stream_as_read. Permission matrices over
 * owner, administrator, moderator, member, guest, bot and another realm's owner.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";
import { roleMatrix, type RoleMatrix } from "../support/role-matrix.js";

let server: TestServer;
let matrix: RoleMatrix;
let admin: User;
let bot: User;
let stranger: User;
beforeEach(async () => {
  server = await startServer();
  matrix = roleMatrix(server, "localhost");
  ({ admin, bot, "another realm": stranger } = matrix.users);
});
afterEach(() => server.close());

/** A request as `user`, to their own realm (another realm's owner asks their own subdomain). */
const as = (user: User, method: string, path: string, params: Record<string, unknown> = {}) =>
  matrix.as(user, method, path, params);

const everyone = () => matrix.everyone;

async function openQueue(user: User) {
  const r = await server.call(user, "POST", "/register", {
    event_types: ["stream", "subscription", "default_streams", "update_message_flags"],
    client_capabilities: { archived_channels: true },
  });
  return { user, queueId: r.body["queue_id"] as string, last: r.body["last_event_id"] as number };
}

async function drain(q: { user: User; queueId: string; last: number }): Promise<Record<string, unknown>[]> {
  const r = await server.call(q.user, "GET", "/events", {
    queue_id: q.queueId,
    last_event_id: q.last,
    dont_block: true,
  });
  const events = (r.body["events"] as Record<string, unknown>[]).filter((e) => e["type"] !== "heartbeat");
  if (events.length > 0) q.last = events[events.length - 1]!["id"] as number;
  return events.map(({ id: _id, ...rest }) => rest);
}

const channelId = (name: string) =>
  server.t.store.visibleChannels(server.seed.owner.id, true).find((c) => c.name === name)!.id;

describe("POST /channels/create", () => {
  it("everyone but guests creates channels in their own realm; the name must be free (409)", async () => {
    for (const [name, user] of everyone()) {
      const channel = `made-by-${name.replace(/\W/g, "")}`;
      const r = await as(user, "POST", "/channels/create", { name: channel, subscribers: [user.id] });
      if (name === "guest") {
        expect([name, r.status, r.body["msg"]]).toEqual([name, 400, "Insufficient permission"]);
        continue;
      }
      expect([name, r.status]).toEqual([name, 200]);
      expect(Object.keys(r.body).sort()).toEqual(["id", "msg", "result"]);
      expect(server.t.store.getChannel(r.body["id"] as number)!.realmId).toBe(user.realmId);
    }
    await expectRejectedUnchanged(
      server,
      () => server.call(server.seed.alice, "POST", "/channels/create", { name: "GENERAL", subscribers: [] }),
      409,
      "CHANNEL_ALREADY_EXISTS",
      "Channel 'GENERAL' already exists",
    );
  });

  it("subscribes exactly the listed users, with the creation options, the notice and the events", async () => {
    const { alice, bob, owner } = server.seed;
    const q = await openQueue(bob);
    const r = await server.call(alice, "POST", "/channels/create", {
      name: "plans",
      description: "Next\nsteps",
      subscribers: [bob.id],
      invite_only: true,
      history_public_to_subscribers: true,
      can_send_message_group: server.t.store.systemGroupId(server.seed.realm.id, "role:members"),
    });
    expect(r.status).toBe(200);
    const id = r.body["id"] as number;
    expect(server.t.store.channelMembers(owner.id, id)).toEqual([bob.id]);
    expect(server.t.store.getChannel(id)).toMatchObject({
      name: "plans",
      description: "Next steps",
      inviteOnly: true,
      historyPublicToSubscribers: true,
      canAdministerChannelGroup: { directMembers: [alice.id], directSubgroups: [] },
    });
    const events = await drain(q);
    // The Notification Bot's first message becomes the channel's first_message_id.
    expect(events.map((e) => `${e["type"]} ${e["op"]}`)).toEqual([
      "stream create",
      "subscription add",
      "stream update",
    ]);
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "POST", "/channels/create", { name: "x", subscribers: [], is_default_stream: true }),
      400,
      "BAD_REQUEST",
      "Insufficient permission",
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "POST", "/channels/create", { name: "y", subscribers: [999_999] }),
      400,
      "BAD_REQUEST",
      "No such user",
    );
  });
});

describe("default channels", () => {
  it("administrators add and remove them; everyone else is refused", async () => {
    const { general, secret } = server.seed;
    for (const [name, user] of everyone()) {
      const added = await as(user, "POST", "/default_streams", { stream_id: general.id });
      const removed = await as(user, "DELETE", "/default_streams", { stream_id: general.id });
      const ok = name === "owner" || name === "admin";
      const msg =
        name === "another realm" ? "Invalid channel ID" : "You do not have permission to change default channels.";
      expect([name, added.status, added.body["msg"], removed.status]).toEqual([
        name,
        ok ? 200 : 400,
        ok ? "" : msg,
        ok ? 200 : 400,
      ]);
    }
    await expectRejectedUnchanged(
      server,
      () => server.call(server.seed.owner, "POST", "/default_streams", { stream_id: secret.id }),
      400,
      "BAD_REQUEST",
      "Private channels cannot be made default.",
    );
  });

  it("non-guests hear the list; register and GET /streams include_default agree", async () => {
    const { owner, bob, guest, general } = server.seed;
    const bobs = await openQueue(bob);
    const guests = await openQueue(guest);
    expect((await server.call(owner, "POST", "/default_streams", { stream_id: general.id })).status).toBe(200);
    expect(await drain(bobs)).toEqual([{ type: "default_streams", default_streams: [general.id] }]);
    expect(await drain(guests)).toEqual([]);
    const reg = await server.call(bob, "POST", "/register", { fetch_event_types: ["default_streams"] });
    expect(reg.body["realm_default_streams"]).toEqual([general.id]);
    const listed = await server.call(bob, "GET", "/streams", { include_default: true });
    const flags = (listed.body["streams"] as Record<string, unknown>[]).map((s) => [s["name"], s["is_default"]]);
    expect(flags).toContainEqual(["general", true]);
    expect((await server.call(owner, "DELETE", "/default_streams", { stream_id: general.id })).status).toBe(200);
    expect(await drain(bobs)).toEqual([{ type: "default_streams", default_streams: [] }]);
  });
});

describe("PATCH /users/me/subscriptions", () => {
  it("adds and removes in one request, answering both halves", async () => {
    const { bob } = server.seed;
    const r = await server.call(bob, "PATCH", "/users/me/subscriptions", {
      add: [{ name: "fresh" }],
      delete: ["general"],
    });
    expect(r.body).toEqual({
      result: "success",
      msg: "",
      subscribed: { [bob.id]: ["fresh"] },
      already_subscribed: {},
      removed: ["general"],
      not_removed: [],
    });
  });

  it("refuses the whole request when the delete half names a channel the caller cannot see", async () => {
    const { bob } = server.seed;
    await expectRejectedUnchanged(
      server,
      () => server.call(bob, "PATCH", "/users/me/subscriptions", { add: [{ name: "fresh" }], delete: ["secret"] }),
      400,
      "STREAM_DOES_NOT_EXIST",
      "Channel 'secret' does not exist",
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(bob, "PATCH", "/users/me/subscriptions", {}),
      400,
      "BAD_REQUEST",
      'Nothing to do. Specify at least one of "add" or "delete".',
    );
  });
});

describe("PATCH /users/me/subscriptions/{stream_id}", () => {
  it("changes one property with the bulk endpoint's rules and events", async () => {
    const { alice, general, secret, bob } = server.seed;
    const q = await openQueue(alice);
    expect(
      (
        await server.call(alice, "PATCH", `/users/me/subscriptions/${general.id}`, {
          property: "color",
          value: "#aabbcc",
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await server.call(alice, "PATCH", `/users/me/subscriptions/${general.id}`, {
          property: "is_muted",
          value: true,
        })
      ).status,
    ).toBe(200);
    expect(await drain(q)).toEqual([
      { type: "subscription", op: "update", stream_id: general.id, property: "color", value: "#aabbcc" },
      { type: "subscription", op: "update", stream_id: general.id, property: "is_muted", value: true },
      { type: "subscription", op: "update", stream_id: general.id, property: "in_home_view", value: false },
    ]);
    const cases: [User, number, Record<string, unknown>, string][] = [
      [alice, general.id, { property: "volume", value: true }, "Unknown subscription property: volume"],
      [alice, general.id, { property: "pin_to_top", value: "yes" }, "pin_to_top is not a boolean"],
      [alice, general.id, { property: "color", value: "blue" }, "color is not a valid hex color code"],
      [bob, secret.id, { property: "pin_to_top", value: true }, "Invalid channel ID"],
    ];
    for (const [user, id, params, msg] of cases)
      await expectRejectedUnchanged(
        server,
        () => server.call(user, "PATCH", `/users/me/subscriptions/${id}`, params),
        400,
        "BAD_REQUEST",
        msg,
      );
  });
});

describe("other users' subscriptions", () => {
  it("GET /users/{id}/subscriptions/{stream_id} for channels the caller can see", async () => {
    const { alice, general, secret } = server.seed;
    for (const [name, user] of everyone()) {
      const pub = await as(user, "GET", `/users/${alice.id}/subscriptions/${general.id}`);
      const priv = await as(user, "GET", `/users/${alice.id}/subscriptions/${secret.id}`);
      const seesGeneral = !["guest", "another realm"].includes(name);
      const seesSecret = ["owner", "admin"].includes(name);
      const expected = (sees: boolean) =>
        name === "another realm" ? "No such user" : sees ? undefined : "Invalid channel ID";
      expect([name, pub.body["is_subscribed"], pub.body["msg"] || undefined]).toEqual([
        name,
        seesGeneral ? true : undefined,
        expected(seesGeneral),
      ]);
      expect([name, priv.body["is_subscribed"], priv.body["msg"] || undefined]).toEqual([
        name,
        seesSecret ? true : undefined,
        expected(seesSecret),
      ]);
    }
    expect((await server.call(alice, "GET", `/users/${bot.id}/subscriptions/${general.id}`)).body).toMatchObject({
      is_subscribed: false,
    });
  });

  it("GET /users/{id}/channels lists only the channels the caller can see", async () => {
    const { alice, owner, bob, general, secret } = server.seed;
    const ids = async (viewer: User) =>
      (await server.call(viewer, "GET", `/users/${alice.id}/channels`)).body["subscribed_channel_ids"];
    expect(await ids(owner)).toEqual([general.id, secret.id].sort((a, b) => a - b));
    expect(await ids(admin)).toEqual([general.id, secret.id].sort((a, b) => a - b));
    expect(await ids(bob)).toEqual([general.id]);
    expect(await ids(server.seed.guest)).toEqual([]);
    expect((await as(stranger, "GET", `/users/${alice.id}/channels`)).body["msg"]).toBe("No such user");
  });
});

describe("deprecated mark-as-read endpoints", () => {
  it("mark_stream_as_read and mark_all_as_read leave nothing unread, with flag events", async () => {
    const { owner, alice } = server.seed;
    const send = (channel: string) =>
      server.t.store.sendMessage({ senderId: owner.id, to: { type: "channel", channel, topic: "t" }, content: "x" }).id;
    const inGeneral = [send("general"), send("general")];
    const inSecret = send("secret");
    const dm = server.t.store.sendMessage({
      senderId: owner.id,
      to: { type: "direct", users: [alice.id] },
      content: "y",
    }).id;
    const q = await openQueue(alice);
    expect((await server.call(alice, "POST", "/mark_stream_as_read", { stream_id: channelId("general") })).status).toBe(
      200,
    );
    expect(await drain(q)).toEqual([
      { type: "update_message_flags", op: "add", operation: "add", flag: "read", messages: inGeneral, all: false },
    ]);
    expect(server.t.store.unreadSummary(alice.id).count).toBe(2);
    const all = await server.call(alice, "POST", "/mark_all_as_read");
    expect(all.body).toEqual({ result: "success", msg: "", complete: true });
    expect(server.t.store.unreadSummary(alice.id).count).toBe(0);
    const flagged = (await drain(q)).flatMap((e) => e["messages"] as number[]);
    expect(flagged.sort((a, b) => a - b)).toEqual([inSecret, dm].sort((a, b) => a - b));
    await expectRejectedUnchanged(
      server,
      () => server.call(server.seed.bob, "POST", "/mark_stream_as_read", { stream_id: channelId("secret") }),
      400,
      "BAD_REQUEST",
      "Invalid channel ID",
    );
  });
});
