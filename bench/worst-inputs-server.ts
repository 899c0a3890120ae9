/**
 * @module bench/worst-inputs-server
 * The server side of bench/worst-inputs.ts, run as its child process so that the
 * client's work (building and sending 30 MB bodies) is not counted against the
 * server's event loop. Serves `--data DIR` on a free loopback port, prints
 * `listening on PORT`, and answers IPC messages: "reset" starts a new event-loop
 * delay histogram, "read" returns its maximum and p99 in milliseconds.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { openStore } from "../src/index.js";
import { createServer } from "../src/http/server.js";
import { warmUpWrites } from "../src/engine/index.js";
import { renderMarkdown } from "../src/markdown/index.js";

interface Reading {
  readonly maxMs: number;
  readonly p99Ms: number;
  /**
   * CPU time the server process used since "reset" (all threads; less sensitive to a loaded machine than the loop
   * delay).
   */
  readonly cpuMs: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { data: { type: "string" } }, strict: true });
  if (!values.data || !process.send)
    throw new Error("usage: run by bench/worst-inputs.ts with --data DIR and an IPC channel");
  const store = openStore(values.data, { noSync: true });
  // As `parley serve` does before it listens (src/server.ts startParley).
  store.warmUp();
  // PARLEY_WRITE_WARM_UP_ROUNDS=0 skips it, as it does for parley serve (to compare a cold start).
  const rounds = process.env["PARLEY_WRITE_WARM_UP_ROUNDS"];
  const warm = await warmUpWrites({ renderer: renderMarkdown, ...(rounds ? { rounds: Number(rounds) } : {}) });
  if (warm.error !== null) process.stderr.write(`worst-inputs-server: write warm-up failed: ${String(warm.error)}\n`);
  const server = createServer(store, {
    rateLimit: false,
    dataDir: values.data,
    logError: (message, error) => process.stderr.write(`${message}: ${String(error)}\n`),
  });
  const port = await server.listen(0, "127.0.0.1");
  // 1 ms resolution: a block of N ms shows as a delay of about N ms.
  let histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  let cpuAtReset = process.cpuUsage();
  process.on("message", (message: unknown) => {
    if (message === "reset") {
      histogram.disable();
      histogram = monitorEventLoopDelay({ resolution: 1 });
      histogram.enable();
      cpuAtReset = process.cpuUsage();
      process.send!("ok");
    } else if (message === "read") {
      const cpu = process.cpuUsage(cpuAtReset);
      const reading: Reading = {
        maxMs: histogram.max / 1e6,
        p99Ms: histogram.percentile(99) / 1e6,
        cpuMs: (cpu.user + cpu.system) / 1000,
      };
      process.send!(reading);
    } else if (message === "stop") {
      histogram.disable();
      server.close();
      store.close();
      process.disconnect();
    }
  });
  process.stdout.write(`listening on ${port}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `worst-inputs-server: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
