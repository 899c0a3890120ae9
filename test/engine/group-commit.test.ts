/**
 * Group commit (issue #12, item 4): concurrent sends through sendMessageGrouped share
 * one LMDB transaction (the commit hook, called once per transaction, counts them),
 * keep their order and their own events, see each other's effects (one conversation
 * for two new direct messages), and fail or succeed as they would alone: a refusal
 * rejects only its send; a failed commit rejects every send of the group and changes
 * nothing; a body that throws half-way undoes the group and the others are rerun.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventBatch, Store } from "../../src/engine/index.js";
import { BadRequestError } from "../../src/engine/index.js";
import { internals } from "../../src/engine/internal.js";
import { fingerprint } from "../support/snapshot.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";

class InjectedCommitFailure extends Error {}

let t: TempStore;
let commits = 0;
let failNext = false;
let w: ReturnType<typeof seedRealm>;
let batches: EventBatch[];
const s = (): Store => t.store;

beforeEach(() => {
  t = tempStore({
    commitHook: () => {
      commits++;
      if (!failNext) return;
      failNext = false;
      throw new InjectedCommitFailure("injected");
    },
  });
  w = seedRealm(t.store);
  batches = [];
  t.store.onEvents((batch) => batches.push(batch));
  commits = 0;
  failNext = false;
});
afterEach(() => t.cleanup());

const channelSend = (content: string, sender = w.alice, channel: string | number = "general") =>
  s().sendMessageGrouped({ senderId: sender.id, to: { type: "channel", channel, topic: "t" }, content });
const messageEvents = (from = 0) =>
  batches
    .slice(from)
    .flatMap((b) =>
      b.deliveries
        .filter((d) => d.event.type === "message")
        .map((d) => (d.event as { message: { id: number; content: string } }).message),
    );

function expectVerifies(): void {
  const live = fingerprint(s());
  const reopened = t.reopen();
  expect(fingerprint(reopened)).toBe(live);
  const report = reopened.verify();
  expect(report.differences).toEqual([]);
  expect(report.problems).toEqual([]);
}

describe("group commit", () => {
  it("concurrent sends share one transaction, in call order, each with its own event batch", async () => {
    const first = internals(s()).counters.nextMessageId;
    const seq = internals(s()).counters.nextChangeSeq;
    const sent = await Promise.all(Array.from({ length: 20 }, (_, i) => channelSend(`grouped ${i}`)));
    expect(commits).toBe(1);
    expect(sent.map((m) => m.id)).toEqual(Array.from({ length: 20 }, (_, i) => first + i));
    expect(messageEvents().map((m) => m.content)).toEqual(Array.from({ length: 20 }, (_, i) => `grouped ${i}`));
    // One change-log entry per send, in order, as if each had been written alone.
    const messageSeqs = batches.filter((b) => b.deliveries.some((d) => d.event.type === "message")).map((b) => b.seq);
    expect(messageSeqs).toEqual([...messageSeqs].sort((a, b) => a - b));
    expect(messageSeqs[0]).toBeGreaterThanOrEqual(seq);
    const ids = s()
      .getMessages(w.bob.id, { anchor: "newest", numBefore: 100, numAfter: 0, narrow: [] })
      .messages.map((m) => m.message.id);
    expect(ids).toEqual(sent.map((m) => m.id));
    expectVerifies();
  });

  it("later sends of a group see the earlier ones: two new direct messages share one conversation", async () => {
    const [a, b] = await Promise.all([
      s().sendMessageGrouped({ senderId: w.alice.id, to: { type: "direct", users: [w.bob.id] }, content: "one" }),
      s().sendMessageGrouped({ senderId: w.bob.id, to: { type: "direct", users: [w.alice.id] }, content: "two" }),
    ]);
    expect(commits).toBe(1);
    expect(internals(s()).conversations.count()).toBe(1);
    expect(s().getMessage(w.bob.id, a.id).message.recipient).toEqual(s().getMessage(w.bob.id, b.id).message.recipient);
    expectVerifies();
  });

  it("a refused send rejects alone; the others of its group commit", async () => {
    const results = await Promise.allSettled([
      channelSend("kept 1"),
      channelSend("   "),
      channelSend("refused", w.guest),
      channelSend("kept 2"),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(BadRequestError);
    expect(commits).toBe(1);
    expect(messageEvents().map((m) => m.content)).toEqual(["kept 1", "kept 2"]);
    expectVerifies();
  });

  it("a failed commit rejects every send of the group and changes nothing; the same sends then commit", async () => {
    const before = fingerprint(s());
    const next = internals(s()).counters.nextMessageId;
    failNext = true;
    const results = await Promise.allSettled([
      channelSend("doomed 1"),
      s().sendMessageGrouped({ senderId: w.alice.id, to: { type: "direct", users: [w.bob.id] }, content: "doomed dm" }),
      channelSend("doomed 2"),
    ]);
    expect(results.every((r) => r.status === "rejected" && r.reason instanceof InjectedCommitFailure)).toBe(true);
    expect(fingerprint(s())).toBe(before);
    expect(batches).toEqual([]);
    expect(internals(s()).conversations.count()).toBe(0);

    const sent = await Promise.all([channelSend("kept 1"), channelSend("kept 2")]);
    expect(sent.map((m) => m.id)).toEqual([next, next + 1]);
    expect(messageEvents().map((m) => m.content)).toEqual(["kept 1", "kept 2"]);
    const found = s().getMessages(w.bob.id, {
      anchor: "newest",
      numBefore: 100,
      numAfter: 0,
      narrow: [{ operator: "search", operand: "doomed" }],
    });
    expect(found.messages).toEqual([]);
    expectVerifies();
  });

  it("a body that throws after writing undoes the group; the other writes then run each on its own", async () => {
    const st = internals(s());
    const before = st.counters.nextMessageId;
    const failing = st.writeGrouped(() => (ctx) => {
      st.tables.meta.putSync("half-written", 1);
      ctx.afterCommit(() => undefined);
      throw new InjectedCommitFailure("body failed");
    });
    const results = await Promise.allSettled([channelSend("kept 1"), failing, channelSend("kept 2")]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    // The hook runs at the end of a transaction's body: the group's never got there, nor
    // did the failing write's rerun; the two sends' reruns did.
    expect(commits).toBe(2);
    expect(st.tables.meta.get("half-written")).toBeUndefined();
    expect(results.flatMap((r) => (r.status === "fulfilled" ? [(r.value as { id: number }).id] : []))).toEqual([
      before,
      before + 1,
    ]);
    expect(messageEvents().map((m) => m.content)).toEqual(["kept 1", "kept 2"]);
    expectVerifies();
  });

  it("a send alone in its group is an ordinary write", async () => {
    const { id } = await channelSend("alone");
    expect(commits).toBe(1);
    expect(s().getMessage(w.bob.id, id).message.content).toBe("alone");
  });
});
