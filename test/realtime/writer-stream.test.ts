/**
 * The writer worker's event stream (src/realtime/writer-stream.ts) carries, of each
 * delivery's audience, only the users the reader named: those it selected (users with
 * queues there), plus each one it watches for a registration, from the acknowledgement
 * on, until a sweep drops it. Before it selects, audiences go whole.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ReplicatedBatch, ReplicatedDelivery } from "../../src/engine/replication.js";
import { EventBroadcaster, EventSubscriber } from "../../src/realtime/writer-stream.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";

let t: TempStore | null = null;
const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0).reverse()) close();
  t?.cleanup();
  t = null;
});

function lastMessage(batches: readonly ReplicatedBatch[]): ReplicatedDelivery {
  for (const batch of [...batches].reverse())
    for (const delivery of batch.deliveries) if (delivery.event["type"] === "message") return delivery;
  throw new Error("no message event reached the reader");
}

async function stream() {
  t = tempStore();
  const w = seedRealm(t.store);
  const socket = join(t.dir, "events.sock");
  const broadcaster = await EventBroadcaster.listen(socket, t.store);
  closers.push(() => broadcaster.close());
  const batches: ReplicatedBatch[] = [];
  const subscriber = new EventSubscriber(socket, {
    batch: (batch) => batches.push(batch),
    subscribed: () => undefined,
    lost: () => undefined,
  });
  closers.push(() => subscriber.close());
  await subscriber.whenSubscribed();
  const store = t.store;
  /** The audience of the message event a send to general brings the reader, sorted. */
  const sendToGeneral = async (content: string): Promise<number[]> => {
    store.sendMessage({ senderId: w.alice.id, to: { type: "channel", channel: "general", topic: "t" }, content });
    while (subscriber.batchesReceived < broadcaster.batchesSent) await new Promise((r) => setTimeout(r, 5));
    return [...lastMessage(batches).audience].sort((a, b) => a - b);
  };
  let synced = 0;
  /** Resolves once the writer took all the reader sent so far (a new user's WATCH is acknowledged after it). */
  const sync = async (): Promise<void> => {
    const user = store.createUser({ realmId: w.realm.id, email: `sync${++synced}@test.dev`, fullName: "Sync" });
    await subscriber.watch(user.id).ready;
  };
  return { w, subscriber, sendToGeneral, batches, sync };
}

describe("writer event stream: audiences narrowed to the reader's users", () => {
  it("sends whole audiences until the reader selects, then only its named users", async () => {
    const { w, subscriber, sendToGeneral, sync } = await stream();
    const everyone = [w.owner.id, w.alice.id, w.bob.id].sort((a, b) => a - b);
    expect(await sendToGeneral("before select")).toEqual(everyone);

    subscriber.select([w.alice.id]);
    await sync();
    expect(await sendToGeneral("alice only")).toEqual([w.alice.id]);

    const registration = subscriber.watch(w.bob.id);
    await registration.ready;
    expect(await sendToGeneral("bob registered")).toEqual([w.alice.id, w.bob.id].sort((a, b) => a - b));

    // A registration under way keeps its user named through a sweep; once over (and no queue), it goes.
    subscriber.sweep([w.alice.id]);
    await sync();
    expect(await sendToGeneral("still registering")).toEqual([w.alice.id, w.bob.id].sort((a, b) => a - b));
    registration.release();
    subscriber.sweep([w.alice.id]);
    await sync();
    expect(await sendToGeneral("bob gone")).toEqual([w.alice.id]);
  });

  it("the per-member flags travel for the named users alone", async () => {
    const { w, subscriber, sendToGeneral, batches, sync } = await stream();
    subscriber.select([w.bob.id]);
    await sync();
    // Bob and the owner are mentioned (each has flags); only Bob's travel.
    expect(await sendToGeneral("@**Bob** and @**Olive Owner**")).toEqual([w.bob.id]);
    const delivery = lastMessage(batches);
    expect(delivery.flags?.map(([userId]) => userId)).toEqual([w.bob.id]);
  });
});
