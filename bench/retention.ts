/**
 * @module bench/retention
 * `node dist/bench/retention.js [--users N] [--messages N] [--batch N] [--no-sync]`
 *
 * The retention pass (Store.deleteExpiredMessages, 100 messages a write) on a realm of
 * N users (default 10,000) all subscribed to one channel and having read everything:
 * a realm policy of 30 days newly set over `messages` (default 5,000) messages 40 days
 * old, with 500 recent ones that stay. Reports wall time, the writes it took with the
 * longest one's wall and CPU time, and the longest event-loop block (a 1 ms
 * setInterval probe's largest gap). Target: no block over 50 ms.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openStore } from "../src/index.js";
import { internals } from "../src/engine/internal.js";
import { key } from "../src/engine/index/keys.js";
import { RETENTION_BATCH_SIZE } from "../src/engine/actions/retention.js";
import type { Store, User } from "../src/engine/index.js";
import { crowdedRealm } from "./crowded-realm.js";
import { probeLoop } from "./loop-probe.js";

const DAY = 86_400;

function send(store: Store, senders: readonly User[], count: number, topic: string): number[] {
  const ids: number[] = [];
  store.batch(() => {
    for (let i = 0; i < count; i++)
      ids.push(
        store.sendMessage({
          senderId: senders[i % senders.length]!.id,
          to: { type: "channel", channel: "everyone", topic: `${topic} ${i % 50}` },
          content: `message ${i} about ${topic}, with a few words to index`,
        }).id,
      );
  });
  return ids;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      users: { type: "string", default: "10000" },
      messages: { type: "string", default: "5000" },
      batch: { type: "string", default: String(RETENTION_BATCH_SIZE) },
      "no-sync": { type: "boolean", default: false },
    },
    strict: true,
  });
  const userCount = Number(values.users);
  const count = Number(values.messages);
  let now = 1_750_000_000;
  const dir = mkdtempSync(join(tmpdir(), "parley-retention-"));
  const store = openStore(dir, { noSync: values["no-sync"], now: () => now });
  try {
    const { owner, users } = crowdedRealm(store, "Retention", userCount, "everyone");
    const ids = users.map((u) => u.id);
    const state = internals(store);
    const senders = users.slice(0, 20);
    console.error(`sending ${count} old and 500 recent messages`);
    const old = send(store, senders, count, "old");
    now += 35 * DAY;
    const recent = send(store, senders, 500, "recent");
    now += 5 * DAY;
    state.write(() => {
      for (const id of ids) state.bitmaps.addRange(key.userFlag(id, "read"), 1, state.lastMessageId + 1);
    });
    store.updateRealm(owner.id, { properties: { messageRetentionDays: 30 } });

    const writes: { wall: number; cpu: number }[] = [];
    const write = state.write.bind(state);
    state.write = ((fn: Parameters<typeof write>[0]) => {
      const [wall, cpu] = [performance.now(), process.cpuUsage()];
      try {
        return write(fn);
      } finally {
        const used = process.cpuUsage(cpu);
        writes.push({ wall: performance.now() - wall, cpu: (used.user + used.system) / 1000 });
      }
    }) as typeof state.write;
    const probe = probeLoop();
    const started = performance.now();
    const deleted = await store.deleteExpiredMessages({ batchSize: Number(values.batch) });
    const ms = performance.now() - started;
    const loop = probe.stop();
    const cpu = writes.map((w) => w.cpu).sort((a, b) => a - b);
    const report = store.verify();
    console.log(
      JSON.stringify(
        {
          users: userCount,
          batch: Number(values.batch),
          deleted,
          old_left: old.filter((id) => state.messageRecord(id) !== undefined).length,
          recent_left: recent.filter((id) => state.messageRecord(id) !== undefined).length,
          total_ms: Math.round(ms),
          writes: writes.length,
          longest_write_ms: Number(Math.max(...writes.map((w) => w.wall)).toFixed(1)),
          longest_write_cpu_ms: Number(cpu[cpu.length - 1]!.toFixed(1)),
          median_write_cpu_ms: Number(cpu[cpu.length >> 1]!.toFixed(1)),
          longest_block_ms: loop.longestBlockMs,
          verify: report.differences.length === 0 && report.problems.length === 0 ? "clean" : report,
          load: loadavg()[0]!.toFixed(1),
        },
        null,
        2,
      ),
    );
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
