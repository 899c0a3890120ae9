/**
 * @module bench/read-path
 * `node dist/bench/read-path.js [--scale 1m] [--data DIR] [--only REGEX] [--budget MS]`:
 * the read workloads of bench/workloads/engine.ts timed three ways with the peer run's
 * loop (bench/harness.ts): records (embedder API), IDs+flags only, and the server path
 * (ready message JSON). For quick before/after comparisons of read-path changes without
 * the PostgreSQL peer; workloads that change state are left out.
 */
import { parseArgs } from "node:util";
import { chooseDataset, ensureDataset, workingCopy } from "./dataset.js";
import { measure } from "./harness.js";
import { openStore } from "../src/engine/index.js";
import { engineWorkloads } from "./workloads/engine.js";

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { scale: { type: "string" }, data: { type: "string" }, only: { type: "string" }, budget: { type: "string" } }, strict: true });
  const choice = chooseDataset(values.scale, values.data, "100k");
  const manifest = await ensureDataset(choice, false, (line) => process.stderr.write(line + "\n"));
  const work = workingCopy(choice.dir);
  const store = openStore(work.dir);
  const only = values.only ? new RegExp(values.only) : null;
  const budgetMs = Number(values.budget ?? 2000);
  const ms = (t: { medianMs: number; minMs: number } | null) => (t ? `${t.medianMs.toFixed(4)} (min ${t.minMs.toFixed(4)})` : "");
  try {
    for (const w of engineWorkloads(store, manifest)) {
      if (w.reset || w.appends || (only && !only.test(w.name))) continue;
      const records = await measure(() => (w.timed ? w.timed() : w.run()), { budgetMs, maxIterations: 500 });
      const window = w.window ? await measure(() => w.window!(), { budgetMs, maxIterations: 500 }) : null;
      const serve = w.serve ? await measure(() => w.serve!(), { budgetMs, maxIterations: 500 }) : null;
      console.log(`${w.name.padEnd(40)} records ${ms(records)}  ids+flags ${ms(window)}  server ${ms(serve)}  (ms, median (min))`);
    }
  } finally {
    store.close();
    work.cleanup();
  }
}

main().catch((error: unknown) => {
  console.error(`read-path: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
  process.exitCode = 1;
});
