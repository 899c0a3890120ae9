/**
 * Register serves channel objects and recent_private_conversations from caches
 * (src/http/views/channel-json.ts, the engine's recent-conversations cache). A later
 * register must reflect every change since the earlier one; these fail if a cache
 * keeps an old answer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/http.js";
import { groupToWire } from "../../src/wire/group.js";
import { userTopicToWire } from "../../src/wire/user-topic.js";

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.close());

type Wire = Record<string, unknown>;
const register = async (user: TestServer["seed"]["alice"], params: Record<string, unknown> = {}) => {
  const r = await s.call(user, "POST", "/register", params);
  expect(r.status).toBe(200);
  return r.body;
};
const byName = (list: unknown, name: string) => (list as Wire[]).find((c) => c["name"] === name);

describe("POST /register after changes", () => {
  it("channel objects equal GET /streams and /users/me/subscriptions objects", async () => {
    const { alice, owner } = s.seed;
    await s.call(owner, "POST", "/users/me/subscriptions", {
      subscriptions: [{ name: "elsewhere", description: "not *alice's*" }],
    });
    const b = await register(alice, { include_subscribers: true });
    const streams = (await s.call(alice, "GET", "/streams")).body["streams"] as Wire[];
    expect(b["streams"]).toEqual(streams);
    const subs = (await s.call(alice, "GET", "/users/me/subscriptions", { include_subscribers: true })).body[
      "subscriptions"
    ] as Wire[];
    expect(b["subscriptions"]).toEqual(subs);
    const never = byName(b["never_subscribed"], "elsewhere")!;
    expect(never).toEqual({ ...byName(streams, "elsewhere"), subscribers: [owner.id] });
  });

  it("shows a channel's first message, subscriber count and the user's settings as they are now", async () => {
    const { alice, bob } = s.seed;
    await s.call(alice, "POST", "/users/me/subscriptions", { subscriptions: [{ name: "fresh" }] });
    const before = await register(bob);
    const first = byName(before["never_subscribed"], "fresh")!;
    expect(first["subscriber_count"]).toBe(1);
    const firstMessageId = first["first_message_id"];
    expect(byName(before["streams"], "fresh")!["first_message_id"]).toBe(firstMessageId);

    // A new record for the channel (its first message changes) and a subscriber more.
    await s.call(bob, "POST", "/users/me/subscriptions", { subscriptions: [{ name: "fresh" }] });
    const fresh = byName((await s.call(bob, "GET", "/streams")).body["streams"], "fresh")!;
    await s.call(bob, "POST", "/users/me/subscriptions/properties", {
      subscription_data: JSON.stringify([{ stream_id: fresh["stream_id"], property: "color", value: "#123456" }]),
    });
    const after = await register(bob);
    const sub = byName(after["subscriptions"], "fresh")!;
    expect(sub["subscriber_count"]).toBe(2);
    expect(sub["color"]).toBe("#123456");
    expect(byName(after["streams"], "fresh")!["subscriber_count"]).toBe(2);
    expect(byName(after["never_subscribed"], "fresh")).toBeUndefined();
  });

  it("shows first_message_id once a channel without messages gets one", async () => {
    const { alice, bob } = s.seed;
    // Created through the engine: no notification-bot message, so no first message yet.
    s.t.store.subscribe(alice.id, { channels: [{ name: "quiet" }] });
    const before = await register(bob);
    expect(byName(before["streams"], "quiet")!["first_message_id"]).toBeNull();
    const sent = await s.call(alice, "POST", "/messages", {
      type: "stream",
      to: "quiet",
      topic: "t",
      content: "first",
    });
    const after = await register(bob);
    expect(byName(after["streams"], "quiet")!["first_message_id"]).toBe(sent.body["id"]);
    expect(byName(after["never_subscribed"], "quiet")!["first_message_id"]).toBe(sent.body["id"]);
  });

  it("recent_private_conversations follows new direct messages", async () => {
    const { alice, bob, owner } = s.seed;
    const first = await s.call(alice, "POST", "/messages", { type: "direct", to: [bob.id], content: "one" });
    const before = (await register(alice))["recent_private_conversations"] as Wire[];
    expect(before[0]).toEqual({ max_message_id: first.body["id"], user_ids: [bob.id] });
    const second = await s.call(owner, "POST", "/messages", { type: "direct", to: [alice.id], content: "two" });
    const third = await s.call(bob, "POST", "/messages", { type: "direct", to: [alice.id], content: "three" });
    const after = (await register(alice))["recent_private_conversations"] as Wire[];
    expect(after.slice(0, 2)).toEqual([
      { max_message_id: third.body["id"], user_ids: [bob.id] },
      { max_message_id: second.body["id"], user_ids: [owner.id] },
    ]);
  });
});

/**
 * realm_user_groups and GET /user_groups come from a per-realm JSON cache
 * (src/http/views/group-list-cache.ts). After every kind of change that reaches a
 * group's wire form, both must equal a list built now from the store.
 */
