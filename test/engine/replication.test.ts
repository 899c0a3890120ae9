/**
 * A cluster replica applies a leader's captured transactions (src/engine/replication.ts,
 * docs/cluster.md §1-2) and ends up holding what the leader holds, answering as it
 * does and releasing the same events; and a leader's transactions that never reached
 * the log are undone exactly (§6).
 */
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  decodeTxn,
  encodeTxn,
  openReplica,
  openStore,
  type Delivery,
  type EngineEvent,
  type ReplicatedTxn,
  type Store,
} from "../../src/index.js";
import { internals } from "../../src/engine/internal.js";
import { MOVE_STAGING } from "../../src/engine/actions/move-staging.js";
import { FIRST_ID, TABLE_NAMES, TABLE_SPECS } from "../../src/engine/storage/tables.js";
import { seedRealm } from "../support/temp-store.js";
import { answers, entityMaps } from "../support/follower-view.js";

const dirs: string[] = [];
const open: Store[] = [];
afterEach(() => {
  for (const store of open.splice(0)) store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "parley-replication-"));
  dirs.push(dir);
  return dir;
}

/** Every table's records (key 0 of uint32 tables, msgpackr's structures, is each store's own). */
function disk(store: Store): unknown {
  const tables = internals(store).tables as unknown as Record<
    string,
    { getRange(o?: { start?: number }): Iterable<{ key: unknown; value: unknown }> }
  >;
  const enc = (v: unknown): unknown => (v instanceof Uint8Array ? Buffer.from(v).toString("hex") : v);
  return Object.fromEntries(
    TABLE_NAMES.map((name) => [
      name,
      [...tables[name]!.getRange(TABLE_SPECS[name].keys === "id" ? { start: FIRST_ID } : {})].map(({ key, value }) => [
        key,
        enc(value),
      ]),
    ]),
  );
}

/** A delivery as a queue sees it: the event, its audience, and each member's flags where it has them. */
function delivered(delivery: Delivery): unknown {
  const audience = [...delivery.audience].sort((a, b) => a - b);
  const event = delivery.event as EngineEvent & { flagsFor?: (userId: number) => readonly string[] };
  const flags = typeof event.flagsFor === "function" ? audience.map((id) => event.flagsFor!(id)) : null;
  return { event: JSON.parse(JSON.stringify(event)) as unknown, audience, flags };
}

function view(store: Store, viewers: readonly number[]): unknown {
  return { answers: answers(store, viewers), entities: entityMaps(store), disk: disk(store) };
}

/** A seeded directory, closed, and a copy of it: the leader's and the replica's (a cluster is created so). */
function twoDirectories(): { leaderDir: string; replicaDir: string; viewers: number[] } {
  const leaderDir = tempDir();
  const seed = openStore(leaderDir, { noSync: true });
  const w = seedRealm(seed);
  seed.close();
  const replicaDir = tempDir();
  cpSync(leaderDir, replicaDir, { recursive: true });
  return { leaderDir, replicaDir, viewers: [w.owner.id, w.alice.id, w.bob.id, w.guest.id] };
}

function openLeader(dir: string, txns: ReplicatedTxn[]): Store {
  // Through the wire encoding: what a follower applies is what it decoded.
  const store = openStore(dir, {
    noSync: true,
    replication: { committed: (txn) => txns.push(decodeTxn(encodeTxn(txn))) },
  });
  open.push(store);
  return store;
}

/** A mix of writes that touch records, bitmaps, in-memory tables and the deferred journal. */
async function writeSome(s: Store, viewers: readonly number[]): Promise<void> {
  const [owner, alice, bob] = viewers as [number, number, number];
  const first = s.sendMessage({
    senderId: alice,
    to: { type: "channel", channel: "general", topic: "t" },
    content: "hi",
  });
  s.sendMessage({ senderId: bob, to: { type: "direct", users: [alice] }, content: "a DM" });
  s.sendMessage({ senderId: owner, to: { type: "channel", channel: "secret", topic: "x" }, content: "psst" });
  s.updateFlags(bob, [first.id], "read", "add");
  s.updateFlags(bob, [first.id], "starred", "add");
  s.addReaction(owner, first.id, { emojiName: "smile" });
  s.subscribe(owner, { channels: [{ name: "new channel" }], principals: [owner, bob] });
  // A group commit: several writes, one transaction, one replicated message.
  await Promise.all(
    [1, 2, 3].map((i) =>
      s.sendMessageGrouped({ senderId: bob, to: { type: "channel", channel: "general", topic: "g" }, content: `${i}` }),
    ),
  );
}

