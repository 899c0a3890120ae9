/**
 * Event queues over HTTP: register + GET /events, long-poll wake-up, heartbeat,
 * idle expiry, BAD_EVENT_QUEUE_ID, backlog cap, DELETE, typing, local echo, and
 * restore after a graceful restart — with a manual clock (no test waits 45 s).
 */
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/realtime/index.js";
import { MAX_POLL_ANSWER_CHARS } from "../../src/realtime/hub.js";
import { startServer, expectRejectedUnchanged, type TestServer } from "../support/http.js";

let server: TestServer;
let clock: ManualClock;

async function boot(maxQueueEvents = 10_000): Promise<void> {
  clock = new ManualClock();
  server = await startServer({ events: { clock, maxQueueEvents, random: () => 0 } });
  // First messages set the channels' first_message_id (a stream update event of its own).
  for (const to of ["general", "secret"])
    await server.call(server.seed.owner, "POST", "/messages", { type: "stream", to, topic: "setup", content: "first" });
}

afterEach(() => server?.close());

type Ev = Record<string, unknown> & { type: string; id: number };

async function register(user: TestServer["seed"]["owner"], params: Record<string, unknown> = {}): Promise<string> {
  const r = await server.call(user, "POST", "/register", {
    event_types: ["message", "update_message_flags", "reaction", "subscription", "typing", "stream", "realm_user"],
    ...params,
  });
  expect(r.status).toBe(200);
  expect(r.body["last_event_id"]).toBe(-1);
  return r.body["queue_id"] as string;
}

