/**
 * Smoke test for the generator and every engine benchmark workload, on a tiny dataset:
 * each workload must run and return what a brute-force filter over all messages (read
 * back from the store) and the generator's own row model says. No timing here; timing
 * lives in `npm run bench` and the PostgreSQL comparison in `npm run bench:peer`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Message, type Store } from "../../src/engine/index.js";
import { openStore } from "../../src/index.js";
import { engineWorkloads, type EngineWorkload } from "../../bench/workloads/engine.js";
import { generateDataset } from "../../tools/generate/generate.js";
import type { Manifest } from "../../tools/generate/manifest.js";
import { FLAG } from "../../tools/generate/pg-copy.js";
import { internals } from "../../src/engine/internal.js";
import { key } from "../../src/engine/index/keys.js";

let dir: string;
let store: Store;
let manifest: Manifest;
let workloads: Map<string, EngineWorkload>;
/** userId -> messageId -> flags: the generator's model of who received what. */
const rows = new Map<number, Map<number, number>>();
let messages: Message[] = [];

const last = (ids: number[], n: number) => ids.slice(Math.max(0, ids.length - n));
const rowsOf = (userId: number) => rows.get(userId) ?? new Map<number, number>();
const personal = (userId: number, keep: (m: Message, flags: number) => boolean) =>
  messages.filter((m) => rowsOf(userId).has(m.id) && keep(m, rowsOf(userId).get(m.id)!)).map((m) => m.id);
const around = (ids: number[], anchor: number, before: number, after: number) => [
  ...last(
    ids.filter((id) => id < anchor),
    before,
  ),
  ...ids.filter((id) => id === anchor),
  ...ids.filter((id) => id > anchor).slice(0, after),
];
const word = (w: string) => new RegExp(`\\b${w}\\b`, "i");
const run = (name: string) => {
  const w = workloads.get(name);
  if (!w) throw new Error(`no workload ${name}`);
  return w.run();
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "parley-bench-smoke-"));
  manifest = await generateDataset(join(dir, "store"), {
    messages: 3000,
    users: 300,
    seed: 7,
    batchSize: 500,
    pgDir: join(dir, "pg"),
    quiet: true,
    rowSink: (userId, messageId, flags) => {
      let map = rows.get(userId);
      if (!map) rows.set(userId, (map = new Map()));
      map.set(messageId, flags);
    },
  });
  store = openStore(join(dir, "store"), { noSync: true });
  messages = [...internals(store).tables.messages.getRange({ start: 1 })]
    .map((e) => e.value as Message)
    .sort((a, b) => a.id - b.id);
  workloads = new Map(engineWorkloads(store, manifest).map((w) => [w.name, w]));
});

