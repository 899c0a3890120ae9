/**
 * Saving event queues at shutdown (hardening issue, item 2): written in chunks, most
 * recently polled first, and stopped at a deadline, after which the file ends at the
 * last whole queue; loading skips a damaged or truncated line and still reads files
 * of the earlier single-object format.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  EventHub,
  loadSavedQueues,
  ManualClock,
  SAVED_QUEUES_FILE,
  writeSavedQueues,
  type SavedQueue,
} from "../../src/realtime/index.js";
import { seedRealm, tempStore } from "../support/temp-store.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "parley-persist-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const OPTIONS: SavedQueue["options"] = {
  eventTypes: ["message"],
  allPublicStreams: false,
  narrow: [],
  applyMarkdown: true,
  clientGravatar: true,
  emptyTopicName: false,
  streamTypingNotifications: false,
  includeDeactivatedGroups: false,
  presenceFormat: "legacy",
  individualEmojiChanges: false,
  userListIncomplete: false,
  archivedChannels: false,
  bulkMessageDeletion: false,
  linkifierUrlTemplate: false,
  idleTimeoutSecs: 600,
};

function queue(n: number, events: number, bodyChars = 20): SavedQueue {
  const body = (i: number) => `{"type":"message","n":${i},"text":"${"é".repeat(bodyChars)}"`;
  const held = Array.from({ length: events }, (_, i) => ({ id: i, body: body(i) }));
  const lastActivity = 1000 - n;
  return { id: `q${n}`, userId: 10 + n, realmId: 1, options: OPTIONS, nextEventId: events, lastActivity, events: held };
}

const path = () => join(dir, SAVED_QUEUES_FILE);

describe("saving event queues", () => {
  it("round-trips every queue, and loading deletes the file", async () => {
    const queues = [queue(0, 3), queue(1, 0), queue(2, 50, 2_000)];
    const result = await writeSavedQueues(dir, queues, { chunkBytes: 4096 });
    expect(result).toEqual({ saved: 3, dropped: 0, bytes: readFileSync(path()).length });
    expect(await loadSavedQueues(dir)).toEqual(queues);
    expect(existsSync(path())).toBe(false);
    expect(await loadSavedQueues(dir)).toEqual([]);
  });

  it("keeps the client capabilities a queue registered with, bulk_message_deletion included", async () => {
    const capable = {
      ...queue(0, 1),
      options: { ...OPTIONS, bulkMessageDeletion: true, archivedChannels: true, linkifierUrlTemplate: true },
    };
    await writeSavedQueues(dir, [capable]);
    const [loaded] = await loadSavedQueues(dir);
    expect(loaded?.options.bulkMessageDeletion).toBe(true);
    expect(loaded?.options.archivedChannels).toBe(true);
    expect(loaded?.options.linkifierUrlTemplate).toBe(true);
  });

  it("writes an event text that many queues hold once, then refers to it", async () => {
    const queues = Array.from({ length: 50 }, (_, n) => queue(n, 20, 1_000));
    const { bytes } = await writeSavedQueues(dir, queues);
    // 20 texts of ~2 KB (UTF-8 é) once, then 49 x 20 short references.
    expect(bytes).toBeLessThan(2 * 20 * 2_100);
    const loaded = await loadSavedQueues(dir);
    expect(loaded).toEqual(queues);
  });

  it("stops at the deadline: the queue being written is taken back and the rest are dropped", async () => {
    // The third queue is written in several chunks; the deadline passes after its first.
    let writingBig = false;
    let callsSince = 0;
    const big = queue(2, 200, 500);
    const bigEvents = big.events;
    Object.defineProperty(big, "events", {
      enumerable: true,
      get() {
        writingBig = true;
        return bigEvents;
      },
    });
    const now = () => (writingBig && ++callsSince >= 2 ? 1e12 : 0);
    const queues = [queue(0, 2), queue(1, 2), big, queue(3, 2)];
    const result = await writeSavedQueues(dir, queues, { deadlineMs: 10_000, chunkBytes: 8192, now });
    expect(result).toMatchObject({ saved: 2, dropped: 2 });
    expect(readFileSync(path()).length).toBe(result.bytes);
    const warnings: string[] = [];
    expect(await loadSavedQueues(dir, (m) => warnings.push(m))).toEqual(queues.slice(0, 2));
    expect(warnings).toEqual([]);
  });

  it("a deadline already past saves nothing, and the empty file loads as no queues", async () => {
    let t = 0;
    const result = await writeSavedQueues(dir, [queue(0, 1)], { deadlineMs: 5, now: () => (t += 10) });
    expect(result).toMatchObject({ saved: 0, dropped: 1 });
    expect(await loadSavedQueues(dir)).toEqual([]);
  });

  it("a file cut short loads every queue before the cut and says what it skipped", async () => {
    const queues = [queue(0, 3), queue(1, 3), queue(2, 3)];
    await writeSavedQueues(dir, queues);
    const size = readFileSync(path()).length;
    truncateSync(path(), size - 40);
    const warnings: string[] = [];
    expect(await loadSavedQueues(dir, (m) => warnings.push(m))).toEqual(queues.slice(0, 2));
    expect(warnings).toEqual([expect.stringContaining("skipped 1 damaged or truncated queue(s)")]);
  });

  it("loading stops at its deadline too, keeping the queues read so far (the most recently polled)", async () => {
    const queues = [queue(0, 2), queue(1, 2), queue(2, 2), queue(3, 2)];
    await writeSavedQueues(dir, queues);
    // One clock reading sets the deadline, one per line after: the header, q0, then q1 is late.
    let readings = 0;
    const warnings: string[] = [];
    const now = () => (++readings > 3 ? 1e12 : 0);
    const loaded = await loadSavedQueues(dir, (m) => warnings.push(m), { deadlineMs: 10_000, now });
    expect(loaded).toEqual(queues.slice(0, 1));
    expect(warnings).toEqual([expect.stringContaining("read 1 queue(s) before the deadline")]);
    expect(existsSync(path())).toBe(false);
  });

  it("reads the file of earlier releases, refuses other files, removes a dead save's temporary file", async () => {
    const queues = [queue(0, 2), queue(1, 1)];
    writeFileSync(path(), JSON.stringify({ version: 1, queues }));
    writeFileSync(join(dir, `${SAVED_QUEUES_FILE}.12345.tmp`), "half a save");
    expect(await loadSavedQueues(dir)).toEqual(queues);
    expect(existsSync(join(dir, `${SAVED_QUEUES_FILE}.12345.tmp`))).toBe(false);
    writeFileSync(path(), "not json\n");
    const warnings: string[] = [];
    expect(await loadSavedQueues(dir, (m) => warnings.push(m))).toEqual([]);
    expect(warnings).toEqual([expect.stringContaining("not a saved event queue file")]);
  });

  it("the hub saves the most recently polled queues first, so a deadline drops the idle ones", () => {
    const t = tempStore();
    try {
      const { alice, bob } = seedRealm(t.store);
      const clock = new ManualClock();
      const hub = new EventHub(t.store, { clock });
      const register = (user: typeof alice) => hub.register(user, { ...OPTIONS, eventTypes: null });
      const never = register(alice);
      clock.advance(1000);
      const early = register(bob);
      clock.advance(1000);
      const late = register(alice);
      clock.advance(1000);
      void hub.poll(alice, { queueId: late.id, lastEventId: undefined, dontBlock: true }, new AbortController().signal);
      clock.advance(1000);
      void hub.poll(bob, { queueId: early.id, lastEventId: undefined, dontBlock: true }, new AbortController().signal);
      expect(hub.save().map((s) => s.id)).toEqual([early.id, late.id, never.id]);
      hub.close();
    } finally {
      t.cleanup();
    }
  });
});
