/**
 * message_retention_days (the realm's and channels'), as Zulip's archive_messages: the
 * hourly pass deletes messages older than their policy from every narrow, search,
 * unread count and lookup, detaches their uploads, and tells no client. The store's
 * and the pass's clocks are both injected.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { User } from "../../src/engine/index.js";
import { internals } from "../../src/engine/internal.js";
import { ManualClock } from "../../src/realtime/clock.js";
import { MessageRetention, RETENTION_PASS_INTERVAL_MS } from "../../src/scheduler/message-retention.js";
import { startServer, type TestServer } from "../support/http.js";

const DAY = 86_400;
const START = 1_750_000_000;
let now = START;
let s: TestServer;

beforeAll(async () => {
  s = await startServer({}, { now: () => now });
});
afterAll(() => s.close());

const ok = async (user: User, method: string, path: string, params: Record<string, unknown> = {}) => {
  const r = await s.call(user, method, path, params);
  expect(r.body, JSON.stringify(r.body)).toMatchObject({ result: "success" });
  return r.body;
};
const post = async (user: User, channelId: number, content: string, topic = "old news") =>
  (await ok(user, "POST", "/messages", { type: "stream", to: channelId, topic, content }))["id"] as number;
const dm = async (user: User, to: User, content: string) =>
  (await ok(user, "POST", "/messages", { type: "direct", to: JSON.stringify([to.id]), content }))["id"] as number;
const idsIn = async (user: User, narrow: unknown[]): Promise<number[]> => {
  const body = await ok(user, "GET", "/messages", {
    anchor: "newest",
    num_before: 1000,
    num_after: 0,
    narrow: JSON.stringify(narrow),
  });
  return (body["messages"] as { id: number }[]).map((m) => m.id);
};
const unreadCount = async (user: User): Promise<number> => {
  const body = await ok(user, "POST", "/register", {
    fetch_event_types: JSON.stringify(["message", "update_message_flags"]),
  });
  return (body["unread_msgs"] as { count: number }).count;
};
/** Alice's uploads, as the messages that claim each. */
const claims = async (): Promise<number[][]> => {
  const body = await ok(s.seed.alice, "GET", "/attachments");
  return (body["attachments"] as { message_ids: number[] }[]).map((a) => a.message_ids);
};
const pass = () => new MessageRetention(s.t.store).runOnce();

