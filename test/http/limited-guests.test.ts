/**
 * Limited guests over HTTP (Zulip's can_access_all_users_group set to role:members): a
 * guest sees themselves, bots, the subscribers of their channels and their DM partners;
 * every other user is an "Unknown user" placeholder in GET /users and register (left
 * out for user_list_incomplete clients), "Insufficient permission" by ID or email, and
 * out of the realm_user events about them. Access follows subscriptions and DMs at once.
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
  // The guest shares one channel, with Alice only.
  s.t.store.subscribe(owner.id, {
    channels: [{ name: "lobby" }],
    principals: [alice.id, guest.id],
    newChannel: { inviteOnly: true, historyPublicToSubscribers: true },
  });
});
afterEach(() => s.close());

type Person = { user_id: number; full_name: string; email: string; avatar_url: string | null };
type Ev = Record<string, unknown> & { type: string };

const limit = async () => {
  const members = s.t.store.systemGroupId(s.seed.realm.id, "role:members");
  const r = await s.call(s.seed.owner, "PATCH", "/realm", {
    can_access_all_users_group: JSON.stringify({ new: members }),
  });
  expect(r.body).toMatchObject({ result: "success", can_access_all_users_group: members });
};
const members = async (user: User, params: Record<string, unknown> = {}) =>
  (await s.call(user, "GET", "/users", params)).body["members"] as Person[];
const byId = (list: Person[]) => new Map(list.map((p) => [p.user_id, p]));
const realmUsers = async (user: User, caps: Record<string, boolean> = {}) =>
  (
    await s.call(user, "POST", "/register", {
      fetch_event_types: ["realm_user"],
      client_capabilities: JSON.stringify(caps),
    })
  ).body["realm_users"] as Person[];
const queue = async (user: User, caps: Record<string, boolean> = {}) =>
  (
    await s.call(user, "POST", "/register", {
      event_types: JSON.stringify(["realm_user"]),
      client_capabilities: JSON.stringify(caps),
    })
  ).body["queue_id"] as string;
const events = async (user: User, q: string) =>
  (await s.call(user, "GET", "/events", { queue_id: q, last_event_id: -1, dont_block: true })).body["events"] as Ev[];

describe("can_access_all_users_group = role:members", () => {
  it("GET /users: placeholders for the users a limited guest may not see", async () => {
    const { owner, alice, bob, guest } = s.seed;
    expect(byId(await members(guest)).get(bob.id)?.full_name).toBe("Bob");
    await limit();
    const seen = byId(await members(guest));
    const host = (await s.call(guest, "GET", "/server_settings")).body["realm_uri"] as string;
    expect(seen.get(alice.id)?.full_name).toBe("Alice");
    expect(seen.get(guest.id)?.full_name).toBe("Gus Guest");
    expect(seen.get(bot.id)?.full_name).toBe("Helper");
    for (const hidden of [owner, bob]) {
      expect(seen.get(hidden.id)).toMatchObject({
        full_name: "Unknown user",
        email: `user${hidden.id}@${new URL(host).host}`,
        delivery_email: null,
        is_active: true,
        role: 400,
        date_joined: "1970-01-01T00:00:00+00:00",
        avatar_url: "/static/images/unknown-user-avatar.png",
      });
    }
    expect(JSON.stringify(await members(guest))).not.toContain("bob@test.dev");
    // user_ids names the same placeholders.
    const some = await members(guest, { user_ids: JSON.stringify([bob.id, alice.id]) });
    expect(some.map((p) => p.full_name).sort()).toEqual(["Alice", "Unknown user"]);
    // Members still see everyone.
    expect(byId(await members(alice)).get(bob.id)?.full_name).toBe("Bob");
  });

  it("register: placeholders, or nothing with user_list_incomplete", async () => {
    const { bob, alice, guest } = s.seed;
    await limit();
    const full = byId(await realmUsers(guest));
    expect(full.get(bob.id)?.full_name).toBe("Unknown user");
    expect(full.get(alice.id)?.full_name).toBe("Alice");
    const incomplete = byId(await realmUsers(guest, { user_list_incomplete: true }));
    expect(incomplete.has(bob.id)).toBe(false);
    expect(incomplete.get(alice.id)?.full_name).toBe("Alice");
    expect(incomplete.get(bot.id)?.full_name).toBe("Helper");
  });

  it("GET /users/{id} and /users/{email}: Insufficient permission for a hidden user", async () => {
    const { bob, alice, guest } = s.seed;
    expect((await s.call(guest, "GET", `/users/${bob.id}`)).status).toBe(200);
    await limit();
    for (const path of [`/users/${bob.id}`, "/users/bob@test.dev"]) {
      const r = await s.call(guest, "GET", path);
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ result: "error", msg: "Insufficient permission", code: "BAD_REQUEST" });
    }
    expect((await s.call(guest, "GET", `/users/${alice.id}`)).body["user"]).toMatchObject({ full_name: "Alice" });
    expect((await s.call(guest, "GET", `/users/${bot.id}`)).status).toBe(200);
    expect((await s.call(alice, "GET", `/users/${bob.id}`)).status).toBe(200);
  });

  it("access follows subscriptions and direct messages at once", async () => {
    const { owner, bob, guest } = s.seed;
    await limit();
    expect(byId(await members(guest)).get(bob.id)?.full_name).toBe("Unknown user");
    s.t.store.subscribe(s.seed.alice.id, { channels: [{ name: "lobby" }], principals: [bob.id] });
    expect(byId(await members(guest)).get(bob.id)?.full_name).toBe("Bob");
    s.t.store.unsubscribe(bob.id, ["lobby"]);
    expect(byId(await members(guest)).get(bob.id)?.full_name).toBe("Unknown user");
    expect(byId(await members(guest)).get(owner.id)?.full_name).toBe("Unknown user");
    const sent = await s.call(owner, "POST", "/messages", {
      type: "direct",
      to: JSON.stringify([guest.id]),
      content: "hi",
    });
    expect(sent.status).toBe(200);
    expect(byId(await members(guest)).get(owner.id)?.full_name).toBe("Olive Owner");
    expect((await s.call(guest, "GET", `/users/${owner.id}`)).status).toBe(200);
  });

  it("realm_user events: a placeholder add (none with user_list_incomplete), no updates about hidden users", async () => {
    const { owner, alice, bob, guest } = s.seed;
    await limit();
    const [full, incomplete, member] = [
      await queue(guest),
      await queue(guest, { user_list_incomplete: true }),
      await queue(alice),
    ];
    const newId = s.t.store.createUser({ realmId: owner.realmId, email: "newbie@test.dev", fullName: "Newbie" }).id;
    await s.call(owner, "PATCH", `/users/${bob.id}`, { full_name: "Robert" });
    await s.call(owner, "PATCH", `/users/${alice.id}`, { full_name: "Alicia" });

    const adds = (evs: Ev[]) => evs.filter((e) => e.type === "realm_user" && e["op"] === "add");
    const updates = (evs: Ev[]) => evs.filter((e) => e.type === "realm_user" && e["op"] === "update");
    const guestEvents = await events(guest, full);
    expect(adds(guestEvents).map((e) => e["person"])).toEqual([
      expect.objectContaining({ user_id: newId, full_name: "Unknown user" }),
    ]);
    expect(JSON.stringify(guestEvents)).not.toContain("Newbie");
    expect(JSON.stringify(guestEvents)).not.toContain("Robert");
    expect(updates(guestEvents).map((e) => e["person"])).toEqual([{ user_id: alice.id, full_name: "Alicia" }]);

    const incompleteEvents = await events(guest, incomplete);
    expect(adds(incompleteEvents)).toEqual([]);
    expect(updates(incompleteEvents).map((e) => (e["person"] as Person).user_id)).toEqual([alice.id]);

    const memberEvents = await events(alice, member);
    expect(adds(memberEvents).map((e) => (e["person"] as Person).full_name)).toEqual(["Newbie"]);
    expect(updates(memberEvents).map((e) => (e["person"] as Person).full_name)).toEqual(["Robert", "Alicia"]);
  });

  it("message senders a limited guest may not see are Unknown user, in GET /messages and message events", async () => {
    const { owner, alice, bob, guest } = s.seed;
    s.t.store.subscribe(owner.id, { channels: [{ name: "town" }], principals: [alice.id, guest.id] });
    await limit();
    const q = (await s.call(guest, "POST", "/register", { event_types: JSON.stringify(["message"]) })).body[
      "queue_id"
    ] as string;
    // Bob is not subscribed: he may still post to the public channel.
    for (const [sender, content] of [
      [bob, "from bob"],
      [alice, "from alice"],
    ] as const) {
      const r = await s.call(sender, "POST", "/messages", { type: "stream", to: "town", topic: "t", content });
      expect(r.status).toBe(200);
    }
    type Msg = { sender_id: number; sender_full_name: string; sender_email: string; avatar_url: string | null };
    const check = (messages: Msg[]) => {
      const bobs = messages.find((m) => m.sender_id === bob.id);
      expect(bobs).toMatchObject({
        sender_full_name: "Unknown user",
        avatar_url: "/static/images/unknown-user-avatar.png",
      });
      expect(bobs?.sender_email).toMatch(new RegExp(`^user${bob.id}@`));
      expect(messages.find((m) => m.sender_id === alice.id)?.sender_full_name).toBe("Alice");
      expect(JSON.stringify(messages)).not.toContain("bob@test.dev");
    };
    check((await events(guest, q)).filter((e) => e.type === "message").map((e) => e["message"] as Msg));
    const window = await s.call(guest, "GET", "/messages", {
      anchor: "newest",
      num_before: 10,
      num_after: 0,
      narrow: JSON.stringify([{ operator: "channel", operand: "town" }]),
    });
    check(window.body["messages"] as Msg[]);
    // Alice, a member, sees Bob's name (and the shared message cache still holds it).
    const forAlice = await s.call(alice, "GET", "/messages", {
      anchor: "newest",
      num_before: 10,
      num_after: 0,
      narrow: JSON.stringify([{ operator: "channel", operand: "town" }]),
    });
    const seen = forAlice.body["messages"] as Msg[];
    expect(seen.find((m) => m.sender_id === bob.id)?.sender_full_name).toBe("Bob");
    const bobsId = (window.body["messages"] as { id: number; sender_id: number }[]).find(
      (m) => m.sender_id === bob.id,
    )?.id;
    const single = await s.call(guest, "GET", `/messages/${bobsId ?? 0}`);
    expect((single.body["message"] as Msg).sender_full_name).toBe("Unknown user");
  });
});
