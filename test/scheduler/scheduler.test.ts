/**
 * The scheduler on a manual clock: delivery on time (within a second, never early),
 * as the sender with their client and read_by_sender, with message events; messages
 * due while stopped go out at start; failures set `failed` with the reason and the
 * Notification Bot tells the sender; exactly one delivery per message.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EngineEvent, Store } from "../../src/engine/index.js";
import { internals } from "../../src/engine/internal.js";
import { ManualClock } from "../../src/realtime/clock.js";
import { Scheduler } from "../../src/scheduler/scheduler.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";

let clock: ManualClock;
let t: TempStore;
let s: Store;
let w: ReturnType<typeof seedRealm>;
let scheduler: Scheduler;
const T0 = 1_700_000_000;

beforeEach(() => {
  clock = new ManualClock(T0 * 1000);
  t = tempStore({ now: () => Math.floor(clock.now() / 1000) });
  s = t.store;
  w = seedRealm(s);
  scheduler = new Scheduler(s, { clock });
});
afterEach(() => {
  scheduler.stop();
  t.cleanup();
});

const newest = () =>
  s.getMessages(w.owner.id, { anchor: "newest", numBefore: 1, numAfter: 0, narrow: [] }).messages[0]?.message;

describe("delivery on time", () => {
  it("delivers at its second, not before, as the sender and client, with events", () => {
    const events: EngineEvent[] = [];
    s.onEvents((b) => events.push(...b.deliveries.map((d) => d.event)));
    scheduler.start();
    const sm = s.scheduleMessage(w.owner.id, {
      to: { type: "channel", channelId: w.general.id, topic: "later" },
      content: "on time",
      deliverAt: T0 + 5,
      client: "website",
    });
    const before = s.lastMessageId;
    clock.advance(4999);
    expect(s.lastMessageId).toBe(before);
    clock.advance(1);
    expect(s.lastMessageId).toBe(before + 1);
    const message = newest()!;
    expect(message).toMatchObject({
      senderId: w.owner.id,
      client: "website",
      content: "on time",
      topic: "later",
      dateSent: T0 + 5,
    });
    expect(s.getMessage(w.owner.id, message.id).flags).toContain("read");
    expect(events.filter((e) => e.type !== "stream").map((e) => `${e.type}${"op" in e ? `:${e.op}` : ""}`)).toEqual([
      "scheduled_messages:add",
      "muted_topics",
      "user_topic",
      "message",
      "scheduled_messages:remove",
    ]);
    expect(s.scheduledMessages(w.owner.id)).toEqual([]);
    expect(internals(s).scheduledMessages.get(sm.id)).toMatchObject({
      delivered: true,
      deliveredMessageId: message.id,
    });
    clock.advance(10_000);
    expect(s.lastMessageId).toBe(before + 1);
  });

  it("a message scheduled while the loop sleeps is delivered within a second of its time", () => {
    scheduler.start();
    clock.advance(300);
    s.scheduleMessage(w.alice.id, {
      to: { type: "direct", userIds: [w.bob.id] },
      content: "soon",
      deliverAt: T0 + 2,
      client: "API",
    });
    const before = s.lastMessageId;
    clock.advance(1699);
    expect(s.lastMessageId).toBe(before);
    clock.advance(1);
    expect(s.lastMessageId).toBe(before + 1);
    // API clients' sends start unread for the sender (Zulip's default by client).
    expect(s.getMessage(w.alice.id, s.lastMessageId).flags).not.toContain("read");
  });

  it("messages due while stopped go out at start, oldest first, each once", () => {
    const ids = [3, 1, 2].map(
      (d) =>
        s.scheduleMessage(w.owner.id, {
          to: { type: "channel", channelId: w.general.id, topic: "t" },
          content: `m${d}`,
          deliverAt: T0 + d,
          client: "API",
        }).id,
    );
    clock.advance(10_000);
    const outcomes = scheduler.runOnce();
    expect(outcomes.map((o) => o.scheduledMessageId)).toEqual([ids[1], ids[2], ids[0]]);
    expect(scheduler.runOnce()).toEqual([]);
    t.reopen();
    expect(t.store.deliverDueScheduledMessages(T0 + 100)).toEqual([]);
    expect(t.store.verify().differences).toEqual([]);
  });
});

describe("a backlog after downtime", () => {
  it("is delivered in slices with turns of the event loop between them, oldest first, each once", async () => {
    const n = 40;
    for (let i = 0; i < n; i++)
      s.scheduleMessage(w.owner.id, {
        to: { type: "channel", channelId: w.general.id, topic: "t" },
        content: `m${i}`,
        deliverAt: T0 + 1 + (i % 7),
        client: "API",
      });
    clock.advance(10_000);
    const delivered: number[] = [];
    scheduler.stop();
    // A zero budget: one delivery per turn, whatever the machine's speed.
    scheduler = new Scheduler(s, { clock, sliceMs: 0, onDelivery: (o) => delivered.push(o.scheduledMessageId) });
    scheduler.start();
    expect(delivered).toHaveLength(1);
    // Other work runs between slices: an immediate queued now sees a partial backlog.
    const seen = await new Promise<number>((resolve) => setImmediate(() => resolve(delivered.length)));
    expect(seen).toBeGreaterThan(0);
    expect(seen).toBeLessThan(n);
    while (delivered.length < n) await new Promise((resolve) => setImmediate(resolve));
    expect(new Set(delivered).size).toBe(n);
    const times = delivered.map((id) => internals(s).scheduledMessages.get(id)!.deliverAt);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(s.scheduledMessages(w.owner.id)).toEqual([]);
  });
});

describe("failures", () => {
  it("a sender who lost access: failed with the reason, and a Notification Bot notice", () => {
    const sm = s.scheduleMessage(w.alice.id, {
      to: { type: "channel", channelId: w.secret.id, topic: "t" },
      content: "secret plans",
      deliverAt: T0 + 1,
      client: "website",
    });
    s.unsubscribe(w.alice.id, ["secret"]);
    clock.advance(2000);
    const [outcome] = scheduler.runOnce();
    expect(outcome).toMatchObject({
      scheduledMessageId: sm.id,
      messageId: null,
      failure: `Channel with ID '${w.secret.id}' does not exist`,
    });
    expect(s.scheduledMessages(w.alice.id)).toMatchObject([
      { id: sm.id, failed: true, failureMessage: outcome!.failure },
    ]);
    const notice = s.getMessages(w.alice.id, { anchor: "newest", numBefore: 1, numAfter: 0, narrow: [] }).messages[0]!
      .message;
    expect(s.findUser(notice.senderId)!.email).toBe("notification-bot@zulip.com");
    expect(notice.content).toBe(
      `The message you scheduled for <time:${new Date((T0 + 1) * 1000).toISOString().replace(/\.000Z$/, "+00:00")}> was not sent because of the following error:\n\n> ${outcome!.failure}\n\n[View scheduled messages](#scheduled)`,
    );
    // Failed ones are not retried; editing needs a new time.
    expect(scheduler.runOnce()).toEqual([]);
    expect(() => s.editScheduledMessage(w.alice.id, sm.id, { content: "x" })).toThrow(
      "Scheduled delivery time must be in the future.",
    );
  });

  it("a deactivated sender: failed, no notice", () => {
    s.scheduleMessage(w.bob.id, {
      to: { type: "direct", userIds: [w.alice.id] },
      content: "hi",
      deliverAt: T0 + 1,
      client: "API",
    });
    s.setUserActive(w.bob.id, false);
    const before = s.lastMessageId;
    clock.advance(2000);
    expect(scheduler.runOnce()[0]!.failure).toBe("Account is deactivated");
    expect(s.lastMessageId).toBe(before);
  });

  it("an archived channel or a recipient gone: failed", () => {
    s.scheduleMessage(w.owner.id, {
      to: { type: "direct", userIds: [w.bob.id] },
      content: "hi",
      deliverAt: T0 + 1,
      client: "API",
    });
    s.setUserActive(w.bob.id, false);
    clock.advance(2000);
    expect(scheduler.runOnce()[0]!.failure).toBe("'bob@test.dev' is no longer using Zulip.");
  });
});