async function events(user: TestServer["seed"]["owner"], queueId: string, lastEventId = -1): Promise<Ev[]> {
  const r = await server.call(user, "GET", "/events", {
    queue_id: queueId,
    last_event_id: lastEventId,
    dont_block: true,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body["queue_id"]).toBe(queueId);
  return r.body["events"] as Ev[];
}

describe("event queues", () => {
  it("delivers a message another user sends, with per-recipient flags and local echo only to the sender's queue", async () => {
    await boot();
    const { owner, alice, guest } = server.seed;
    const qOwner = await register(owner);
    const qAlice = await register(alice);
    const qGuest = await register(guest);
    const sent = await server.call(owner, "POST", "/messages", {
      type: "stream",
      to: "general",
      topic: "t",
      content: "hi @**Alice**",
      queue_id: qOwner,
      local_id: "1.01",
    });
    expect(sent.status).toBe(200);
    const [mine] = await events(owner, qOwner);
    expect(mine!.type).toBe("message");
    expect(mine!["local_message_id"]).toBe("1.01");
    expect((mine!["message"] as { id: number }).id).toBe(sent.body["id"]);
    const [hers] = await events(alice, qAlice);
    expect(hers!["local_message_id"]).toBeUndefined();
    expect(hers!["flags"]).toEqual(["mentioned"]);
    // The guest is not subscribed to general: nothing.
    expect(await events(guest, qGuest)).toEqual([]);
  });

  it("a private channel's messages reach only its subscribers", async () => {
    await boot();
    const { owner, alice, bob } = server.seed;
    const qBob = await register(bob);
    const qAlice = await register(alice);
    await server.call(owner, "POST", "/messages", { type: "stream", to: "secret", topic: "t", content: "psst" });
    expect(await events(bob, qBob)).toEqual([]);
    expect((await events(alice, qAlice)).map((e) => e.type)).toEqual(["message"]);
  });

  it("a waiting long-poll wakes on an event; last_event_id acknowledges", async () => {
    await boot();
    const { owner, alice } = server.seed;
    const q = await register(alice);
    const poll = server.call(alice, "GET", "/events", { queue_id: q, last_event_id: -1 });
    await new Promise((r) => setTimeout(r, 50));
    await server.call(owner, "POST", "/messages", { type: "stream", to: "general", topic: "t", content: "wake" });
    const r = await poll;
    const got = r.body["events"] as Ev[];
    expect(got.map((e) => e.type)).toEqual(["message"]);
    expect(await events(alice, q, got[0]!.id)).toEqual([]);
  });

  it("a silent poll gets a heartbeat after 45 s (injected clock)", async () => {
    await boot();
    const { alice } = server.seed;
    const q = await register(alice);
    const poll = server.call(alice, "GET", "/events", { queue_id: q, last_event_id: -1 });
    await new Promise((r) => setTimeout(r, 50));
    clock.advance(44_000);
    await new Promise((r) => setTimeout(r, 20));
    clock.advance(1_000);
    const r = await poll;
    expect(r.body["events"]).toEqual([{ type: "heartbeat", id: 0 }]);
  });

  it("queues idle past idle_queue_timeout are collected; unknown, foreign and deleted queues are BAD_EVENT_QUEUE_ID", async () => {
    await boot();
    const { alice, bob } = server.seed;
    const q = await register(alice, { idle_queue_timeout: 60 });
    const other = await register(bob);
    const bad = async (user: typeof alice, id: string) => {
      const body = await expectRejectedUnchanged(
        server,
        () => server.call(user, "GET", "/events", { queue_id: id, dont_block: true }),
        400,
        "BAD_EVENT_QUEUE_ID",
        `Bad event queue ID: ${id}`,
      );
      expect(body["queue_id"]).toBe(id);
    };
    await bad(alice, "no-such-queue");
    await bad(alice, other);
    clock.advance(61_000 + 30_000);
    await bad(alice, q);
    const d = await server.call(bob, "DELETE", "/events", { queue_id: other });
    expect(d.status).toBe(200);
    await bad(bob, other);
    const again = await server.call(bob, "DELETE", "/events", { queue_id: other });
    expect(again.body["code"]).toBe("BAD_EVENT_QUEUE_ID");
  });

  it("bad parameters get Zulip's errors and change nothing", async () => {
    await boot();
    const { alice } = server.seed;
    const q = await register(alice);
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "GET", "/events", { queue_id: q, last_event_id: -5 }),
      400,
      "BAD_REQUEST",
      "last_event_id is too small",
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "GET", "/events", {}),
      400,
      "REQUEST_VARIABLE_MISSING",
      "Missing 'queue_id' argument",
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "POST", "/register", { event_types: "[not json" }),
      400,
      "BAD_REQUEST",
      "event_types is not valid JSON",
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(alice, "POST", "/register", { narrow: [["nonsense", "x"]] }),
      400,
      "BAD_NARROW",
      "Invalid narrow operator: unknown operator nonsense",
    );
    await expectRejectedUnchanged(
      server,
      () => server.call(server.seed.guest, "POST", "/register", { all_public_streams: true }),
      400,
      "BAD_REQUEST",
      "User not authorized for this query",
    );
  });

  it("a queue whose client stopped polling is collected when its backlog passes the cap", async () => {
    await boot(5);
    const { owner, alice } = server.seed;
    const q = await register(alice);
    for (let i = 0; i < 6; i++)
      await server.call(owner, "POST", "/messages", { type: "stream", to: "general", topic: "t", content: `m${i}` });
    const r = await server.call(alice, "GET", "/events", { queue_id: q, dont_block: true });
    expect(r.body["code"]).toBe("BAD_EVENT_QUEUE_ID");
    expect(server.server.events.stats.queues).toBe(0);
  });

  it("a backlog over MAX_POLL_ANSWER_CHARS arrives in bounded answers, every event once and in order", async () => {
    await boot();
    const { owner, alice } = server.seed;
    const q = await register(alice, { event_types: ["message"] });
    const sent: number[] = [];
    // ~10 KB of rendered content per event: 250 of them are ~2.5 MB of events.
    for (let i = 0; i < 250; i++) {
      const r = await server.call(owner, "POST", "/messages", {
        type: "stream",
        to: "general",
        topic: "t",
        content: `${i} ${"x".repeat(9_990)}`,
      });
      sent.push(r.body["id"] as number);
    }
    const got: number[] = [];
    let last = -1;
    let answers = 0;
    while (got.length < sent.length) {
      const r = await server.call(alice, "GET", "/events", { queue_id: q, last_event_id: last, dont_block: true });
      const evs = r.body["events"] as Ev[];
      expect(evs.length).toBeGreaterThan(0);
      // At most one event past the budget (an answer always carries at least one).
      expect(JSON.stringify(evs).length).toBeLessThan(MAX_POLL_ANSWER_CHARS + 20_000);
      got.push(...evs.map((e) => (e["message"] as { id: number }).id));
      last = evs[evs.length - 1]!.id;
      answers++;
    }
    expect(got).toEqual(sent);
    expect(answers).toBeGreaterThanOrEqual(3);
    expect(await events(alice, q, last)).toEqual([]);
  });
  it("typing: direct to the participants; channel typing only to clients that declared stream_typing_notifications", async () => {
    await boot();
    const { owner, alice, bob } = server.seed;
    const qAlice = await register(alice);
    const qBob = await register(bob, { client_capabilities: { stream_typing_notifications: true } });
    expect((await server.call(owner, "POST", "/typing", { op: "start", to: [alice.id] })).status).toBe(200);
    const [t] = await events(alice, qAlice);
    expect(t).toMatchObject({ type: "typing", op: "start", message_type: "direct", sender: { user_id: owner.id } });
    expect(await events(bob, qBob)).toEqual([]);
    const general = server.seed.general.id;
    expect(
      (await server.call(owner, "POST", "/typing", { type: "channel", op: "stop", stream_id: general, topic: "t" }))
        .status,
    ).toBe(200);
    expect((await events(bob, qBob)).map((e) => [e.type, e["op"], e["stream_id"]])).toEqual([
      ["typing", "stop", general],
    ]);
    expect(await events(alice, qAlice, t!.id)).toEqual([]);
    await expectRejectedUnchanged(
      server,
      () => server.call(owner, "POST", "/typing", { type: "channel", op: "start", topic: "t" }),
      400,
      "BAD_REQUEST",
      "Missing channel ID",
    );
    // A private channel the sender cannot see answers like a missing one.
    const secret = server.seed.secret.id;
    const hidden = await server.call(bob, "POST", "/typing", {
      type: "channel",
      op: "start",
      stream_id: secret,
      topic: "t",
    });
    const missing = await server.call(bob, "POST", "/typing", {
      type: "channel",
      op: "start",
      stream_id: 999999,
      topic: "t",
    });
    expect(hidden.status).toBe(400);
    expect(hidden.body["msg"]).toBe(String(missing.body["msg"]).replace("999999", String(secret)));
  });

  it("stars, reactions and subscriptions reach the right queues", async () => {
    await boot();
    const { owner, alice } = server.seed;
    const q = await register(alice);
    const id = (
      await server.call(owner, "POST", "/messages", { type: "stream", to: "general", topic: "t", content: "x" })
    ).body["id"] as number;
    await server.call(alice, "POST", "/messages/flags", { messages: [id], op: "add", flag: "starred" });
    await server.call(owner, "POST", `/messages/${id}/reactions`, { emoji_name: "smile" });
    await server.call(owner, "POST", "/users/me/subscriptions", {
      subscriptions: [{ name: "newchan" }],
      principals: [alice.id],
    });
    const got = await events(alice, q);
    // Creating the channel brings the Notification Bot into the realm (realm_user add),
    // then the channel, the subscription, and the bot's first message in it.
    expect(got.map((e) => `${e.type}:${String(e["op"] ?? "")}`)).toEqual([
      "message:",
      "update_message_flags:add",
      "reaction:add",
      "realm_user:add",
      "stream:create",
      "subscription:add",
      "stream:update",
      "message:",
    ]);
  });

  it("queues survive a graceful restart with a restart event", async () => {
    await boot();
    const { owner, alice } = server.seed;
    const q = await register(alice);
    await server.call(owner, "POST", "/messages", { type: "stream", to: "general", topic: "t", content: "before" });
    const saved = server.server.events.save();
    server.server.events.close();
    const { EventHub } = await import("../../src/realtime/index.js");
    const hub = new EventHub(server.t.store, { clock, restartEvent: { zulip_feature_level: 496 } });
    expect(hub.restore(saved)).toBe(1);
    const queue = hub.queueFor(server.t.store.getUser(alice.id), q);
    expect(JSON.parse(queue.eventsJson()).map((e: Ev) => e.type)).toEqual(["message", "restart"]);
    hub.close();
  });
});

describe("long-poll bookkeeping", () => {
  it("a client that gives up does not cancel a newer poll on the same queue", async () => {
    await boot();
    const { owner, alice } = server.seed;
    const q = await register(alice);
    const gone = new AbortController();
    const first = fetch(`${server.base}/api/v1/events?queue_id=${q}&last_event_id=-1`, {
      headers: { Authorization: `Basic ${Buffer.from(`${alice.email}:${alice.apiKey}`).toString("base64")}` },
      signal: gone.signal,
    }).catch(() => null);
    await new Promise((r) => setTimeout(r, 50));
    const second = server.call(alice, "GET", "/events", { queue_id: q, last_event_id: -1 });
    await new Promise((r) => setTimeout(r, 50));
    gone.abort();
    await first;
    await new Promise((r) => setTimeout(r, 50));
    await server.call(owner, "POST", "/messages", {
      type: "stream",
      to: "general",
      topic: "t",
      content: "for the second poll",
    });
    const r = await second;
    expect((r.body["events"] as Ev[]).map((e) => e.type)).toEqual(["message"]);
  });
});
