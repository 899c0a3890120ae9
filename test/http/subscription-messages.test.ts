/**
 * POST /users/me/subscriptions: per-item `color` and send_new_subscription_messages.
 * People the caller subscribes to existing channels hear it from the Notification Bot
 * (never the caller, bots, or channels the request creates), unless the request newly
 * subscribed more than max_bulk_new_subscription_messages users; the answer's
 * new_subscription_messages_sent says which, present only when messages were asked for.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";

let s: TestServer;
let helperBot: User;

beforeAll(async () => {
  s = await startServer();
  const { store } = s.t;
  const { owner, realm } = s.seed;
  helperBot = store.createUser({
    realmId: realm.id,
    email: "helper-bot@test.dev",
    fullName: "Helper",
    bot: { type: 1, ownerId: owner.id },
  });
  for (const name of ["design", "docs", "ops", "tools"])
    store.subscribe(owner.id, { channels: [{ name }], principals: [owner.id] });
});
afterAll(() => s.close());

const subscribe = (user: User, params: Record<string, unknown>) =>
  s.call(user, "POST", "/users/me/subscriptions", params);

/** The Notification Bot's direct messages `user` has, oldest first (raw Markdown). */
async function botMessages(user: User): Promise<string[]> {
  const r = await s.call(user, "GET", "/messages", {
    anchor: "newest",
    num_before: 200,
    num_after: 0,
    narrow: JSON.stringify([{ operator: "is", operand: "dm" }]),
    apply_markdown: false,
  });
  expect(r.status).toBe(200);
  return (r.body["messages"] as Record<string, unknown>[])
    .filter((m) => m["sender_email"] === "notification-bot@zulip.com")
    .map((m) => m["content"] as string);
}

async function colorOf(user: User, channel: string): Promise<unknown> {
  const r = await s.call(user, "GET", "/users/me/subscriptions");
  return (r.body["subscriptions"] as Record<string, unknown>[]).find((sub) => sub["name"] === channel)?.["color"];
}

describe("send_new_subscription_messages", () => {
  it("by default tells each person subscribed by someone else which existing channels, not the caller or bots", async () => {
    const { owner, alice, bob } = s.seed;
    const before = { alice: (await botMessages(alice)).length, owner: (await botMessages(owner)).length };
    const r = await subscribe(owner, {
      subscriptions: [{ name: "docs" }, { name: "design" }, { name: "brand-new" }],
      principals: [owner.id, alice.id, bob.id, helperBot.id],
    });
    expect(r.status).toBe(200);
    expect(r.body["new_subscription_messages_sent"]).toBe(true);
    const mention = `@_**${owner.fullName}|${owner.id}**`;
    const expected = `${mention} subscribed you to the following channels:\n\n* #**design**\n* #**docs**`;
    expect((await botMessages(alice)).slice(before.alice)).toEqual([expected]);
    expect((await botMessages(bob)).at(-1)).toBe(expected);
    expect((await botMessages(owner)).length).toBe(before.owner);
    expect(await botMessages(helperBot)).toEqual([]);
    // One channel: one line.
    await subscribe(owner, { subscriptions: [{ name: "ops" }], principals: [alice.id] });
    expect((await botMessages(alice)).at(-1)).toBe(`${mention} subscribed you to #**ops**.`);
  });

  it("sends nothing when asked not to, and leaves new_subscription_messages_sent out", async () => {
    const { owner, alice } = s.seed;
    const count = (await botMessages(alice)).length;
    const r = await subscribe(owner, {
      subscriptions: [{ name: "tools" }],
      principals: [alice.id],
      send_new_subscription_messages: false,
    });
    expect(r.status).toBe(200);
    expect(r.body["subscribed"]).toEqual({ [String(alice.id)]: ["tools"] });
    expect(r.body).not.toHaveProperty("new_subscription_messages_sent");
    expect(r.body["ignored_parameters_unsupported"]).toBeUndefined();
    expect((await botMessages(alice)).length).toBe(count);
  });

  it("sends none when more than max_bulk_new_subscription_messages (100) users were newly subscribed", async () => {
    const { store } = s.t;
    const { owner, realm } = s.seed;
    const register = await s.call(owner, "POST", "/register", { fetch_event_types: ["realm"] });
    expect(register.body["max_bulk_new_subscription_messages"]).toBe(100);
    const crowd = Array.from({ length: 101 }, (_, i) =>
      store.createUser({ realmId: realm.id, email: `crowd${i}@test.dev`, fullName: `Crowd ${i}` }),
    );
    const over = await subscribe(owner, { subscriptions: [{ name: "design" }], principals: crowd.map((u) => u.id) });
    expect(over.body["new_subscription_messages_sent"]).toBe(false);
    expect(await botMessages(crowd[0]!)).toEqual([]);
    // Exactly 100 newly subscribed users (one is already subscribed): sent.
    const atLimit = await subscribe(owner, {
      subscriptions: [{ name: "docs" }],
      principals: crowd.slice(0, 100).map((u) => u.id),
    });
    expect(atLimit.body["new_subscription_messages_sent"]).toBe(true);
    expect(await botMessages(crowd[0]!)).toHaveLength(1);
  });
});

describe("color", () => {
  it("colors every new subscription the item makes; a returning subscriber keeps theirs", async () => {
    const { owner, bob } = s.seed;
    s.t.store.subscribe(owner.id, { channels: [{ name: "paint" }], principals: [owner.id] });
    const r = await subscribe(owner, {
      subscriptions: [
        { name: "paint", color: "#ABCDEF" },
        { name: "fresh-paint", color: "#123" },
      ],
      principals: [owner.id, bob.id],
    });
    expect(r.status).toBe(200);
    expect(await colorOf(bob, "paint")).toBe("#ABCDEF");
    expect(await colorOf(bob, "fresh-paint")).toBe("#123");
    expect(await colorOf(owner, "fresh-paint")).toBe("#123");
    const ownersPaint = await colorOf(owner, "paint");
    expect(ownersPaint).not.toBe("#ABCDEF");
    await s.call(bob, "DELETE", "/users/me/subscriptions", { subscriptions: ["paint"] });
    expect((await subscribe(bob, { subscriptions: [{ name: "paint", color: "#000000" }] })).status).toBe(200);
    expect(await colorOf(bob, "paint")).toBe("#ABCDEF");
  });

  it("refuses a color that is not a hex color code, changing nothing", async () => {
    for (const color of ["red", "#12345G", "#1234567", "123456"])
      await expectRejectedUnchanged(
        s,
        () => subscribe(s.seed.alice, { subscriptions: [{ name: "design", color }, { name: "never-made" }] }),
        400,
        "BAD_REQUEST",
        "add.color is not a valid hex color code",
      );
  });
});