afterAll(() => {
  store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("generator", () => {
  it("builds the planned realm deterministically", () => {
    expect(messages).toHaveLength(3000);
    expect(messages.map((m) => m.id)).toEqual(Array.from({ length: 3000 }, (_, i) => i + 1));
    expect(internals(store).subscribers.get(manifest.generalChannelId)?.size).toBe(300);
    expect(manifest.rareCount).toBeGreaterThan(0);
    expect(manifest.usermessageRows).toBeGreaterThan(0);
    expect(manifest.usermessageRows).toBeLessThan(manifest.usermessageRowsWithoutSoftDeactivation);
    const subs = [...(internals(store).subsByUser.get(manifest.subjects.hundred)?.values() ?? [])].filter(
      (s) => s.active,
    );
    expect(subs).toHaveLength(Math.min(100, manifest.scale.channels));
    // Dates are synthetic and increasing.
    for (let i = 1; i < messages.length; i++) expect(messages[i]!.dateSent).toBeGreaterThan(messages[i - 1]!.dateSent);
  });

  it("stores every user's read state as the model has it (read back from disk)", () => {
    let checked = 0;
    for (const [userId, flagsById] of rows) {
      const read = internals(store).bitmaps.loadFromDisk(key.userFlag(userId, "read"));
      for (const [messageId, flags] of flagsById) {
        expect(read.has(messageId), `user ${userId} message ${messageId}`).toBe((flags & FLAG.read) !== 0);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(50_000);
  });

  it("replays history without queueing missed-message emails", () => {
    // Every generated user is away and nothing sends batches: queued, each mention and
    // direct message rewrote its recipient's whole batch (the 1M dataset took over 30 min).
    expect(store.missedEmailBatches()).toEqual([]);
  });

  it("is verify-clean", () => {
    const report = store.verify();
    expect(report.differences).toEqual([]);
    expect(report.problems).toEqual([]);
  });
});

describe("engine workloads agree with brute force", () => {
  it("channel and topic windows (shared history)", () => {
    const inGeneral = messages.filter(
      (m) => m.recipient.type === "channel" && m.recipient.channelId === manifest.generalChannelId,
    );
    expect(run("channel newest 100")).toEqual(
      last(
        inGeneral.map((m) => m.id),
        100,
      ),
    );
    const topic = inGeneral.filter((m) => m.topic.toUpperCase() === manifest.bigTopic.toUpperCase()).map((m) => m.id);
    expect(topic.length).toBeGreaterThan(0);
    expect(run("channel+topic newest 100")).toEqual(last(topic, 100));
    expect(run("window 1000 + JSON")).toEqual(
      last(
        inGeneral.map((m) => m.id),
        1000,
      ),
    );
  });

  it("personal-history narrows", () => {
    const s = manifest.subjects;
    expect(run("sender newest 100")).toEqual(
      last(
        personal(s.main, (m) => m.senderId === s.sender),
        100,
      ),
    );
    const pair = [s.main, s.dmPartner].sort((a, b) => a - b).join(",");
    const dm = personal(
      s.main,
      (m) =>
        m.recipient.type === "direct" &&
        internals(store).conversations.get(m.recipient.conversationId)?.userIds.join(",") === pair,
    );
    expect(dm.length).toBeGreaterThan(0);
    expect(run("1:1 dm newest 100")).toEqual(last(dm, 100));
    expect(run("is:starred newest 100")).toEqual(
      last(
        personal(s.main, (_m, f) => (f & FLAG.starred) !== 0),
        100,
      ),
    );
    expect(run("is:mentioned newest 100")).toEqual(
      last(
        personal(s.main, (_m, f) => (f & FLAG.mentioned) !== 0),
        100,
      ),
    );
    const all = personal(s.main, () => true);
    expect(run("numeric anchor mid-history")).toEqual(around(all, Math.floor(manifest.lastMessageId / 2), 100, 100));
  });

  it("search", () => {
    const s = manifest.subjects;
    for (const w of [manifest.commonWord, manifest.rareWord]) {
      const expected = last(
        personal(s.main, (m) => word(w).test(m.topic) || word(w).test(m.content)),
        100,
      );
      const name = w === manifest.commonWord ? `search common '${w}'` : `search rare '${w}'`;
      expect(run(name)).toEqual(expected);
    }
  });

  it("first_unread window and unread summary", () => {
    const s = manifest.subjects;
    const unread = personal(s.backlog, (_m, f) => (f & FLAG.read) === 0);
    const muted = new Set(
      manifest.mutedTopics.filter((t) => t.userId === s.backlog).map((t) => `${t.channelId}:${t.topic.toUpperCase()}`),
    );
    const visible = unread.filter((id) => {
      const m = messages[id - 1]!;
      return !(m.recipient.type === "channel" && muted.has(`${m.recipient.channelId}:${m.topic.toUpperCase()}`));
    });
    expect(visible.length).toBeGreaterThan(0);
    expect(run("is:unread first_unread 60/150")).toEqual(around(unread, visible[0]!, 60, 150));
    const hundredUnread = personal(s.hundred, (_m, f) => (f & FLAG.read) === 0);
    expect(run("unread summary (100 subs)")).toEqual(last(hundredUnread, 50_000));
  });

  it("flag updates change exactly the unread messages, and reset restores them", () => {
    const s = manifest.subjects;
    const unreadInGeneral = personal(
      s.backlog,
      (m, f) =>
        (f & FLAG.read) === 0 && m.recipient.type === "channel" && m.recipient.channelId === manifest.generalChannelId,
    );
    const mark = workloads.get("mark channel read (big backlog)")!;
    expect(mark.run()).toEqual([unreadInGeneral.length]);
    mark.reset!();
    expect(mark.run()).toEqual([unreadInGeneral.length]);
    mark.reset!();
    const thousand = workloads.get("flags by 1000 IDs")!;
    expect(thousand.run()).toEqual([Math.min(1000, unreadInGeneral.length)]);
    thousand.reset!();
    expect(run("is:unread first_unread 60/150").length).toBeGreaterThan(0);
  });

  it("send appends the next message ID", () => {
    expect(run("send to 10k-subscriber channel")).toEqual([manifest.lastMessageId + 1]);
  });
});
