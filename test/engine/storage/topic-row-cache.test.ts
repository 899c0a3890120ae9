/**
 * The topic row cache (storage/topic-row-cache): records naming a registry row read its
 * name from memory, and memory never answers a row the store does not hold: the writer
 * sees its renames at once, a failed write leaves the old name, a follower sees the
 * writer's renames once caught up, and a cached row older than a record is read again.
 */
import { afterEach, describe, expect, it } from "vitest";
import { internals } from "../../../src/engine/internal.js";
import { getMessageRecord } from "../../../src/engine/storage/message-records.js";
import type { Store } from "../../../src/engine/index.js";
import type { TopicRow } from "../../../src/engine/types.js";
import { TopicRowCache } from "../../../src/engine/storage/topic-row-cache.js";
import { openFollower } from "../../../src/index.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

class InjectedCommitFailure extends Error {}

const stores: TempStore[] = [];
const followers: Store[] = [];
afterEach(() => {
  for (const f of followers.splice(0)) f.close();
  for (const t of stores.splice(0)) t.cleanup();
});

function open() {
  const failNext = { armed: false };
  const t = tempStore({
    commitHook: () => {
      if (!failNext.armed) return;
      failNext.armed = false;
      throw new InjectedCommitFailure("injected commit failure");
    },
  });
  stores.push(t);
  const r = seedRealm(t.store);
  const send = (topic: string) =>
    t.store.sendMessage({ senderId: r.owner.id, to: { type: "channel", channel: r.general.id, topic }, content: "hi" })
      .id;
  const plan = [send("plan"), send("plan"), send("plan")];
  return { t, store: t.store, r, plan, send, failNext };
}

const topicOf = (store: Store, userId: number, id: number) => store.getMessage(userId, id).message.topic;

describe("the topic row cache", () => {
  it("answers the writer's rename right after it", () => {
    const { store, r, plan } = open();
    expect(topicOf(store, r.owner.id, plan[0]!)).toBe("plan");
    const rowId = getMessageRecord(internals(store).tables, plan[0]!)!.topicRef!;
    expect(internals(store).tables.topicRowCache.keys()).toContain(rowId);
    store.updateMessage(r.owner.id, plan[1]!, { topic: "✔ plan", propagateMode: "change_all" });
    for (const id of plan) expect(topicOf(store, r.owner.id, id)).toBe("✔ plan");
    expect(store.verify().problems).toEqual([]);
  });

  it("forgets the rows of a failed write: reads keep the old name", () => {
    const { store, r, plan, failNext } = open();
    expect(topicOf(store, r.owner.id, plan[0]!)).toBe("plan");
    failNext.armed = true;
    expect(() => store.updateMessage(r.owner.id, plan[1]!, { topic: "moved", propagateMode: "change_all" })).toThrow(
      InjectedCommitFailure,
    );
    expect(failNext.armed, "the write reached its commit").toBe(false);
    for (const id of plan) expect(topicOf(store, r.owner.id, id)).toBe("plan");
    store.updateMessage(r.owner.id, plan[1]!, { topic: "moved", propagateMode: "change_all" });
    for (const id of plan) expect(topicOf(store, r.owner.id, id)).toBe("moved");
  });

  it("gives a follower the writer's renames once it has caught up", () => {
    const { t, store, r, plan } = open();
    const follower = openFollower(t.dir, { noSync: true, lockToken: store.lockToken });
    followers.push(follower);
    expect(topicOf(follower, r.owner.id, plan[0]!)).toBe("plan");
    store.updateMessage(r.owner.id, plan[1]!, { topic: "✔ plan", propagateMode: "change_all" });
    follower.catchUp();
    for (const id of plan) expect(topicOf(follower, r.owner.id, id)).toBe("✔ plan");
    store.updateMessage(r.owner.id, plan[1]!, { topic: "plan", propagateMode: "change_all" });
    follower.catchUp();
    for (const id of plan) expect(topicOf(follower, r.owner.id, id)).toBe("plan");
    expect(follower.getMessage(r.owner.id, plan[2]!).message.editHistory).toEqual(
      store.getMessage(r.owner.id, plan[2]!).message.editHistory,
    );
  });

  it("reads a row again when the cached one has fewer renames than a record expects", () => {
    const { store, r, plan, send } = open();
    const tables = internals(store).tables;
    const rowId = getMessageRecord(tables, plan[0]!)!.topicRef!;
    const before = tables.topics.get(rowId) as TopicRow;
    store.updateMessage(r.owner.id, plan[1]!, { topic: "✔ plan", propagateMode: "change_all" });
    const late = send("✔ plan");
    expect(getMessageRecord(tables, late)!.topicRef).toBe(rowId);
    // What a follower holds when its records are newer than the change sets it applied.
    tables.topicRowCache.set(rowId, { ...before, renames: [...before.renames] });
    const read = getMessageRecord(tables, late)!;
    expect(read.topic).toBe("✔ plan");
    expect(read.editHistory ?? null).toBeNull();
    expect(tables.topicRowCache.get(rowId, 1)?.name).toBe("✔ plan");
  });
});

describe("TopicRowCache", () => {
  it("stays within its byte budget, keeping the rows read since the last sweep", () => {
    const row = (name: string): TopicRow => ({ channelId: 1, name, renames: [] });
    // One row is estimated at ~150 bytes: room for about six.
    const cache = new TopicRowCache(1_000);
    for (let id = 1; id <= 6; id++) cache.set(id, row(`t${id}`));
    expect(cache.get(1, 0)?.name).toBe("t1");
    for (let id = 7; id <= 100; id++) {
      cache.set(id, row(`t${id}`));
      cache.get(1, 0);
    }
    expect(cache.keys().length).toBeLessThanOrEqual(6);
    expect(cache.keys()).toContain(1);
    expect(cache.keys()).toContain(100);
    expect(cache.get(2, 0)).toBeUndefined();
    expect(() => ((cache.get(1, 0) as { name: string }).name = "changed")).toThrow(TypeError);
  });

  it("says a record reads as stored only for the held row's exact rename count and name", () => {
    const rename = { userId: 1, timestamp: 1, prevTopic: "a", topic: "b", moved: false };
    const cache = new TopicRowCache();
    cache.set(1, { channelId: 1, name: "b", renames: [rename] });
    expect(cache.current(1, 1, "b")).toBe(true);
    expect(cache.current(1, 0, "b")).toBe(false);
    expect(cache.current(1, 2, "b")).toBe(false);
    expect(cache.current(1, 1, "a")).toBe(false);
    expect(cache.current(2, 0, "b")).toBe(false);
    cache.set(1, { channelId: 1, name: "c", renames: [rename, { ...rename, prevTopic: "b", topic: "c" }] });
    expect(cache.current(1, 1, "b")).toBe(false);
    expect(cache.current(1, 2, "c")).toBe(true);
    cache.forget(1);
    expect(cache.current(1, 2, "c")).toBe(false);
  });

  it("keeps a row that records were found current against through a sweep, like a read one", () => {
    const cache = new TopicRowCache(1_000);
    for (let id = 1; id <= 6; id++) cache.set(id, { channelId: 1, name: `t${id}`, renames: [] });
    expect(cache.current(1, 0, "t1")).toBe(true);
    for (let id = 7; id <= 100; id++) {
      cache.set(id, { channelId: 1, name: `t${id}`, renames: [] });
      expect(cache.current(1, 0, "t1")).toBe(true);
    }
    expect(cache.keys()).toContain(1);
  });
});