describe("replication", () => {
  it("a replica applying the leader's transactions holds and answers what the leader does, with the same events", async () => {
    const { leaderDir, replicaDir, viewers } = twoDirectories();
    const txns: ReplicatedTxn[] = [];
    const leader = openLeader(leaderDir, txns);
    const leaderEvents: unknown[] = [];
    leader.onEvents((batch) => leaderEvents.push(...batch.deliveries.map(delivered)));
    await writeSome(leader, viewers);
    await new Promise((resolve) => setImmediate(resolve));
    expect(txns.length).toBeGreaterThan(5);
    expect(txns.map((t) => t.seq)).toEqual(txns.map((_, i) => i + 1));

    const replica = openReplica(replicaDir, { noSync: true });
    open.push(replica);
    const replicaEvents: unknown[] = [];
    replica.onEvents((batch) => replicaEvents.push(...batch.deliveries.map(delivered)));
    // The replica answers reads before, between and after applies (its caches fill, then must follow).
    answers(replica, viewers);
    for (const txn of txns) {
      replica.applyReplicated([txn]);
      answers(replica, viewers);
    }
    expect(replica.replicationPosition.seq).toBe(txns.length);
    expect(view(replica, viewers)).toEqual(view(leader, viewers));
    expect(leaderEvents.length).toBeGreaterThan(8);
    expect(replicaEvents).toEqual(leaderEvents);
    // A replica refuses engine writes: only the leader's transactions change it.
    expect(() =>
      replica.sendMessage({
        senderId: viewers[0]!,
        to: { type: "channel", channel: "general", topic: "t" },
        content: "x",
      }),
    ).toThrow(/follower|replica/i);
    // A transaction out of order is refused (a gap would silently lose writes).
    expect(() => replica.applyReplicated([{ ...txns[0]!, seq: txns.length + 5 }])).toThrow(/does not follow/);
  });

  it("a replica holds what the leader does after a staged move, whose records the leader encoded ahead", async () => {
    const { leaderDir, replicaDir, viewers } = twoDirectories();
    const [owner, alice] = viewers as [number, number];
    const txns: ReplicatedTxn[] = [];
    const leader = openLeader(leaderDir, txns);
    const ids = [1, 2, 3, 4, 5].map(
      (i) =>
        leader.sendMessage({
          senderId: alice,
          to: { type: "channel", channel: "general", topic: "t" },
          content: `${i}`,
        }).id,
    );
    const state = internals(leader);
    const secret = state.channelByName.get(`${state.users.get(owner)!.realmId}:SECRET`)!;
    const defaults = { ...MOVE_STAGING };
    Object.assign(MOVE_STAGING, { minMessages: 2, chunkMessages: 2 });
    try {
      await leader.updateMessageAsync(owner, ids[0]!, { channelId: secret, propagateMode: "change_all" });
    } finally {
      Object.assign(MOVE_STAGING, defaults);
    }
    const replica = openReplica(replicaDir, { noSync: true });
    open.push(replica);
    replica.applyReplicated(txns);
    expect(view(replica, viewers)).toEqual(view(leader, viewers));
  });

  it("a replica applies consecutive transactions in one call as it applies them one by one", async () => {
    const { leaderDir, replicaDir, viewers } = twoDirectories();
    const txns: ReplicatedTxn[] = [];
    const leader = openLeader(leaderDir, txns);
    const leaderEvents: unknown[] = [];
    leader.onEvents((batch) => leaderEvents.push(...batch.deliveries.map(delivered)));
    await writeSome(leader, viewers);
    await new Promise((resolve) => setImmediate(resolve));

    const replica = openReplica(replicaDir, { noSync: true });
    open.push(replica);
    const replicaEvents: unknown[] = [];
    replica.onEvents((batch) => replicaEvents.push(...batch.deliveries.map(delivered)));
    answers(replica, viewers);
    replica.applyReplicated(txns.slice(0, 2));
    answers(replica, viewers);
    replica.applyReplicated(txns.slice(2));
    expect(replica.replicationPosition).toEqual({ seq: txns.length, id: txns[txns.length - 1]!.id });
    expect(view(replica, viewers)).toEqual(view(leader, viewers));
    expect(replicaEvents).toEqual(leaderEvents);
    // A gap inside a batch refuses the whole batch: nothing of it is applied.
    const more = [
      { ...txns[0]!, seq: txns.length + 1 },
      { ...txns[1]!, seq: txns.length + 3 },
    ];
    expect(() => replica.applyReplicated(more)).toThrow(/does not follow/);
    expect(replica.replicationPosition.seq).toBe(txns.length);
  });

  it("holds a leader's group commit while the log stores an append: writes arriving meanwhile share one", async () => {
    const { leaderDir, viewers } = twoDirectories();
    const txns: ReplicatedTxn[] = [];
    let appending: { promise: Promise<void>; resolve: () => void } | null = null;
    const leader = openStore(leaderDir, {
      noSync: true,
      replication: { committed: (txn) => txns.push(txn), pending: () => appending?.promise ?? null },
    });
    open.push(leader);
    const send = (content: string): Promise<unknown> =>
      leader.sendMessageGrouped({
        senderId: viewers[1]!,
        to: { type: "channel", channel: "general", topic: "g" },
        content,
      });
    const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
    // Nothing under way: a send commits at once.
    await send("first");
    expect(txns.length).toBe(1);
    // Its append is under way: sends arriving on later turns wait for it, then commit together.
    let resolve = (): void => undefined;
    appending = { promise: new Promise<void>((r) => (resolve = r)), resolve: () => resolve() };
    const later: Promise<unknown>[] = [];
    for (let i = 0; i < 4; i++) {
      later.push(send(`later ${i}`));
      await nextTurn();
      await nextTurn();
    }
    expect(txns.length).toBe(1);
    const stored = appending;
    appending = null;
    stored.resolve();
    await Promise.all(later);
    expect(txns.length).toBe(2);
    expect(txns[1]!.batches.length).toBe(4);
    // Committed, and in order.
    const contents = leader
      .getMessages(viewers[1]!, { anchor: "newest", numBefore: 5, numAfter: 0 })
      .messages.map((view) => view.message.content);
    expect(contents.slice(-5)).toEqual(["first", "later 0", "later 1", "later 2", "later 3"]);
  });

  it("a cluster node's store commits with one disk flush (no meta sync); a single server's with both", () => {
    const { leaderDir, replicaDir } = twoDirectories();
    const metaSync = (store: Store): boolean =>
      (internals(store).tables.env as unknown as { noMetaSync?: boolean }).noMetaSync !== true;
    const single = openStore(leaderDir, { noSync: true });
    expect(metaSync(single)).toBe(true);
    single.close();
    const leader = openLeader(leaderDir, []);
    const replica = openReplica(replicaDir, { noSync: true });
    open.push(replica);
    expect([metaSync(leader), metaSync(replica)]).toEqual([false, false]);
  });

  it("undoes transactions a leader committed that never reached the log, back to what the log has", async () => {
    const { leaderDir, replicaDir, viewers } = twoDirectories();
    const txns: ReplicatedTxn[] = [];
    const leader = openLeader(leaderDir, txns);
    await writeSome(leader, viewers);
    await new Promise((resolve) => setImmediate(resolve));
    // Say the stream stored only the first `kept` transactions; the leader then died.
    const kept = 3;
    // Acknowledged transactions' undo records go with the next transaction; the others stay.
    leader.confirmReplicated(kept);
    leader.sendMessage({
      senderId: viewers[1]!,
      to: { type: "channel", channel: "general", topic: "t" },
      content: "+",
    });
    await new Promise((resolve) => setImmediate(resolve));
    const replication = internals(leader).tables.env.openDB<unknown, [string, number]>({ name: "replication" });
    const undoSeqs = [...replication.getKeys({ start: ["undo", 0], end: ["undo", Number.MAX_SAFE_INTEGER] })];
    expect(undoSeqs.map((key) => key[1])).toEqual(txns.slice(kept).map((t) => t.seq));
    leader.close();
    open.splice(open.indexOf(leader), 1);

    const replica = openReplica(replicaDir, { noSync: true });
    open.push(replica);
    replica.applyReplicated(txns.slice(0, kept));

    const rejoined = openReplica(leaderDir, { noSync: true });
    open.push(rejoined);
    expect(rejoined.replicationPosition.seq).toBe(txns.length);
    while (rejoined.replicationPosition.seq > kept) expect(rejoined.undoUnreplicated()).toBe(true);
    expect(rejoined.replicationPosition).toEqual({ seq: kept, id: txns[kept - 1]!.id });
    expect(view(rejoined, viewers)).toEqual(view(replica, viewers));
    // And it follows the log from there like any replica.
    rejoined.dropUndoThrough(kept);
    expect(rejoined.undoUnreplicated()).toBe(false);
  });
});
