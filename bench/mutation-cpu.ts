/**
 * @module bench/mutation-cpu
 * `npm run build && node dist/bench/mutation-cpu.js [--data bench/tmp/100k] [--runs 8]`
 * `[--only edit|resolve|move|back|deleteTopic|deleteMessage|sendAll|sendTopic|sendGroup]`
 * `[--stage-from N] [--warm-up N] [--profile DIR [--profile-run]]`
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
 * deleteTopic (bench:peer's delete row) and deleteMessage (one fresh message of the
 * 10,000-subscriber channel, bench:worst's input) run only when named, as do sendAll, sendTopic
 * and sendGroup (bench:worst's @**all**, @**topic** and 10,000-member group mention sends). "longest turn cpu" is the
 * most CPU time between two turns of the event loop (a setImmediate ticker): what the engine itself held
 * the loop for, GC included; its wall time adds waiting for a core and the fsync. "longest commit" is the
 * wall time from a write's body to its return (the bitmap chunks, the commit and its fsync); "gc pause"
 * perf_hooks' longest. BENCH_WRITES=1 prints every write, long turn and GC pause.
 * "main thread" is the longest turn's CPU time of the loop's own thread (Linux schedstat), without V8's
 * worker threads: in a fresh process they recompile the move's functions during its first writes (up to
 * 50-80 ms of CPU beside a 40 ms turn on a loaded 2-core machine), which the process CPU figure counts as
 * if the loop held it; on a machine short of cores they still compete with it. Neither counts a GC pause
 * the main thread spends waiting for GC helpers (see "gc pause"). BENCH_THREADS=1 prints each thread's CPU
 * time in every write over 20 ms of CPU.
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
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { PerformanceObserver } from "node:perf_hooks";
import { open } from "lmdb";
import { openStore } from "../src/index.js";
import { warmUpWrites } from "../src/engine/index.js";
import { renderMarkdown } from "../src/markdown/index.js";
import { internals } from "../src/engine/internal.js";
import { TABLE_NAMES } from "../src/engine/storage/tables.js";
import { MOVE_STAGING } from "../src/engine/actions/move-staging.js";
import { editEmailsWritten } from "../src/engine/actions/missed-message-emails.js";
import { probeLoop } from "./loop-probe.js";
import { pack } from "msgpackr";
import { readManifest } from "../tools/generate/manifest.js";
import { workingCopy } from "./dataset.js";
import { engineMutations, type MutationCast, type MutationKind } from "./workloads/mutations.js";

/**
 * Per turn of the event loop while an operation runs (a setImmediate ticker, one tick a
 * turn): the CPU and wall time between ticks. A turn's CPU time is what the engine itself
 * held the loop for; its wall time adds waiting for a core and the fsync.
 */
function probeTurns(): { stop(): { cpuMs: number; wallMs: number; threadMs: number; turns: number } } {
  let running = true;
  let turns = 0;
  let maxCpu = 0;
  let maxWall = 0;
  let maxThread = 0;
  let lastCpu = cpuMs();
  let lastWall = performance.now();
  let lastThread = threadCpuMs();
  const tick = () => {
    const [c, w, t] = [cpuMs(), performance.now(), threadCpuMs()];
    maxThread = Math.max(maxThread, t - lastThread);
    lastThread = t;
    if (process.env["BENCH_WRITES"] && w - lastWall > 10)
      log(`    turn cpu ${(c - lastCpu).toFixed(1)} wall ${(w - lastWall).toFixed(1)} at ${w.toFixed(0)}`);
    maxCpu = Math.max(maxCpu, c - lastCpu);
    maxWall = Math.max(maxWall, w - lastWall);
    [lastCpu, lastWall] = [c, w];
    turns++;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    stop() {
      running = false;
      tick();
      return { cpuMs: maxCpu, wallMs: maxWall, threadMs: maxThread, turns };
    },
  };
}

