/**
 * @module bench/scheduler-backlog
 * `node dist/bench/scheduler-backlog.js [--count N] [--no-sync]`
 *
 * A server back from downtime with N scheduled messages due (default 10,000): how long
 * the scheduler holds the event loop at a time while it delivers the backlog, and how
 * long the whole backlog takes. The loop's longest block is measured with a 1 ms
 * setInterval probe (the largest gap between its runs) and with perf_hooks'
 * event-loop delay histogram. Target: no block over 50 ms.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openStore } from "../src/index.js";
import { Scheduler } from "../src/scheduler/scheduler.js";
import { progressBar } from "../tools/progress.js";
import { probeLoop } from "./loop-probe.js";

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { count: { type: "string", default: "10000" }, "no-sync": { type: "boolean", default: false } },
    strict: true,
  });
  const count = Number(values.count);
  const dir = mkdtempSync(join(tmpdir(), "parley-backlog-"));
  let nowSeconds = 1_800_000_000;
  const store = openStore(dir, { noSync: values["no-sync"], now: () => nowSeconds });
  try {
    const { realm, owner } = store.createRealm({
      subdomain: "",
      name: "Backlog",
      owner: { email: "owner@bench.dev", fullName: "Owner" },
    });
    store.subscribe(owner.id, { channels: [{ name: "general" }], principals: [owner.id] });
    const general = store.getChannels(owner.id, {}).find((c) => c.name === "general")!;
    const progress = progressBar(`scheduling ${count} messages`, count);
    store.batch(() => {
      for (let i = 0; i < count; i++) {
        store.scheduleMessage(owner.id, {
          to: { type: "channel", channelId: general.id, topic: `t${i % 50}` },
          content: `backlog message ${i}`,
          deliverAt: nowSeconds + 60 + (i % 600),
          client: "API",
        });
        if (i % 1000 === 0) progress.update(i);
      }
    });
    progress.update(count);
    progress.stop();
    void realm;
    // Downtime: everything is due when the server comes back.
    nowSeconds += 3600;
    let delivered = 0;
    const probe = probeLoop();
    const started = performance.now();
    await new Promise<void>((resolve) => {
      const scheduler = new Scheduler(store, {
        clock: {
          now: () => nowSeconds * 1000,
          setTimeout: (fn, ms) => setTimeout(fn, ms),
          clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
        },
        onDelivery: () => {
          if (++delivered === count) {
            scheduler.stop();
            resolve();
          }
        },
      });
      scheduler.start();
    });
    const totalMs = performance.now() - started;
    const loop = probe.stop();
    const line = {
      count,
      durable: !values["no-sync"],
      total_ms: Math.round(totalMs),
      per_message_ms: Number((totalMs / count).toFixed(3)),
      longest_block_ms: loop.longestBlockMs,
      loop_delay_max_ms: loop.loopDelayMaxMs,
      loop_delay_p99_ms: loop.loopDelayP99Ms,
    };
    console.log(JSON.stringify(line));
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
