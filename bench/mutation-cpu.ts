/**
 * @module bench/mutation-cpu
 * `npm run build && node dist/bench/mutation-cpu.js [--data bench/tmp/100k] [--only edit|resolve|move] [--runs 8]`
 * `[--stage-from N] [--profile DIR]`
 *
 * CPU time of issue #28's engine calls on a bench:peer dataset, without PostgreSQL: the
 * edit, resolve and move rows of bench/workloads/mutations.ts, each set up untimed, then
 * the Store call timed in CPU time (user + system) and wall time, and the longest the
 * event loop was held meanwhile (bench/loop-probe: PATCH stages a large move over several
 * turns, actions/move-staging; --stage-from N sets MOVE_STAGING.minMessages, a huge N
 * writes every move at once); min and median of the runs. On a shared machine the CPU
 * minimum is the figure to compare between builds (wall time includes waiting for other
 * processes and the fsync). Also the fsync floor: a one-key durable LMDB commit next to
 * the store (same disk). BENCH_EACH=1 prints each
 * iteration (the first few are slower: V8 and the caches warm up); --trace-puts lists
 * the last run's puts and removes by table and key; --no-sync opens the store without fsync.
 * "longest write cpu" is the CPU time of the operation's longest write (a staged move's
 * one write, the longest the loop is held); --profile DIR writes a CPU profile of each write there.
 *
 * Bytes written are the bytes the process passed to write calls (/proc/self/io wchar):
 * LMDB writes each dirty page of a commit with its own pwrite, so this is 4 KiB a page
 * plus its 128-byte meta page. The kernel's write_bytes is no measure of that: on a
 * kernel whose page cache holds a file in large folios (ext4 since Linux 6.16) it
 * counts each folio a write dirties in full, ~2 MB for an edit's 21 pages, while the
 * disk's own counters (/sys/block/.../stat) showed ~100 KiB a commit of the same pages:
 * the 84 KiB and ext4's journal. It is printed as page cache dirtied.
 */
import { parseArgs } from "node:util";
import { loadavg } from "node:os";
import { join } from "node:path";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { open } from "lmdb";
import { openStore } from "../src/index.js";
import { internals } from "../src/engine/internal.js";
import { TABLE_NAMES } from "../src/engine/storage/tables.js";
import { MOVE_STAGING } from "../src/engine/actions/move-staging.js";
import { probeLoop } from "./loop-probe.js";
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
    "stage-from": { type: "string" },
    /** Writes a CPU profile of each run's writes there (node:inspector): what the loop's longest hold spends. */
    profile: { type: "string" },
  },
});
const RUNS = Number(values.runs);
if (values["stage-from"] !== undefined) MOVE_STAGING.minMessages = Number(values["stage-from"]);
const log = (line: string) => process.stderr.write(line + "\n");

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
/** Linux /proc/self/io: bytes passed to write calls (wchar), and page-cache bytes dirtied (write_bytes). */
const ioCounters = () => {
  const io = readFileSync("/proc/self/io", "utf8");
  const field = (name: string) => Number(new RegExp(`${name}: (\\d+)`).exec(io)?.[1] ?? "NaN");
  return { wchar: field("wchar"), dirtied: field("write_bytes") };
};
const stats = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `min ${s[0]!.toFixed(2)} median ${s[Math.floor(s.length / 2)]!.toFixed(2)}`;
};