/** The longest GC pause (perf_hooks "gc" entries) while observed. */
function probeGc(): { stop(): number } {
  let max = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      max = Math.max(max, entry.duration);
      if (process.env["BENCH_WRITES"] && entry.duration > 3)
        log(`    gc ${entry.duration.toFixed(1)} ms at ${(entry.startTime + entry.duration).toFixed(0)}`);
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  return {
    stop() {
      for (const entry of observer.takeRecords()) max = Math.max(max, entry.duration);
      observer.disconnect();
      return max;
    },
  };
}

const { values } = parseArgs({
  options: {
    data: { type: "string", default: join("bench", "tmp", "100k") },
    only: { type: "string" },
    runs: { type: "string", default: "8" },
    "no-sync": { type: "boolean", default: false },
    "trace-puts": { type: "boolean", default: false },
    "stage-from": { type: "string" },
    /** Runs `parley serve`'s write warm-up (engine/warm-up-writes) with this many rounds before the first run. */
    "warm-up": { type: "string" },
    /** Writes a CPU profile of each run's writes there (node:inspector): what the loop's longest hold spends. */
    profile: { type: "string" },
    /** With --profile: one profile of each whole run instead (its longest turns: /tmp/turns.mjs-style tools). */
    "profile-run": { type: "boolean", default: false },
  },
});
const RUNS = Number(values.runs);
if (values["stage-from"] !== undefined) MOVE_STAGING.minMessages = Number(values["stage-from"]);
const log = (line: string) => process.stderr.write(line + "\n");

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
/** Every thread's name and CPU milliseconds (schedstat), by thread ID: which threads a write kept busy. */
const threadTimes = () => {
  const out = new Map<string, { name: string; ms: number }>();
  for (const id of readdirSync("/proc/self/task")) {
    try {
      const ms = Number(readFileSync(`/proc/self/task/${id}/schedstat`, "utf8").split(" ")[0]) / 1e6;
      out.set(id, { name: readFileSync(`/proc/self/task/${id}/comm`, "utf8").trim(), ms });
    } catch {
      // The thread ended.
    }
  }
  return out;
};
/**
 * The main thread's own CPU time (Linux schedstat, nanoseconds): process.cpuUsage also
 * counts V8's worker threads (concurrent TurboFan compiles, parallel and concurrent GC),
 * which a fresh process keeps busy beside the loop. NaN where /proc/thread-self is missing.
 */
