/**
 * The hub's sliced delivery (realtime/hub.ts): an event for more queues than a slice
 * allows is pushed over several turns of the event loop, yet every queue gets every
 * event once and in commit order; who gets it is decided at the commit (a queue
 * registered meanwhile gets none of it, a queue collected meanwhile nothing more), and
 * small deliveries still complete in the commit's turn. Slices go queue by queue: a
 * queue behind gets what it missed in one poll answer, and a poll takes its queue's
 * waiting copies at once. A woken poll is answered at the end of the turn of the loop,
 * with the events of every commit of that turn.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { EventHub, ManualClock, type QueueOptions } from "../../src/realtime/index.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";

let t: TempStore;
let hub: EventHub | undefined;
afterEach(() => {
  hub?.close();
  t?.cleanup();
});

const OPTIONS: QueueOptions = {
  eventTypes: ["message", "update_message"],
  allPublicStreams: false,
  narrow: [],
  applyMarkdown: true,
  clientGravatar: true,
  emptyTopicName: true,
  streamTypingNotifications: false,
  includeDeactivatedGroups: false,
  presenceFormat: "modern",
  idleTimeoutSecs: 600,
};

/** What a queue holds: "message <id>" or "update_message <id>" (a deleted queue's wake-up heartbeat left out). */
function held(queue: { eventsJson(): string }): string[] {
  const events = JSON.parse(queue.eventsJson()) as { type: string; message?: { id: number }; message_id?: number }[];
  return events
    .filter((e) => e.type !== "heartbeat")
    .map((e) => `${e.type} ${e.type === "message" ? e.message!.id : e.message_id}`);
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

function setup(users: number) {
  t = tempStore();
  const seed = seedRealm(t.store);
  const members: User[] = [seed.owner, seed.alice, seed.bob];
  for (let i = 0; i < users - 3; i++)
    members.push(t.store.createUser({ realmId: seed.realm.id, email: `u${i}@test.dev`, fullName: `User ${i}` }));
  t.store.subscribe(seed.owner.id, { channels: [{ name: "general" }], principals: members.map((u) => u.id) });
  const send = (content: string) =>
    t.store.sendMessage({ senderId: seed.owner.id, to: { type: "channel", channel: "general", topic: "t" }, content })
      .id;
  return { ...seed, members, send };
}

describe("sliced delivery", () => {
  it("pushes a large delivery over several turns, in commit order on every queue", async () => {
    const { alice, members, send, owner } = setup(30);
    hub = new EventHub(t.store, {
      clock: new ManualClock(),
      deliverySlice: { minCopies: 4, maxMs: 1e9, maxCopies: 5 },
    });
    const queues = members.map((user) => ({ user, queue: hub!.register(user, OPTIONS) }));

    const first = send("one");
    // Five copies went out with the commit; the other 25 wait for later turns.
    expect(hub.pendingCopies).toBe(25);
    expect(queues.filter(({ queue }) => queue.size > 0)).toHaveLength(5);
    // Registered now, after the commit: its snapshot has the first message already.
    const late = hub.register(alice, OPTIONS);
    // A queue deleted while the delivery is under way gets nothing more.
    const gone = queues.find(({ queue }) => queue.size === 0)!;
    hub.delete(gone.user, gone.queue.id);
    const second = send("two");
    t.store.updateMessage(owner.id, first, { content: "one, edited" });
    // Behind the first delivery: nothing of them is pushed yet.
    expect(queues.every(({ queue }) => queue.size <= 1)).toBe(true);

    let turns = 0;
    while (hub.pendingCopies > 0) {
      await nextTurn();
      turns++;
    }
    expect(turns).toBeGreaterThan(10);
    for (const { queue } of queues) {
      if (queue === gone.queue) expect(held(queue)).toEqual([]);
      else expect(held(queue)).toEqual([`message ${first}`, `message ${second}`, `update_message ${first}`]);
    }
    expect(held(late)).toEqual([`message ${second}`, `update_message ${first}`]);
  });

  it("completes a delivery within the commit's turn when it fits a slice, and flush() completes any", () => {
    const { members, send } = setup(6);
    hub = new EventHub(t.store, { clock: new ManualClock(), deliverySlice: { minCopies: 8, maxMs: 0, maxCopies: 8 } });
    const queues = members.map((user) => hub!.register(user, OPTIONS));
    const id = send("small");
    expect(hub.pendingCopies).toBe(0);
    for (const queue of queues) expect(held(queue)).toEqual([`message ${id}`]);

    const more = members.flatMap((user) => [hub!.register(user, OPTIONS), hub!.register(user, OPTIONS)]);
    const big = send("big");
    expect(hub.pendingCopies).toBe(18 - 8);
    hub.flush();
    expect(hub.pendingCopies).toBe(0);
    for (const queue of [...queues, ...more]) expect(held(queue).at(-1)).toBe(`message ${big}`);
  });

  it("answers a queue that fell behind with all it missed at once, not an answer per event", async () => {
    const { members, send } = setup(30);
    hub = new EventHub(t.store, {
      clock: new ManualClock(),
      deliverySlice: { minCopies: 3, maxMs: 1e9, maxCopies: 3 },
    });
    const answers = new Map<string, number[][]>();
    const stop = new AbortController();
    const poll = (user: User, queueId: string, lastEventId: number): void => {
      void hub!.poll(user, { queueId, lastEventId, dontBlock: false }, stop.signal).then((json) => {
        const events = JSON.parse(json) as { id: number; message: { id: number } }[];
        if (events.length === 0) return;
        answers.get(queueId)!.push(events.map((e) => e.message.id));
        poll(user, queueId, events.at(-1)!.id);
      });
    };
    const queues = members.map((user) => {
      const queue = hub!.register(user, OPTIONS);
      answers.set(queue.id, []);
      poll(user, queue.id, -1);
      return queue;
    });

    // Three commits in one turn: three copies go out with the first (a slice), 87 wait.
    const ids = [send("one"), send("two"), send("three")];
    expect(hub.pendingCopies).toBe(87);
    while (hub.pendingCopies > 0) await nextTurn();
    await nextTurn();
    stop.abort();
    for (const queue of queues) expect(answers.get(queue.id)!.flat()).toEqual(ids);
    // The three served in the commit's turn got the first alone, and the rest as soon as they polled
    // again; every other queue got all three in one answer (an answer per event would be 90 in all).
    const counts = queues.map((queue) => answers.get(queue.id)!.length);
    expect(counts.slice(0, 3)).toEqual([2, 2, 2]);
    expect(counts.slice(3)).toEqual(Array(27).fill(1));
  });

  it("a poll takes its queue's copies still waiting for a slice", async () => {
    const { members, send } = setup(30);
    hub = new EventHub(t.store, {
      clock: new ManualClock(),
      deliverySlice: { minCopies: 4, maxMs: 1e9, maxCopies: 5 },
    });
    const queues = members.map((user) => ({ user, queue: hub!.register(user, OPTIONS) }));
    const id = send("one");
    const { user, queue } = queues.at(-1)!;
    expect(queue.size).toBe(0);
    const json = await hub.poll(
      user,
      { queueId: queue.id, lastEventId: -1, dontBlock: true },
      new AbortController().signal,
    );
    expect(held({ eventsJson: () => json })).toEqual([`message ${id}`]);
    // The other queues still wait for their slices.
    expect(hub.pendingCopies).toBe(24);
  });

  it("answers a waiting poll at the end of the turn, with the events of every commit in it", async () => {
    const { alice, send } = setup(3);
    hub = new EventHub(t.store, { clock: new ManualClock() });
    const queue = hub.register(alice, OPTIONS);
    const signal = new AbortController().signal;
    const answer = hub.poll(alice, { queueId: queue.id, lastEventId: -1, dontBlock: false }, signal);
    const ids: number[] = [];
    // Two requests handled in one turn: callbacks of their own, with microtasks run between them.
    setImmediate(() => ids.push(send("one")));
    setImmediate(() => ids.push(send("two")));
    const json = await answer;
    expect(held({ eventsJson: () => json })).toEqual(ids.map((id) => `message ${id}`));
    expect(ids).toHaveLength(2);
  });
});