describe("message retention", () => {
  it("deletes messages past the realm's policy everywhere, keeps newer ones, and sends no event", async () => {
    const { owner, alice, bob, general } = s.seed;
    const form = new FormData();
    form.append("file", new Blob(["kept upload"]), "notes.txt");
    const upload = await s.call(alice, "POST", "/user_uploads", {}, { body: form });
    const uploadUrl = String(upload.body["url"]);
    const oldChannel = await post(alice, general.id, `zebrafish minutes [notes](${uploadUrl})`);
    const oldDm = await dm(alice, bob, "zebrafish in private");
    now += 20 * DAY;
    const recent = await post(alice, general.id, "zebrafish today");
    const recentDm = await dm(alice, bob, "zebrafish today, privately");
    await ok(owner, "PATCH", "/realm", { message_retention_days: 30 });

    const reg = await ok(bob, "POST", "/register", { event_types: JSON.stringify(["message", "delete_message"]) });
    now += 15 * DAY; // the old ones are 35 days old, the recent ones 15
    expect(await unreadCount(bob)).toBe(4);
    expect(await claims()).toEqual([[oldChannel]]);
    expect(await pass()).toBe(2);

    expect(await idsIn(bob, [{ operator: "channel", operand: general.id }])).not.toContain(oldChannel);
    expect(await idsIn(bob, [{ operator: "channel", operand: general.id }])).toContain(recent);
    expect(await idsIn(bob, [{ operator: "search", operand: "zebrafish" }])).toEqual([recent, recentDm]);
    expect(await idsIn(bob, [{ operator: "dm", operand: [alice.id] }])).toEqual([recentDm]);
    expect(await unreadCount(bob)).toBe(2);
    const gone = await s.call(bob, "GET", `/messages/${oldDm}`);
    expect(gone.body).toMatchObject({ result: "error", msg: "Invalid message(s)" });
    // The upload stays (as Zulip's archive keeps it) but no message claims it any more.
    expect(await claims()).toEqual([[]]);
    // Zulip's retention tells no client.
    const events = await ok(bob, "GET", "/events", {
      queue_id: reg["queue_id"],
      last_event_id: reg["last_event_id"],
      dont_block: true,
    });
    expect((events["events"] as { type: string }[]).filter((e) => e.type === "delete_message")).toEqual([]);
    // A second pass finds nothing more.
    expect(await pass()).toBe(0);
  });

  it("a channel's own policy overrides the realm's, and 'unlimited' keeps its messages forever", async () => {
    const { owner, alice, general } = s.seed;
    await ok(owner, "PATCH", "/realm", { message_retention_days: -1 });
    await ok(owner, "POST", "/users/me/subscriptions", {
      subscriptions: JSON.stringify([{ name: "short" }, { name: "forever" }]),
      principals: JSON.stringify([owner.id, alice.id]),
    });
    const channelId = async (name: string) => (await ok(owner, "GET", "/get_stream_id", { stream: name }))["stream_id"];
    const short = (await channelId("short")) as number;
    const forever = (await channelId("forever")) as number;
    await ok(owner, "PATCH", `/streams/${short}`, { message_retention_days: 5 });
    await ok(owner, "PATCH", `/streams/${forever}`, { message_retention_days: JSON.stringify("unlimited") });

    await post(alice, short, "short-lived");
    const inForever = await post(alice, forever, "kept for ever");
    const inGeneral = await post(alice, general.id, "follows the realm");
    now += 6 * DAY;
    // The realm keeps everything: only the channel with its own policy loses messages
    // (with the Notification Bot's notices there, as old).
    expect(await pass()).toBe(3);
    expect(await idsIn(alice, [{ operator: "channel", operand: short }])).toEqual([]);
    expect(await idsIn(alice, [{ operator: "channel", operand: general.id }])).toContain(inGeneral);

    await ok(owner, "PATCH", "/realm", { message_retention_days: 2 });
    expect(await pass()).toBeGreaterThan(0);
    expect(await idsIn(alice, [{ operator: "channel", operand: general.id }])).not.toContain(inGeneral);
    expect(await idsIn(alice, [{ operator: "channel", operand: forever }])).toContain(inForever);
  });

  it("the notice for a channel that follows the realm names the realm's period", async () => {
    const { owner, general } = s.seed;
    await ok(owner, "PATCH", "/realm", { message_retention_days: 30 });
    await ok(owner, "PATCH", `/streams/${general.id}`, { message_retention_days: 10 });
    const [notice] = (
      (
        await ok(owner, "GET", "/messages", {
          anchor: "newest",
          num_before: 1,
          num_after: 0,
          narrow: JSON.stringify([{ operator: "channel", operand: general.id }]),
          apply_markdown: "false",
        })
      )["messages"] as { content: string }[]
    ).slice(-1);
    expect(notice!.content).toContain("* **Old retention period**: 30 days\n* **New retention period**: 10 days");
    await ok(owner, "PATCH", `/streams/${general.id}`, { message_retention_days: JSON.stringify("realm_default") });
    await ok(owner, "PATCH", "/realm", { message_retention_days: -1 });
  });

  it("deletes in batches, each its own write, until nothing expired is left", async () => {
    const { alice, bob, general } = s.seed;
    await ok(s.seed.owner, "PATCH", "/realm", { message_retention_days: 1 });
    const sent: number[] = [];
    for (let i = 0; i < 7; i++) sent.push(await post(alice, general.id, `batch ${i}`, "batches"));
    sent.push(await dm(bob, alice, "batch dm"));
    now += 2 * DAY;
    const seq = () => internals(s.t.store).counters.nextChangeSeq;
    const before = seq();
    // Older messages of the earlier tests go too.
    expect(await s.t.store.deleteExpiredMessages({ batchSize: 3 })).toBeGreaterThanOrEqual(8);
    // 3 + 3 + 1 channel messages, then the direct message, then their read bits.
    expect(seq() - before).toBeGreaterThanOrEqual(4);
    expect(await idsIn(alice, [{ operator: "topic", operand: "batches" }])).toEqual([]);
    expect(await idsIn(alice, [{ operator: "dm", operand: [bob.id] }])).toEqual([]);
    await ok(s.seed.owner, "PATCH", "/realm", { message_retention_days: -1 });
  });

  it("the pass runs at start and then every interval on its clock, until stopped", async () => {
    const { owner, alice, general } = s.seed;
    await ok(owner, "PATCH", "/realm", { message_retention_days: 1 });
    const clock = new ManualClock(now * 1000);
    const deleted: number[] = [];
    const retention = new MessageRetention(s.t.store, { clock, onDeleted: (n) => deleted.push(n) });
    const first = await post(alice, general.id, "hourly one");
    now += 2 * DAY;
    retention.start();
    await retention.settled();
    expect(deleted).toEqual([1]);
    await post(alice, general.id, "hourly two");
    now += 2 * DAY;
    clock.advance(RETENTION_PASS_INTERVAL_MS - 1);
    await retention.settled();
    expect(deleted).toEqual([1]);
    clock.advance(1);
    await retention.settled();
    expect(deleted).toEqual([1, 1]);
    await retention.stop();
    await post(alice, general.id, "after stop");
    now += 2 * DAY;
    clock.advance(2 * RETENTION_PASS_INTERVAL_MS);
    await retention.settled();
    expect(deleted).toEqual([1, 1]);
    expect(await idsIn(alice, [{ operator: "channel", operand: general.id }])).not.toContain(first);
    await ok(owner, "PATCH", "/realm", { message_retention_days: -1 });
  });
});
