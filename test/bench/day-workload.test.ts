import { describe, expect, it } from "vitest";
import { ClientView, DeliveryLedger, Pacer, pacedRates, seqOf, tagOf } from "../../bench/day/workload.js";
import { Rng } from "../../tools/generate/prng.js";

describe("bench:day workload", () => {
  it("paces a fractional rate steadily, carrying the remainder", () => {
    const pacer = new Pacer(2.5, 0);
    let total = 0;
    for (let t = 100; t <= 10_000; t += 100) total += pacer.due(t);
    expect(total).toBe(25);
  });

  it("scales the per-minute rates by clients and compression", () => {
    expect(pacedRates(600, 10)).toEqual({ read: 200, presence: 100, reaction: 20, send: 10 });
  });

  it("counts each arrival once per queue of the audience, also when the event beats the ack", () => {
    const ledger = new DeliveryLedger();
    ledger.receive(0, 1, 5); // before expect(): held until the send is acknowledged
    ledger.expect(0, 0, new Set([1, 2]));
    ledger.receive(0, 2, 9);
    ledger.receive(0, 2, 10); // duplicate
    ledger.receive(0, 3, 11); // not in the audience
    ledger.expect(1, 20, new Set([1, 2]));
    ledger.receive(1, 1, 30);
    expect(ledger.duplicates).toBe(1);
    expect(ledger.unexpected).toBe(1);
    expect(ledger.complete(0, 1)).toBe(true);
    expect(ledger.complete(0, 2)).toBe(false);
    const s = ledger.summary(0, 2);
    expect(s).toMatchObject({ expected: 4, received: 3, allQueues: [9] });
    expect(s.pairs.sort((a, b) => a - b)).toEqual([5, 9, 10]);
  });

  it("reads anchored at the client's own oldest unread message and forgets what it marked read", () => {
    const view = new ClientView(7);
    view.learnRegister({
      subscriptions: [{ stream_id: 3 }],
      unread_msgs: { streams: [{ stream_id: 3, topic: "t", unread_message_ids: [40, 12] }], pms: [] },
    });
    const rng = new Rng(1);
    const plans = Array.from({ length: 200 }, () => view.planRead(rng, ["word"]));
    const anchored = plans.filter((p) => p.shape === "channel" || p.shape === "topic" || p.shape === "feed");
    expect(anchored.length).toBeGreaterThan(0);
    for (const p of anchored) expect(p.anchor).toBe(12);
    view.markedRead([12, 40]);
    expect(view.planRead(new Rng(2), ["word"]).anchor).toBe("newest");
    expect(seqOf(`<p>hello ${tagOf(42)}</p>`)).toBe(42);
  });
});
