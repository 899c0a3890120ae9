/**
 * realm_user add / remove events when a limited guest (can_access_all_users_group =
 * role:members) gains or loses access to a user, as Zulip sends them: on subscription
 * changes (send_user_creation_events_on_adding_subscriptions,
 * send_user_remove_events_on_removing_subscriptions) and on deactivation
 * (send_events_for_user_deactivation).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { startServer, type TestServer } from "../support/http.js";

let s: TestServer;
let bot: User;
beforeEach(async () => {
  s = await startServer();
  const { owner, alice, guest } = s.seed;
  bot = s.t.store.createUser({
    realmId: owner.realmId,
    email: "helper-bot@test.dev",
    fullName: "Helper",
    bot: { type: 1, ownerId: alice.id },
  });
  // The guest shares one private channel, with Alice only.
  s.t.store.subscribe(owner.id, {
    channels: [{ name: "lobby" }],
    principals: [alice.id, guest.id],
    newChannel: { inviteOnly: true, historyPublicToSubscribers: true },
  });
  s.t.store.subscribe(owner.id, { channels: [{ name: "hall" }], principals: [owner.id, s.seed.bob.id, bot.id] });
  const members = s.t.store.systemGroupId(s.seed.realm.id, "role:members");
  const r = await s.call(owner, "PATCH", "/realm", { can_access_all_users_group: JSON.stringify({ new: members }) });
  expect(r.status).toBe(200);
});
afterEach(() => s.close());

type Ev = Record<string, unknown> & { type: string; op?: string };
type Person = { user_id: number; full_name: string };

const queue = async (user: User, caps: Record<string, boolean> = {}) =>
  (
    await s.call(user, "POST", "/register", {
      event_types: JSON.stringify(["realm_user"]),
      client_capabilities: JSON.stringify(caps),
    })
  ).body["queue_id"] as string;
const userEvents = async (user: User, q: string) =>
  ((await s.call(user, "GET", "/events", { queue_id: q, last_event_id: -1, dont_block: true })).body["events"] as Ev[])
    // The Notification Bot's account appears with its first notice (a realm_user add to everyone).
    .filter((e) => e.type === "realm_user" && (e["person"] as { is_bot?: boolean }).is_bot !== true);
const ops = (evs: Ev[]) => evs.map((e) => `${e.op}:${(e["person"] as Person).user_id}`);
const subscribe = async (actor: User, channel: string, principals: number[]) => {
  const r = await s.call(actor, "POST", "/users/me/subscriptions", {
    subscriptions: JSON.stringify([{ name: channel }]),
    principals: JSON.stringify(principals),
  });
  expect(r.body["msg"] ?? "").toBe("");
};
const unsubscribe = async (actor: User, channel: string, principals?: number[]) => {
  const r = await s.call(actor, "DELETE", "/users/me/subscriptions", {
    subscriptions: JSON.stringify([channel]),
    ...(principals ? { principals: JSON.stringify(principals) } : {}),
  });
  expect(r.status).toBe(200);
};
const names = async (user: User) =>
  new Map(((await s.call(user, "GET", "/users")).body["members"] as Person[]).map((p) => [p.user_id, p.full_name]));

describe("limited guests: realm_user add / remove on subscription changes", () => {
  it("another user joining or leaving the guest's channel: a full add, then a remove", async () => {
    const { alice, bob, guest } = s.seed;
    const [g, incomplete, a] = [
      await queue(guest),
      await queue(guest, { user_list_incomplete: true }),
      await queue(alice),
    ];
    await subscribe(s.seed.alice, "lobby", [bob.id]);
    const added = await userEvents(guest, g);
    expect(added).toEqual([
      { id: expect.any(Number), type: "realm_user", op: "add", person: expect.objectContaining({ user_id: bob.id }) },
    ]);
    expect(added[0]!["person"]).toMatchObject({ full_name: "Bob", email: "bob@test.dev", is_active: true });
    // A full add is not the placeholder Zulip withholds from user_list_incomplete clients.
    expect(ops(await userEvents(guest, incomplete))).toEqual([`add:${bob.id}`]);

    await unsubscribe(bob, "lobby");
    const removed = (await userEvents(guest, g)).slice(1);
    expect(removed).toEqual([
      {
        id: expect.any(Number),
        type: "realm_user",
        op: "remove",
        person: { user_id: bob.id, full_name: "Unknown user" },
      },
    ]);
    expect(ops(await userEvents(guest, incomplete))).toEqual([`add:${bob.id}`, `remove:${bob.id}`]);
    expect((await names(guest)).get(bob.id)).toBe("Unknown user");
    // Members see everyone: no such events.
    expect(await userEvents(alice, a)).toEqual([]);
  });

  it("no remove while another channel or a direct message still connects them", async () => {
    const { owner, bob, guest } = s.seed;
    await subscribe(s.seed.alice, "lobby", [bob.id]);
    await subscribe(owner, "patio", [bob.id, guest.id]);
    const g = await queue(guest);
    await unsubscribe(bob, "lobby");
    expect(await userEvents(guest, g)).toEqual([]);
    const sent = await s.call(bob, "POST", "/messages", {
      type: "direct",
      to: JSON.stringify([guest.id]),
      content: "hi",
    });
    expect(sent.status).toBe(200);
    await unsubscribe(bob, "patio");
    expect(await userEvents(guest, g)).toEqual([]);
    expect((await names(guest)).get(bob.id)).toBe("Bob");
  });

  it("the guest joining a channel gains its subscribers, and loses them on leaving", async () => {
    const { owner, alice, bob, guest } = s.seed;
    await subscribe(owner, "hall", [alice.id]);
    const g = await queue(guest);
    expect((await names(guest)).get(owner.id)).toBe("Unknown user");
    await subscribe(owner, "hall", [guest.id]);
    const added = await userEvents(guest, g);
    // Alice was already visible (lobby), the bot always is.
    expect(ops(added).sort()).toEqual([`add:${owner.id}`, `add:${bob.id}`].sort());
    expect(added.map((e) => (e["person"] as Person).full_name).sort()).toEqual(["Bob", "Olive Owner"]);
    expect((await names(guest)).get(owner.id)).toBe("Olive Owner");

    await unsubscribe(guest, "hall");
    expect(ops((await userEvents(guest, g)).slice(2)).sort()).toEqual(
      [`remove:${owner.id}`, `remove:${bob.id}`].sort(),
    );
    expect((await names(guest)).get(bob.id)).toBe("Unknown user");
    expect((await names(guest)).get(alice.id)).toBe("Alice");
    expect((await names(guest)).get(bot.id)).toBe("Helper");
  });

  it("another guest joining hears of the first, and the first of them", async () => {
    const { owner, guest } = s.seed;
    const other = s.t.store.createUser({
      realmId: owner.realmId,
      email: "gwen@test.dev",
      fullName: "Gwen Guest",
      role: 600,
    });
    const [g, o] = [await queue(guest), await queue(other)];
    await subscribe(s.seed.alice, "lobby", [other.id]);
    expect(ops(await userEvents(guest, g))).toEqual([`add:${other.id}`]);
    // Gwen gains Alice and Gus, not the bot.
    expect(ops(await userEvents(other, o)).sort()).toEqual([`add:${s.seed.alice.id}`, `add:${guest.id}`].sort());
  });
});

describe("limited guests: a deactivated user", () => {
  it("a guest who shared only a channel gets a remove, not the is_active update; reactivation adds them back", async () => {
    const { owner, alice, bob, guest } = s.seed;
    await subscribe(alice, "lobby", [bob.id]);
    const [g, a] = [await queue(guest), await queue(alice)];
    expect((await s.call(owner, "DELETE", `/users/${bob.id}`)).status).toBe(200);
    expect(await userEvents(guest, g)).toEqual([
      {
        id: expect.any(Number),
        type: "realm_user",
        op: "remove",
        person: { user_id: bob.id, full_name: "Unknown user" },
      },
    ]);
    expect((await names(guest)).get(bob.id)).toBe("Unknown user");
    expect((await userEvents(alice, a)).map((e) => e["person"])).toEqual([{ user_id: bob.id, is_active: false }]);

    expect((await s.call(owner, "POST", `/users/${bob.id}/reactivate`)).status).toBe(200);
    const back = (await userEvents(guest, g)).slice(1);
    expect(ops(back)).toEqual([`add:${bob.id}`, `update:${bob.id}`]);
    expect(back[0]!["person"]).toMatchObject({ full_name: "Bob", is_active: true });
    expect((await names(guest)).get(bob.id)).toBe("Bob");
  });

  it("a guest who shares a direct message keeps seeing them, deactivated: the update, no remove", async () => {
    const { owner, alice, bob, guest } = s.seed;
    await subscribe(alice, "lobby", [bob.id]);
    const dm = await s.call(bob, "POST", "/messages", {
      type: "direct",
      to: JSON.stringify([guest.id]),
      content: "hi",
    });
    expect(dm.status).toBe(200);
    const g = await queue(guest);
    expect((await s.call(owner, "DELETE", `/users/${bob.id}`)).status).toBe(200);
    expect((await userEvents(guest, g)).map((e) => e["person"])).toEqual([{ user_id: bob.id, is_active: false }]);
    const listed = (await s.call(guest, "POST", "/register", { fetch_event_types: JSON.stringify(["realm_user"]) }))
      .body["realm_non_active_users"] as Person[];
    expect(listed.find((p) => p.user_id === bob.id)?.full_name).toBe("Bob");
  });
});

describe("limited guests: access through direct messages and role changes", () => {
  it("a direct message gives its guest participants the others, before the message", async () => {
    const { owner, alice, bob, guest } = s.seed;
    const q = (await s.call(guest, "POST", "/register", { event_types: JSON.stringify(["realm_user", "message"]) }))
      .body["queue_id"] as string;
    const group = await s.call(alice, "POST", "/messages", {
      type: "direct",
      to: JSON.stringify([guest.id, bob.id]),
      content: "the three of us",
    });
    expect(group.status).toBe(200);
    const dm = await s.call(owner, "POST", "/messages", {
      type: "direct",
      to: JSON.stringify([guest.id]),
      content: "hi",
    });
    expect(dm.status).toBe(200);
    const evs = (
      (await s.call(guest, "GET", "/events", { queue_id: q, last_event_id: -1, dont_block: true })).body[
        "events"
      ] as Ev[]
    ).filter((e) => e.type === "message" || (e["person"] as { is_bot?: boolean } | undefined)?.is_bot !== true);
    expect(evs.map((e) => (e.type === "message" ? "message" : ops([e])[0]))).toEqual([
      `add:${bob.id}`,
      "message",
      `add:${owner.id}`,
      "message",
    ]);
    expect(evs[2]!["person"]).toMatchObject({ full_name: "Olive Owner" });
    // Already visible: nothing more.
    const again = await s.call(owner, "POST", "/messages", {
      type: "direct",
      to: JSON.stringify([guest.id]),
      content: "2",
    });
    expect(again.status).toBe(200);
    expect(ops(await userEvents(guest, q))).toEqual([`add:${bob.id}`, `add:${owner.id}`]);
  });

  it("a guest made a member hears of everyone; a member made a guest loses who they cannot see", async () => {
    const { owner, alice, bob, guest } = s.seed;
    const [g, a] = [await queue(guest), await queue(alice)];
    expect((await s.call(owner, "PATCH", `/users/${guest.id}`, { role: 400 })).status).toBe(200);
    const gained = (await userEvents(guest, g)).filter((e) => e.op === "add");
    expect(ops(gained).sort()).toEqual([`add:${owner.id}`, `add:${bob.id}`].sort());
    expect((await names(guest)).get(bob.id)).toBe("Bob");

    // Bob shares #general with Olive and Alice, #hall with Olive: he loses only Gus.
    const b = await queue(bob);
    expect((await s.call(owner, "PATCH", `/users/${bob.id}`, { role: 600 })).status).toBe(200);
    expect(ops((await userEvents(bob, b)).filter((e) => e.op !== "update"))).toEqual([`remove:${guest.id}`]);
    expect((await names(bob)).get(guest.id)).toBe("Unknown user");
    expect((await names(bob)).get(alice.id)).toBe("Alice");
    expect(ops(await userEvents(alice, a)).filter((op) => !op.startsWith("update"))).toEqual([]);
  });
});

describe("limited guests: subscriber lists", () => {
  it("name users the guest may not see, as Zulip's do (a web-public channel's)", async () => {
    const { owner, bob, guest } = s.seed;
    const spectators = await s.call(owner, "PATCH", "/realm", { enable_spectator_access: true });
    expect(spectators.status).toBe(200);
    const created = await s.call(owner, "POST", "/users/me/subscriptions", {
      subscriptions: JSON.stringify([{ name: "plaza" }]),
      principals: JSON.stringify([bob.id]),
      is_web_public: true,
    });
    expect(created.body["msg"] ?? "").toBe("");
    const id = (await s.call(owner, "GET", "/get_stream_id", { stream: "plaza" })).body["stream_id"] as number;
    expect((await names(guest)).get(bob.id)).toBe("Unknown user");
    const members = await s.call(guest, "GET", `/streams/${id}/members`);
    expect(members.body["subscribers"]).toEqual([bob.id]);
    const listed = (
      await s.call(guest, "POST", "/register", {
        fetch_event_types: JSON.stringify(["subscription"]),
        include_subscribers: true,
      })
    ).body["never_subscribed"] as { stream_id: number; subscribers: number[] }[];
    expect(listed.find((c) => c.stream_id === id)?.subscribers).toEqual([bob.id]);
  });
});