const threadCpuMs = () => {
  try {
    return Number(readFileSync("/proc/thread-self/schedstat", "utf8").split(" ")[0]) / 1e6;
  } catch {
    return NaN;
  }
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
  if (values["warm-up"] !== undefined) {
    const c0 = cpuMs();
    const warm = await warmUpWrites({ renderer: renderMarkdown, rounds: Number(values["warm-up"]) });
    log(`write warm-up: ${warm.rounds} rounds, ${warm.ms.toFixed(0)} ms wall, ${(cpuMs() - c0).toFixed(0)} ms cpu`);
  }
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
  // deleteMessage: DELETE /messages/{id} of a fresh message in the 10,000-subscriber channel (bench:worst's input).
  // back: the moved topic moved back to the big channel (bench:worst's undo; its rows were withdrawn before).
  // sendAll, sendTopic, sendGroup: bench:worst's POST /messages inputs (bench/worst-inputs-sends), by the owner.
  type Send = "sendAll" | "sendTopic" | "sendGroup";
  type Kind = MutationKind | "deleteMessage" | "back" | Send;
  const sends: readonly Send[] = ["sendAll", "sendTopic", "sendGroup"];
  const kinds: Kind[] = (["edit", "resolve", "move", "back", "deleteTopic", "deleteMessage", ...sends] as const).filter(
    (k) =>
      values.only
        ? k === values.only
        : k !== "deleteTopic" && k !== "deleteMessage" && k !== "back" && !(sends as readonly string[]).includes(k),
  );
  let mentionGroup: string | null = null;
  let doomed = 0;
  let backIds: number[] = [];
  const setup = async (kind: Kind, i: number): Promise<void> => {
    if (kind === "back") {
      backIds = await ours.setup("move", i);
      await ours.run("move", i);
      return;
    }
    if (kind === "sendGroup" && mentionGroup === null) {
      const users = Math.min(10_000, manifest.scale.users);
      const members = Array.from({ length: users }, (_, n) => 1 + n);
      mentionGroup = store.createGroup(manifest.ownerId, { name: "bench mention group", members }).name;
    }
    if (kind === "sendAll" || kind === "sendTopic" || kind === "sendGroup") return;
    if (kind !== "deleteMessage") return void (await ours.setup(kind, i));
    doomed = store.sendMessage({
      senderId: manifest.ownerId,
      to: { type: "channel", channel: manifest.generalChannelId, topic: "bench deletes" },
      content: `message ${i} to delete`,
    }).id;
  };
  const run = async (kind: Kind, i: number): Promise<void> => {
    const general = manifest.generalChannelId;
    const send = (topic: string, content: string) =>
      store.sendMessageGrouped({
        senderId: manifest.ownerId,
        to: { type: "channel", channel: general, topic },
        content,
      });
    if (kind === "sendAll" || kind === "sendTopic" || kind === "sendGroup") {
      if (kind === "sendAll") await send("bench send all", `@**all** look at this ${i}`);
      else if (kind === "sendTopic") await send(manifest.bigTopic, `@**topic** look at this ${i}`);
      else await send("bench send group", `@*${mentionGroup}* look at this ${i}`);
      // The later writes a send leaves (email chunks, deferred bitmap chunks) are part of what it costs.
      const state = internals(store);
      await editEmailsWritten(state);
      while (state.bitmaps.hasDeferred) await new Promise((resolve) => setImmediate(resolve));
    } else if (kind === "deleteMessage") await store.deleteMessage(manifest.ownerId, doomed);
    else if (kind === "back")
      await store.updateMessageAsync(cast.actor, backIds[backIds.length - 1]!, {
        channelId: manifest.generalChannelId,
        propagateMode: "change_all",
      });
    else await ours.run(kind, i);
  };
  for (const kind of kinds) {
    const cpu: number[] = [];
    const sys: number[] = [];
    const bytes: number[] = [];
    const dirtied: number[] = [];
    const wall: number[] = [];
    const held: number[] = [];
    const writeCpu: number[] = [];
    const commitWall: number[] = [];
    const turnCpu: number[] = [];
    const turnThread: number[] = [];
    const turnWall: number[] = [];
    const gcMax: number[] = [];
    let profiled = 0;
    const state = internals(store);
    const write = state.write.bind(state);
    for (let i = 0; i <= RUNS; i++) {
      await setup(kind, i);
      const s0 = process.cpuUsage().system;
      const io0 = ioCounters();
      const c0 = cpuMs();
      tracing = i === RUNS;
      // The CPU time of the operation's longest write (a staged move's one write holds the loop longest).
      let longestWrite = 0;
      let longestCommit = 0;
      const profiler = values.profile === undefined ? null : new Session();
      const perWrite = !values["profile-run"];
      const saveProfile = () =>
        profiler?.post("Profiler.stop", (error, result) => {
          if (error) return;
          mkdirSync(values.profile!, { recursive: true });
          writeFileSync(join(values.profile!, `${kind}-${i}-${++profiled}.cpuprofile`), JSON.stringify(result.profile));
        });
      state.write = (fn) => {
        if (perWrite) profiler?.post("Profiler.start");
        const threads0 = process.env["BENCH_THREADS"] ? threadTimes() : null;
        const before = cpuMs();
        let bodyEnd = 0;
        const started = performance.now();
        try {
          return write((ctx) => {
            try {
              return fn(ctx);
            } finally {
              bodyEnd = performance.now();
            }
          });
        } finally {
          // From the body's end to the write's return: the change log, the bitmap chunks, the commit and its fsync.
          if (process.env["BENCH_WRITES"])
            log(
              `    write cpu ${(cpuMs() - before).toFixed(1)} wall ${(performance.now() - started).toFixed(1)} ` +
                `body ${(bodyEnd - started).toFixed(1)} commit ${(performance.now() - bodyEnd).toFixed(1)} ` +
                `at ${performance.now().toFixed(0)}`,
            );
          if (threads0 !== null && cpuMs() - before > 20) {
            const threads1 = threadTimes();
            const spent = [...threads1]
              .map(([id, t]) => [id, t.ms - (threads0.get(id)?.ms ?? 0), t.name] as const)
              .filter(([, ms]) => ms > 1)
              .sort((a, b) => b[1] - a[1]);
            log(`    write threads: ${spent.map(([id, ms, name]) => `${name}/${id} ${ms.toFixed(1)}`).join(", ")}`);
          }
          if (bodyEnd > 0) longestCommit = Math.max(longestCommit, performance.now() - Math.max(bodyEnd, started));
          longestWrite = Math.max(longestWrite, cpuMs() - before);
          if (perWrite) saveProfile();
        }
      };
      if (profiler) {
        profiler.connect();
        profiler.post("Profiler.enable");
        profiler.post("Profiler.setSamplingInterval", { interval: 250 });
        if (!perWrite) profiler.post("Profiler.start");
      }
      const probe = probeLoop();
      const turns = probeTurns();
      const gc = probeGc();
      const t0 = performance.now();
      await run(kind, i);
      tracing = false;
      const t1 = performance.now();
      const c1 = cpuMs();
      const loop = probe.stop();
      const turn = turns.stop();
      const gcPause = gc.stop();
      if (!perWrite) saveProfile();
      state.write = write;
      profiler?.disconnect();
      const io1 = ioCounters();
      if (process.env["BENCH_EACH"])
        log(
          `  #${i}: cpu ${(c1 - c0).toFixed(1)} ms, wall ${(t1 - t0).toFixed(1)} ms, loop held ` +
            `${Math.max(loop.longestBlockMs, loop.loopDelayMaxMs).toFixed(1)} ms, longest turn cpu ` +
            `${turn.cpuMs.toFixed(1)} / main thread ${turn.threadMs.toFixed(1)} / wall ${turn.wallMs.toFixed(1)} ms ` +
            `(${turn.turns} turns), longest write cpu ` +
            `${longestWrite.toFixed(1)} ms, commit ${longestCommit.toFixed(1)} ms, gc pause max ${gcPause.toFixed(1)} ms`,
        );
      if (i > 0) {
        cpu.push(c1 - c0);
        sys.push((process.cpuUsage().system - s0) / 1000);
        bytes.push((io1.wchar - io0.wchar) / 1024);
        dirtied.push((io1.dirtied - io0.dirtied) / 1024);
        wall.push(t1 - t0);
        held.push(Math.max(loop.longestBlockMs, loop.loopDelayMaxMs));
        writeCpu.push(longestWrite);
        commitWall.push(longestCommit);
        turnCpu.push(turn.cpuMs);
        turnThread.push(turn.threadMs);
        turnWall.push(turn.wallMs);
        gcMax.push(gcPause);
      }
    }
    for (const [name, t] of puts) {
      log(`  last run: ${name} ${t.n} puts, ${(t.bytes / 1024).toFixed(1)} KiB, ${t.removes} removes`);
      for (const k of t.keys) log(`    ${k}`);
    }
    puts.clear();
    log(
      `${kind}: cpu ms ${stats(cpu)} (system ${stats(sys)}); wall ms ${stats(wall)}; loop held ms ${stats(held)}; ` +
        `longest write cpu ms ${stats(writeCpu)}; longest commit (after the body, with the fsync) wall ms ` +
        `${stats(commitWall)}; longest turn cpu ms ${stats(turnCpu)} (main thread ${stats(turnThread)}, wall ${stats(turnWall)}); ` +
        `longest gc pause ms ${stats(gcMax)}; ` +
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
