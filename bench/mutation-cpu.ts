/**
 * @module bench/mutation-cpu
 * `npm run build && node dist/bench/mutation-cpu.js [--data bench/tmp/100k] [--only edit|resolve] [--runs 8]`
 *
 * CPU time of issue #28's engine calls on a bench:peer dataset, without PostgreSQL: the
 * edit and resolve rows of bench/workloads/mutations.ts, each set up untimed, then the
 * Store call timed in CPU time (user + system) and wall time; min and median of the
 * runs. On a shared machine the CPU minimum is the figure to compare between builds
 * (wall time includes waiting for other processes and the fsync). Also the fsync floor:
 * a one-key durable LMDB commit next to the store (same disk). BENCH_EACH=1 prints each
 * iteration (the first few are slower: V8 and the caches warm up); --trace-puts counts
 * the last run's puts per table; --no-sync opens the store without fsync.
 */
import { parseArgs } from "node:util";
import { loadavg } from "node:os";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { open } from "lmdb";
import { openStore } from "../src/index.js";
import { internals } from "../src/engine/internal.js";
import { TABLE_NAMES } from "../src/engine/storage/tables.js";
import { pack } from "msgpackr";
import { readManifest } from "../tools/generate/manifest.js";
import { workingCopy } from "./dataset.js";
import { engineMutations, type MutationCast, type MutationKind } from "./workloads/mutations.js";

const { values } = parseArgs({
  options: {
    data: { type: "string", default: join("bench", "tmp", "100k") },
    only: { type: "string" },
    runs: { type: "string", default: "8" },
    "no-sync": { type: "boolean", default: false },
    "trace-puts": { type: "boolean", default: false },
  },
});
const RUNS = Number(values.runs);
const log = (line: string) => process.stderr.write(line + "\n");

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
/** Bytes this process caused to be written to storage (Linux /proc/self/io). */
const writtenBytes = () => Number(/write_bytes: (\d+)/.exec(readFileSync("/proc/self/io", "utf8"))?.[1] ?? "NaN");
const stats = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `min ${s[0]!.toFixed(2)} median ${s[Math.floor(s.length / 2)]!.toFixed(2)}`;
};

function fsyncFloor(dir: string): void {
  const env = open({ path: join(dir, "fsync-probe"), noSubdir: false, compression: false });
  const wall: number[] = [];
  const bytes: number[] = [];
  for (let i = 0; i < 30; i++) {
    const b0 = writtenBytes();
    const t0 = performance.now();
    env.transactionSync(() => env.putSync(1, i));
    wall.push(performance.now() - t0);
    bytes.push((writtenBytes() - b0) / 1024);
  }
  env.close();
  log(
    `fsync floor (one-key durable LMDB commit, 30 runs): wall ms ${stats(wall.slice(5))}, KiB written ${stats(bytes.slice(5))}`,
  );
}

async function main(): Promise<void> {
  const manifest = readManifest(values.data);
  const work = workingCopy(values.data);
  log(
    `load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" / ")}`,
  );
  fsyncFloor(work.dir);
  const store = openStore(work.dir, { noSync: values["no-sync"] });
  const s = manifest.subjects;
  const nameOf = (id: number) => ({ id, name: store.getUser(id)!.fullName });
  const cast: MutationCast = {
    actor: s.main,
    admin: manifest.ownerId,
    topicSender: s.sender,
    mentionedBefore: nameOf(s.dmPartner),
    mentionedAfter: nameOf(s.backlog),
    privateMembers: [s.main, s.dmPartner],
    losingUser: s.backlog,
    topicPolicies: [
      { userId: s.main, policy: 3 },
      { userId: s.backlog, policy: 1 },
      { userId: s.dmPartner, policy: 2 },
    ],
  };
  const ours = engineMutations(store, manifest, cast);
  // --trace-puts: per table, puts and value bytes during the timed calls (msgpack sizes estimated).
  const puts = new Map<string, { n: number; bytes: number }>();
  let tracing = false;
  if (values["trace-puts"]) {
    const tables = internals(store).tables as unknown as Record<string, { putSync: (...a: unknown[]) => unknown }>;
    for (const name of TABLE_NAMES) {
      const db = tables[name]!;
      const original = db.putSync.bind(db);
      db.putSync = (k: unknown, v: unknown, ...rest: unknown[]) => {
        if (tracing) {
          const t = puts.get(name) ?? { n: 0, bytes: 0 };
          t.n++;
          t.bytes += v instanceof Uint8Array ? v.length : v === null || v === undefined ? 0 : pack(v).length;
          puts.set(name, t);
        }
        return original(k, v, ...rest);
      };
    }
  }
  const kinds: MutationKind[] = (["edit", "resolve"] as const).filter((k) => !values.only || k === values.only);
  for (const kind of kinds) {
    const cpu: number[] = [];
    const sys: number[] = [];
    const bytes: number[] = [];
    const wall: number[] = [];
    for (let i = 0; i <= RUNS; i++) {
      await ours.setup(kind, i);
      const s0 = process.cpuUsage().system;
      const b0 = writtenBytes();
      const c0 = cpuMs();
      tracing = i === RUNS;
      const t0 = performance.now();
      await ours.run(kind, i);
      tracing = false;
      const t1 = performance.now();
      const c1 = cpuMs();
      if (process.env["BENCH_EACH"]) log(`  #${i}: cpu ${(c1 - c0).toFixed(1)} ms, wall ${(t1 - t0).toFixed(1)} ms`);
      if (i > 0) {
        cpu.push(c1 - c0);
        sys.push((process.cpuUsage().system - s0) / 1000);
        bytes.push((writtenBytes() - b0) / 1024);
        wall.push(t1 - t0);
      }
    }
    for (const [name, t] of puts) log(`  last run: ${name} ${t.n} puts, ${(t.bytes / 1024).toFixed(1)} KiB`);
    puts.clear();
    log(
      `${kind}: cpu ms ${stats(cpu)} (system ${stats(sys)}); wall ms ${stats(wall)}; KiB written ${stats(bytes)} (${RUNS} runs after a warm-up)`,
    );
  }
  log(
    `load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" / ")}`,
  );
  store.close();
  work.cleanup();
}

await main();
