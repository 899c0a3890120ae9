/**
 * Bounds on event queues (hardening issue, item 2): queues per user and per realm,
 * the longest idle_queue_timeout, and events held across one user's queues. Past a
 * cap the least recently polled queue is collected, and its client gets Zulip's
 * BAD_EVENT_QUEUE_ID. A manual clock drives idle collection.
 */
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/index.js";
import type { User } from "../../src/engine/index.js";
import { ManualClock, type HubOptions } from "../../src/realtime/index.js";
import { expectRejectedUnchanged, startServer, type TestServer } from "../support/http.js";

let server: TestServer;
let clock: ManualClock;

async function boot(events: HubOptions = {}, config: Partial<typeof DEFAULT_CONFIG> = {}): Promise<void> {
  clock = new ManualClock();
  const hub: HubOptions = { clock, random: () => 0, ...events };
  server = await startServer({ config: { ...DEFAULT_CONFIG, ...config }, events: hub });
}

afterEach(() => server?.close());

type Ev = Record<string, unknown> & { type: string; id: number };

async function register(user: User, params: Record<string, unknown> = {}): Promise<string> {
  const r = await server.call(user, "POST", "/register", { event_types: ["message"], ...params });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body["queue_id"] as string;
}

/** A poll that answers at once: the queue becomes its user's most recently polled. */
async function poll(user: User, queueId: string, lastEventId = -1): Promise<Ev[]> {
  const params = { queue_id: queueId, last_event_id: lastEventId, dont_block: true };
  const r = await server.call(user, "GET", "/events", params);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body["events"] as Ev[];
}

async function expectCollected(user: User, queueId: string): Promise<void> {
  const call = () => server.call(user, "GET", "/events", { queue_id: queueId, dont_block: true });
  const body = await expectRejectedUnchanged(server, call, 400, "BAD_EVENT_QUEUE_ID", `Bad event queue ID: ${queueId}`);
  expect(body["queue_id"]).toBe(queueId);
}

async function dm(from: User, to: User, content: string): Promise<number> {
  const r = await server.call(from, "POST", "/messages", { type: "direct", to: [to.id], content });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body["id"] as number;
}

describe("queues per user", () => {
  it("a new queue past the cap collects the user's least recently polled one", async () => {
    await boot({ maxQueuesPerUser: 3 });
    const { owner, alice, bob } = server.seed;
    const bobs = await register(bob);
    const q1 = await register(alice);
    const q2 = await register(alice);
    const q3 = await register(alice);
    // q1 was registered first but polled since: q2 is now the least recently polled.
    await poll(alice, q1);
    const q4 = await register(alice);
    await expectCollected(alice, q2);
    for (const q of [q1, q3, q4]) expect(await poll(alice, q)).toEqual([]);
    expect(await poll(bob, bobs)).toEqual([]);
    expect(server.server.events.stats).toMatchObject({ queues: 4, queuesEvicted: 1 });

    // A queue with a connected poll is spared: the next idle one goes instead.
    const waiting = server.call(alice, "GET", "/events", { queue_id: q1, last_event_id: -1 });
    await new Promise((r) => setTimeout(r, 50));
    await poll(alice, q3);
    await poll(alice, q4);
    const q5 = await register(alice);
    await expectCollected(alice, q3);
    const id = await dm(owner, alice, "to the waiting poll");
    const answered = await waiting;
    expect((answered.body["events"] as Ev[]).map((e) => (e["message"] as { id: number }).id)).toEqual([id]);
    expect((await poll(alice, q5)).length).toBe(1);
  });
});

describe("queues per realm", () => {
  it("MAX_EVENT_QUEUES_PER_REALM: past it, the realm's least recently polled queue goes, anyone's", async () => {
    await boot({}, { MAX_EVENT_QUEUES_PER_REALM: 3 });
    const { owner, alice, bob, guest } = server.seed;
    const qa = await register(alice);
    const qb = await register(bob);
    const qo = await register(owner);
    await poll(alice, qa);
    const qg = await register(guest);
    await expectCollected(bob, qb);
    expect(await poll(alice, qa)).toEqual([]);
    expect(await poll(owner, qo)).toEqual([]);
    expect(await poll(guest, qg)).toEqual([]);
    expect(server.server.events.stats).toMatchObject({ queues: 3, queuesEvicted: 1 });
  });
});

describe("idle_queue_timeout", () => {
  it("is granted up to a day: a longer request gets a day, says so, and is collected after it", async () => {
    await boot();
    const { alice } = server.seed;
    const ask = (timeout: unknown) => server.call(alice, "POST", "/register", { idle_queue_timeout: timeout });
    const week = await ask(7 * 24 * 3600);
    expect(week.body["idle_queue_timeout_secs"]).toBe(24 * 3600);
    expect((await ask("99999999999999999999")).body["idle_queue_timeout_secs"]).toBe(24 * 3600);
    expect((await ask("mobile")).body["idle_queue_timeout_secs"]).toBe(12 * 3600);
    expect((await ask(3600)).body["idle_queue_timeout_secs"]).toBe(3600);
    const queueId = week.body["queue_id"] as string;
    const user = server.t.store.getUser(alice.id);
    // The idle collector runs every 30 s: a minute short of a day the queue is held.
    clock.advance(24 * 3600_000 - 60_000);
    expect(server.server.events.queueFor(user, queueId).id).toBe(queueId);
    clock.advance(60_000 + 31_000);
    await expectCollected(alice, queueId);
  });
});

describe("events held per user", () => {
  it("past maxUserEvents across a user's queues, the least recently polled goes; the polled one gets all", async () => {
    await boot({ maxUserEvents: 5, maxQueueEvents: 1000 });
    const { owner, alice } = server.seed;
    const idle = await register(alice);
    const live = await register(alice);
    const sent: number[] = [];
    const got: number[] = [];
    let last = -1;
    for (let i = 0; i < 6; i++) {
      sent.push(await dm(owner, alice, `m${i}`));
      const evs = await poll(alice, live, last);
      got.push(...evs.map((e) => (e["message"] as { id: number }).id));
      last = evs[evs.length - 1]!.id;
    }
    expect(got).toEqual(sent);
    await expectCollected(alice, idle);
    expect(server.server.events.stats).toMatchObject({ queues: 1, queuesEvicted: 1 });
  });

  it("the same in characters: large events collect the idle queue sooner", async () => {
    await boot({ maxUserEventChars: 45_000 });
    const { owner, alice } = server.seed;
    const idle = await register(alice);
    const live = await register(alice);
    let last = -1;
    for (let i = 0; i < 2; i++) {
      await dm(owner, alice, `${i} ${"x".repeat(9_000)}`);
      last = (await poll(alice, live, last)).at(-1)!.id;
    }
    expect(server.server.events.queueFor(server.t.store.getUser(alice.id), idle).size).toBe(2);
    await dm(owner, alice, `2 ${"x".repeat(9_000)}`);
    await expectCollected(alice, idle);
    expect((await poll(alice, live, last)).length).toBe(1);
  });
});