function fsyncFloor(dir: string): void {
  const env = open({ path: join(dir, "fsync-probe"), noSubdir: false, compression: false });
  const wall: number[] = [];
  const bytes: number[] = [];
  for (let i = 0; i < 30; i++) {
    const b0 = ioCounters().wchar;
    const t0 = performance.now();
    env.transactionSync(() => env.putSync(1, i));
    wall.push(performance.now() - t0);
    bytes.push((ioCounters().wchar - b0) / 1024);
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
  // --trace-puts: per table, puts (with value bytes, msgpack sizes estimated) and removes during the timed calls.
  const puts = new Map<string, { n: number; removes: number; bytes: number; keys: string[] }>();
  let tracing = false;
  if (values["trace-puts"]) {
    type Writes = Record<"putSync" | "removeSync", (...a: unknown[]) => unknown>;
    const tables = internals(store).tables as unknown as Record<string, Writes>;
    const traced = (name: string) => {
      const t = puts.get(name) ?? { n: 0, removes: 0, bytes: 0, keys: [] };
      puts.set(name, t);
      return t;
    };
    for (const name of TABLE_NAMES) {
      const db = tables[name]!;
      const put = db.putSync.bind(db);
      const remove = db.removeSync.bind(db);
      db.putSync = (k: unknown, v: unknown, ...rest: unknown[]) => {
        if (tracing) {
          const t = traced(name);
          const size = v instanceof Uint8Array ? v.length : v === null || v === undefined ? 0 : pack(v).length;
          t.n++;
          t.bytes += size;
          t.keys.push(`${JSON.stringify(k)} (${size} B)`);
        }
        return put(k, v, ...rest);
      };
      db.removeSync = (k: unknown, ...rest: unknown[]) => {
        if (tracing) {
          const t = traced(name);
          t.removes++;
          t.keys.push(`-${JSON.stringify(k)}`);
        }
        return remove(k, ...rest);
      };
    }
  }
  const kinds: MutationKind[] = (["edit", "resolve", "move"] as const).filter((k) => !values.only || k === values.only);
  for (const kind of kinds) {
    const cpu: number[] = [];
    const sys: number[] = [];
    const bytes: number[] = [];
    const dirtied: number[] = [];
    const wall: number[] = [];
    const held: number[] = [];
    const writeCpu: number[] = [];
    let profiled = 0;
    const state = internals(store);
    const write = state.write.bind(state);
    for (let i = 0; i <= RUNS; i++) {
      await ours.setup(kind, i);
      const s0 = process.cpuUsage().system;
      const io0 = ioCounters();
      const c0 = cpuMs();
      tracing = i === RUNS;
      // The CPU time of the operation's longest write (a staged move's one write holds the loop longest).
      let longestWrite = 0;
      const profiler = values.profile === undefined ? null : new Session();
      state.write = (fn) => {
        profiler?.post("Profiler.start");
        const before = cpuMs();
        try {
          return write(fn);
        } finally {
          longestWrite = Math.max(longestWrite, cpuMs() - before);
          profiler?.post("Profiler.stop", (error, result) => {
            if (error) return;
            mkdirSync(values.profile!, { recursive: true });
            writeFileSync(
              join(values.profile!, `${kind}-${i}-${++profiled}.cpuprofile`),
              JSON.stringify(result.profile),
            );
          });
        }
      };
      if (profiler) {
        profiler.connect();
        profiler.post("Profiler.enable");
        profiler.post("Profiler.setSamplingInterval", { interval: 250 });
      }
      const probe = probeLoop();
      const t0 = performance.now();
      await ours.run(kind, i);
      tracing = false;
      const t1 = performance.now();
      const c1 = cpuMs();
      const loop = probe.stop();
      state.write = write;
      profiler?.disconnect();
      const io1 = ioCounters();
      if (process.env["BENCH_EACH"]) log(`  #${i}: cpu ${(c1 - c0).toFixed(1)} ms, wall ${(t1 - t0).toFixed(1)} ms`);
      if (i > 0) {
        cpu.push(c1 - c0);
        sys.push((process.cpuUsage().system - s0) / 1000);
        bytes.push((io1.wchar - io0.wchar) / 1024);
        dirtied.push((io1.dirtied - io0.dirtied) / 1024);
        wall.push(t1 - t0);
        held.push(Math.max(loop.longestBlockMs, loop.loopDelayMaxMs));
        writeCpu.push(longestWrite);
      }
    }
    for (const [name, t] of puts) {
      log(`  last run: ${name} ${t.n} puts, ${(t.bytes / 1024).toFixed(1)} KiB, ${t.removes} removes`);
      for (const k of t.keys) log(`    ${k}`);
    }
    puts.clear();
    log(
      `${kind}: cpu ms ${stats(cpu)} (system ${stats(sys)}); wall ms ${stats(wall)}; loop held ms ${stats(held)}; ` +
        `longest write cpu ms ${stats(writeCpu)}; ` +
        `KiB written ${stats(bytes)}` +
        ` (page cache KiB dirtied ${stats(dirtied)}) (${RUNS} runs after a warm-up)`,
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
