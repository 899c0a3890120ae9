/**
 * @module bench/run
 * `npm run bench [-- --scale tiny|100k|1m|10m|N] [--data DIR] [--time MS]` (or BENCH_SCALE=...)
 *
 * tinybench micro-benchmarks of the engine on a generated dataset (generated into
 * bench/tmp/<scale> if absent; default 100k): narrow plan+execute+load for each narrow
 * workload, anchors, flag updates, unread summary, send, and the 1000-message JSON
 * window next to the memcpy floor. Results go to bench/results/engine-<scale>.json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Bench } from "tinybench";
import { chooseDataset, ensureDataset, workingCopy } from "./dataset.js";
import { measure } from "./harness.js";
import { footprint, openToReady } from "./footprint.js";
import { engineWorkloads, readyWindowBytes } from "./workloads/engine.js";
import { engineDicts } from "./workloads/serialize.js";

const log = (line: string) => process.stderr.write(line + "\n");

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { scale: { type: "string" }, data: { type: "string" }, time: { type: "string" }, out: { type: "string" } },
    strict: true,
  });
  const choice = chooseDataset(values.scale, values.data, "100k");
  const manifest = await ensureDataset(choice, false, log);
  const work = workingCopy(choice.dir);
  const ready = openToReady(work.dir, manifest.subjects.main, manifest.generalChannelId);
  const store = ready.store;
  log(`open ${ready.openMs.toFixed(0)} ms, first query ${ready.firstQueryMs.toFixed(1)} ms`);

  const bench = new Bench({ time: Number(values.time ?? 500), warmupTime: 100 });
  const workloads = engineWorkloads(store, manifest);
  for (const w of workloads) if (!w.reset && !w.appends) bench.add(w.name, () => void (w.timed ? w.timed() : w.run()));
  const window = store.getMessages(manifest.subjects.main, {
    narrow: [{ operator: "channel", operand: manifest.generalChannelId }],
    anchor: "newest",
    numBefore: 1000,
    numAfter: 0,
  });
  const json = readyWindowBytes(store, manifest);
  const target = Buffer.allocUnsafe(json.length);
  bench.add("memcpy floor (ready 1000-message JSON bytes)", () => void json.copy(target));
  bench.add(
    "JSON.stringify only (1000 prebuilt dicts)",
    () => void JSON.stringify(engineDicts(store, window.messages)),
  );

  log(`running ${bench.tasks.length} tasks on ${choice.label} messages…`);
  await bench.run();
  const rows: {
    name: string;
    state: string;
    error?: string | undefined;
    samples?: number;
    meanMs?: number;
    p50Ms?: number;
    p99Ms?: number;
    opsPerSecond?: number;
  }[] = bench.tasks.map((t) => {
    const r = t.result;
    if (r.state !== "completed")
      return { name: t.name, state: r.state, error: r.state === "errored" ? r.error.message : undefined };
    return {
      name: t.name,
      state: r.state,
      samples: r.latency.samplesCount,
      meanMs: r.latency.mean,
      p50Ms: r.latency.p50,
      p99Ms: r.latency.p99,
      opsPerSecond: r.throughput.mean,
    };
  });
  // Workloads that change state run in our own loop: tinybench may time several calls
  // per sample for fast sync functions, and a flag change must be undone between calls.
  for (const w of workloads.filter((x) => x.reset || x.appends)) {
    const t = await measure(() => (w.timed ? w.timed() : w.run()), {
      warmup: 1,
      minIterations: 10,
      maxIterations: w.appends ? 50 : 20,
      budgetMs: 2000,
      reset: w.reset ? () => w.reset!() : undefined,
    });
    rows.push({
      name: w.name,
      state: "completed",
      samples: t.iterations,
      meanMs: t.meanMs,
      p50Ms: t.medianMs,
      p99Ms: t.p90Ms,
      opsPerSecond: 1000 / t.meanMs,
    });
  }
  console.table(
    rows.map((r) => ({
      name: r.name,
      "p50 ms": r.p50Ms?.toFixed(4) ?? r.state,
      "p99 ms (p90 for flag/send rows)": r.p99Ms?.toFixed(4) ?? "",
      "ops/s": Math.round(r.opsPerSecond ?? 0),
    })),
  );
  const fp = await footprint(store, work.dir, manifest.scale.messages);
  const outDir = values.out ?? join("bench", "results");
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `engine-${choice.label}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      {
        scale: choice.label,
        messages: manifest.scale.messages,
        node: process.version,
        openToReady: { openMs: ready.openMs, firstQueryMs: ready.firstQueryMs },
        footprint: fp,
        jsonBytes: json.length,
        results: rows,
      },
      null,
      2,
    ) + "\n",
  );
  log(
    `footprint: RSS ${fp.rssMB} MB (anonymous ${fp.rssAnonMB} MB after a full GC, ${fp.rssAnonAfterLastResortGcMB} MB after a last-resort GC; V8 heap ${fp.heapUsedMB} MB used of ${fp.heapTotalMB} MB), LMDB ${fp.lmdbFileMB} MB, bitmap cache ${fp.bitmapCacheMB} MB; results in ${file}`,
  );
  store.close();
  work.cleanup();
  return rows.some((r) => r.state !== "completed") ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exitCode = 1;
  },
);
