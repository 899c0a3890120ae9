/**
 * Group commit of flag changes and reactions (the request thread spent ~35% of bench:day
 * in their separate fsyncs): concurrent ones share one transaction, each gets the answer
 * it would get alone, in arrival order (a later one sees the earlier ones' effects), a
 * refusal rejects only its own write, and one with nothing to write commits nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EngineEvent, EventBatch, Store } from "../../src/engine/index.js";
import { BadRequestError, EngineError } from "../../src/engine/index.js";
import { fingerprint } from "../support/snapshot.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";

let t: TempStore;
let commits = 0;
let w: ReturnType<typeof seedRealm>;
let batches: EventBatch[];
let ids: number[];
const s = (): Store => t.store;

beforeEach(() => {
  t = tempStore({ commitHook: () => void commits++ });
  w = seedRealm(t.store);
  ids = Array.from(
    { length: 6 },
    (_, i) =>
      s().sendMessage({
        senderId: w.owner.id,
        to: { type: "channel", channel: "general", topic: "t" },
        content: `m${i}`,
      }).id,
  );
  batches = [];
  t.store.onEvents((batch) => batches.push(batch));
  commits = 0;
});
afterEach(() => t.cleanup());

const eventsOf = <K extends EngineEvent["type"]>(type: K) =>
  batches.flatMap((b) =>
    b.deliveries.map((d) => d.event).filter((e): e is Extract<EngineEvent, { type: K }> => e.type === type),
  );

function expectVerifies(): void {
  const live = fingerprint(s());
  const reopened = t.reopen();
  expect(fingerprint(reopened)).toBe(live);
  const report = reopened.verify();
  expect(report.differences).toEqual([]);
  expect(report.problems).toEqual([]);
}

describe("group commit of flag changes", () => {
  it("concurrent flag changes share one transaction, each with its own answer and event, in order", async () => {
    const results = await Promise.all([
      ...ids.map((id) => s().updateFlagsGrouped(w.alice.id, [id], "starred", "add")),
      // Sees the stars above: only the first message's changes.
      s().updateFlagsGrouped(w.alice.id, [ids[0]!], "starred", "remove"),
      s().updateFlagsForNarrowGrouped(
        w.bob.id,
        { anchor: "oldest", numBefore: 0, numAfter: 100, narrow: [] },
        "read",
        "add",
      ),
      s().markTopicAsReadGrouped(w.alice.id, w.general.id, "t"),
    ]);
    expect(commits).toBe(1);
    expect(results.map((r) => r.updatedCount)).toEqual([1, 1, 1, 1, 1, 1, 1, 6, 6]);
    expect(results[7]).toMatchObject({ processedCount: 6, firstProcessedId: ids[0], foundNewest: true });
    const flagEvents = eventsOf("update_message_flags");
    expect(flagEvents.map((e) => [e.op, e.flag, e.messages])).toEqual([
      ...ids.map((id) => ["add", "starred", [id]]),
      ["remove", "starred", [ids[0]]],
      ["add", "read", ids],
      ["add", "read", ids],
    ]);
    const starred = s().getMessages(w.alice.id, {
      anchor: "oldest",
      numBefore: 0,
      numAfter: 100,
      narrow: [{ operator: "is", operand: "starred" }],
    });
    expect(starred.messages.map((m) => m.message.id)).toEqual(ids.slice(1));
    expectVerifies();
  });

  it("a refused flag change rejects alone; the others of its group commit", async () => {
    const results = await Promise.allSettled([
      s().updateFlagsGrouped(w.alice.id, [ids[0]!], "starred", "add"),
      s().updateFlagsGrouped(w.alice.id, [ids[1]!], "mentioned", "add"),
      s().updateFlagsGrouped(w.alice.id, [999_999], "starred", "add"),
      s().markTopicAsReadGrouped(w.bob.id, w.secret.id, null),
      s().updateFlagsGrouped(w.alice.id, [ids[2]!], "starred", "add"),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "rejected", "rejected", "fulfilled"]);
    for (const r of results.slice(1, 4)) {
      expect((r as PromiseRejectedResult).reason).toBeInstanceOf(BadRequestError);
    }
    expect(commits).toBe(1);
    const flagEvents = eventsOf("update_message_flags");
    expect(flagEvents.map((e) => e.messages)).toEqual([[ids[0]], [ids[2]]]);
    expectVerifies();
  });

  it("a later change sees the historical row an earlier one of its group created", async () => {
    s().subscribe(w.owner.id, { channels: [{ name: "elsewhere" }], principals: [w.owner.id] });
    const id = s().sendMessage({
      senderId: w.owner.id,
      to: { type: "channel", channel: "elsewhere", topic: "t" },
      content: "no row for alice",
    }).id;
    commits = 0;
    const results = await Promise.all([
      s().updateFlagsGrouped(w.alice.id, [id], "starred", "add"),
      s().updateFlagsGrouped(w.alice.id, [id], "starred", "remove"),
      s().updateFlagsGrouped(w.alice.id, [id], "starred", "remove"),
    ]);
    expect(results.map((r) => r.updatedCount)).toEqual([1, 1, 0]);
    expect(commits).toBe(1);
    expect(s().getMessage(w.alice.id, id).flags).not.toContain("starred");
    expectVerifies();
  });

  it("a flag change with nothing to change, alone, answers without a commit", async () => {
    const result = await s().updateFlagsGrouped(w.alice.id, [ids[0]!], "starred", "remove");
    expect(result.updatedCount).toBe(0);
    expect(commits).toBe(0);
    expect(eventsOf("update_message_flags")).toEqual([]);
  });
});

describe("group commit of reactions", () => {
  const octopus = { emojiName: "octopus" };
  it("concurrent reactions share one transaction; a later one sees the earlier ones", async () => {
    const results = await Promise.allSettled([
      s().addReactionGrouped(w.alice.id, ids[0]!, octopus),
      s().addReactionGrouped(w.bob.id, ids[0]!, octopus),
      // The same reaction again, after the first in the group: refused as it would be alone.
      s().addReactionGrouped(w.alice.id, ids[0]!, octopus),
      s().removeReactionGrouped(w.bob.id, ids[0]!, octopus),
      // Refused: bob's reaction is gone by then.
      s().removeReactionGrouped(w.bob.id, ids[0]!, octopus),
      s().addReactionGrouped(w.guest.id, ids[0]!, octopus),
      s().addReactionGrouped(w.alice.id, ids[1]!, octopus),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      "fulfilled",
      "fulfilled",
      "rejected",
      "fulfilled",
      "rejected",
      "rejected",
      "fulfilled",
    ]);
    expect(((results[2] as PromiseRejectedResult).reason as EngineError).code).toBe("REACTION_ALREADY_EXISTS");
    expect(((results[4] as PromiseRejectedResult).reason as EngineError).code).toBe("REACTION_DOES_NOT_EXIST");
    expect((results[5] as PromiseRejectedResult).reason).toBeInstanceOf(BadRequestError);
    expect(commits).toBe(1);
    const reactionEvents = eventsOf("reaction");
    expect(reactionEvents.map((e) => [e.op, e.messageId, e.reaction.userId])).toEqual([
      ["add", ids[0], w.alice.id],
      ["add", ids[0], w.bob.id],
      ["remove", ids[0], w.bob.id],
      ["add", ids[1], w.alice.id],
    ]);
    expect(
      s()
        .getMessage(w.alice.id, ids[0]!)
        .message.reactions.map((r) => r.userId),
    ).toEqual([w.alice.id]);
    expectVerifies();
  });
});