describe("user group lists after changes", () => {
  const fresh = (includeDeactivated: boolean) =>
    JSON.parse(
      JSON.stringify(
        s.t.store
          .userGroups(s.seed.owner.id, includeDeactivated)
          .map((g) => groupToWire(s.t.store, g.group, g.members)),
      ),
    ) as unknown;
  const check = async () => {
    const { owner } = s.seed;
    expect((await register(owner))["realm_user_groups"]).toEqual(fresh(false));
    expect(
      (await register(owner, { client_capabilities: { include_deactivated_groups: true } }))["realm_user_groups"],
    ).toEqual(fresh(true));
    expect((await s.call(owner, "GET", "/user_groups")).body["user_groups"]).toEqual(fresh(false));
    expect(
      (await s.call(owner, "GET", "/user_groups", { include_deactivated_groups: true })).body["user_groups"],
    ).toEqual(fresh(true));
  };

  it("follow group, membership, role, activity and bot changes", async () => {
    const { owner, alice, bob, realm } = s.seed;
    const store = s.t.store;
    await check();
    const group = store.createGroup(owner.id, { name: "cachers", description: "d", members: [alice.id] });
    await check();
    store.updateGroupMembers(owner.id, group.id, [bob.id], [alice.id]);
    await check();
    store.updateGroup(owner.id, group.id, { name: "renamed", description: "new" });
    await check();
    const other = store.createGroup(owner.id, { name: "outer", members: [] });
    store.updateGroupSubgroups(owner.id, other.id, [group.id], []);
    await check();
    // Role and activity changes move users between system groups without touching a group record.
    store.updateUser(owner.id, bob.id, { role: 200 });
    await check();
    store.setUserActive(alice.id, false);
    await check();
    store.setUserActive(alice.id, true);
    await check();
    store.createUser({
      realmId: realm.id,
      email: "cache-bot@test.dev",
      fullName: "Cache Bot",
      bot: { type: 1, ownerId: owner.id },
    });
    await check();
    store.deactivateGroup(owner.id, other.id);
    await check();
  });
});

describe("user_topics", () => {
  it("is the JSON of userTopicToWire, with the empty topic shown by name unless the client knows it", async () => {
    const { alice, general, realm } = s.seed;
    for (const [topic, policy] of [
      ["plain", 1],
      ['quo"te\\ and é ✔ 😀', 2],
      ["", 3],
      ["line\nbreak\u2028", 1],
    ] as const)
      s.t.store.setTopicPolicy(alice.id, general.id, topic, policy);
    const expected = (emptyTopicName: boolean) =>
      JSON.parse(
        JSON.stringify(
          s.t.store
            .userTopics(alice.id)
            .map((t) =>
              userTopicToWire(
                t.topic === "" && !emptyTopicName
                  ? { ...t, topic: s.t.store.findRealm(realm.id)!.emptyTopicDisplayName }
                  : t,
              ),
            ),
        ),
      ) as unknown;
    const plain = (await register(alice))["user_topics"] as Wire[];
    expect(plain.length).toBeGreaterThanOrEqual(4);
    expect(plain).toEqual(expected(false));
    expect((await register(alice, { client_capabilities: { empty_topic_name: true } }))["user_topics"]).toEqual(
      expected(true),
    );
  });
});
