/**
 * Every channel permission group register reports, enforced over HTTP: for each,
 * a member the setting excludes is refused and, once PATCH /streams/{id} puts them in
 * the group, allowed (guests never, for the settings that exclude role:everyone).
 * Moving, resolving and deleting (can_move_*, can_resolve_topics_group,
 * can_delete_*) are covered with those actions' own tests.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Channel, User } from "../../src/engine/index.js";
import { startServer, type TestServer } from "../support/http.js";

let server: TestServer;
let club: Channel;
beforeEach(async () => {
  server = await startServer();
  const { owner, alice } = server.seed;
  // A private channel with shared history: owner and alice subscribed; bob and the guest are not.
  const r = await server.call(owner, "POST", "/users/me/subscriptions", {
    subscriptions: [{ name: "club" }],
    principals: [owner.id, alice.id],
    invite_only: true,
    history_public_to_subscribers: true,
  });
  expect(r.status).toBe(200);
  club = server.t.store.visibleChannels(owner.id, false).find((c) => c.name === "club")!;
  server.t.store.sendMessage({
    senderId: owner.id,
    to: { type: "channel", channel: "club", topic: "old" },
    content: "x",
  });
});
afterEach(() => server.close());

const sys = (name: string) => server.t.store.systemGroupId(server.seed.realm.id, name);
const only = (user: User) => ({ direct_members: [user.id], direct_subgroups: [] });

async function setGroup(setting: string, value: unknown): Promise<void> {
  const r = await server.call(server.seed.owner, "PATCH", `/streams/${club.id}`, { [setting]: { new: value } });
  expect(r.body, JSON.stringify(r.body)).toMatchObject({ result: "success" });
}

const send = (user: User, topic: string) =>
  server.call(user, "POST", "/messages", { type: "stream", to: club.id, topic, content: "hi" });

describe("channel permission groups", () => {
  it("can_send_message_group", async () => {
    const { alice } = server.seed;
    await setGroup("can_send_message_group", sys("role:moderators"));
    expect((await send(alice, "old")).body["msg"]).toBe("You do not have permission to post in this channel.");
    await setGroup("can_send_message_group", only(alice));
    expect((await send(alice, "old")).status).toBe(200);
  });

  it("can_create_topic_group: new topics only; existing ones stay open", async () => {
    const { alice } = server.seed;
    await setGroup("can_create_topic_group", sys("role:moderators"));
    expect((await send(alice, "brand new")).body["msg"]).toBe(
      "You do not have permission to create new topics in this channel.",
    );
    expect((await send(alice, "OLD")).status).toBe(200);
    await setGroup("can_create_topic_group", only(alice));
    expect((await send(alice, "brand new")).status).toBe(200);
  });

  it("can_subscribe_group: joining a private channel, and reading its shared history before", async () => {
    const { bob, guest } = server.seed;
    const join = (user: User) =>
      server.call(user, "POST", "/users/me/subscriptions", { subscriptions: [{ name: "club" }] });
    const history = (user: User) =>
      server.call(user, "GET", "/messages", {
        anchor: "newest",
        num_before: 10,
        num_after: 0,
        narrow: [{ operator: "channel", operand: club.id }],
      });
    expect((await join(bob)).body["msg"]).toBe("Unable to access channel (club).");
    // Before: a channel bob cannot see is no narrow at all.
    expect((await history(bob)).status).toBe(400);
    await setGroup("can_subscribe_group", { direct_members: [bob.id, guest.id], direct_subgroups: [] });
    expect((await server.call(bob, "GET", `/streams/${club.id}`)).status).toBe(200);
    // The creation notice and the owner's message.
    expect(((await history(bob)).body["messages"] as unknown[]).length).toBe(2);
    expect((await join(bob)).status).toBe(200);
    // Guests never get a permission whose setting excludes role:everyone.
    expect((await join(guest)).body["msg"]).toBe("Unable to access channel (club).");
  });

  it("can_add_subscribers_group: a non-subscriber in the group may subscribe others", async () => {
    const { bob, guest } = server.seed;
    const add = (actor: User) =>
      server.call(actor, "POST", "/users/me/subscriptions", {
        subscriptions: [{ name: "club" }],
        principals: [guest.id],
      });
    expect((await add(bob)).body["msg"]).toBe("Unable to access channel (club).");
    await setGroup("can_add_subscribers_group", only(bob));
    expect((await add(bob)).status).toBe(200);
    expect(server.t.store.subscribersVisibleTo(bob.id, club.id)).toContain(guest.id);
  });

  it("can_remove_subscribers_group: removing others; guests never", async () => {
    const { owner, alice, bob, guest } = server.seed;
    await server.call(owner, "POST", "/users/me/subscriptions", {
      subscriptions: [{ name: "club" }],
      principals: [bob.id, guest.id],
    });
    const remove = (actor: User, target: User) =>
      server.call(actor, "DELETE", "/users/me/subscriptions", { subscriptions: ["club"], principals: [target.id] });
    expect((await remove(alice, bob)).body["msg"]).toBe("Insufficient permission");
    await setGroup("can_remove_subscribers_group", { direct_members: [alice.id, guest.id], direct_subgroups: [] });
    expect((await remove(guest, bob)).body["msg"]).toBe("Insufficient permission");
    expect((await remove(alice, bob)).status).toBe(200);
  });

  it("can_administer_channel_group: administering without content access", async () => {
    const { bob } = server.seed;
    const rename = () => server.call(bob, "PATCH", `/streams/${club.id}`, { new_name: "Club" });
    expect((await rename()).body["msg"]).toBe("Invalid channel ID");
    await setGroup("can_administer_channel_group", only(bob));
    expect((await rename()).status).toBe(200);
    // Privacy still needs content access.
    expect((await server.call(bob, "PATCH", `/streams/${club.id}`, { is_private: false })).body["msg"]).toBe(
      "Channel content access is required.",
    );
  });
});

describe("the organization's channel permissions (PATCH /realm)", () => {
  const setRealm = async (setting: string, group: string) => {
    const r = await server.call(server.seed.owner, "PATCH", "/realm", { [setting]: { new: sys(group) } });
    expect(r.body, JSON.stringify(r.body)).toMatchObject({ result: "success" });
  };

  it("can_create_public/private_channel_group decide who creates which channels, and register says so", async () => {
    const { bob } = server.seed;
    await setRealm("can_create_public_channel_group", "role:administrators");
    const create = (inviteOnly: boolean) =>
      server.call(bob, "POST", "/channels/create", {
        name: `c${String(inviteOnly)}`,
        subscribers: [],
        invite_only: inviteOnly,
      });
    expect((await create(false)).body["msg"]).toBe("Insufficient permission");
    expect((await create(true)).status).toBe(200);
    const reg = await server.call(bob, "POST", "/register", { fetch_event_types: ["realm_user"] });
    expect([reg.body["can_create_public_streams"], reg.body["can_create_private_streams"]]).toEqual([false, true]);
  });

  it("can_add_subscribers_group: members outside it may not subscribe others; content access is needed first", async () => {
    const { bob, alice, owner } = server.seed;
    const add = (actor: User, channel: string) =>
      server.call(actor, "POST", "/users/me/subscriptions", {
        subscriptions: [{ name: channel }],
        principals: [alice.id],
      });
    await server.call(owner, "POST", "/users/me/subscriptions", {
      subscriptions: [{ name: "general" }],
      principals: [bob.id],
    });
    await server.call(owner, "DELETE", "/users/me/subscriptions", {
      subscriptions: ["general"],
      principals: [alice.id],
    });
    await setRealm("can_add_subscribers_group", "role:administrators");
    expect((await add(bob, "general")).body["msg"]).toBe("Insufficient permission");
    // An administrator not subscribed to a private channel cannot reach it to add anyone.
    const admin = server.t.store.createUser({
      realmId: server.seed.realm.id,
      email: "admin@test.dev",
      fullName: "Ada Admin",
      role: 200,
    });
    expect((await add(admin, "club")).body["msg"]).toBe("Unable to access channel (club).");
    expect((await add(admin, "general")).status).toBe(200);
  });

  it("can_set_topics_policy_group: administrators always; channel administrators only when in it", async () => {
    const { alice, owner } = server.seed;
    await setGroup("can_administer_channel_group", only(alice));
    await setRealm("can_set_topics_policy_group", "role:nobody");
    const set = (user: User) =>
      server.call(user, "PATCH", `/streams/${club.id}`, { topics_policy: "disable_empty_topic" });
    expect((await set(alice)).body["msg"]).toBe("Insufficient permission");
    expect((await set(owner)).status).toBe(200);
  });
});
