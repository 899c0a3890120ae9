/**
 * @module bench/peer/mutation-harness
 * Runs issue #28's rows (bench/workloads/mutations.ts, bench/peer/mutations.ts): per
 * iteration, the same state is set up on both sides untimed, the operation is timed on
 * the engine and then on PostgreSQL, PostgreSQL's search index catches up (timed apart:
 * Zulip does it after the commit, in process_fts_updates), and every narrow the
 * operation touches is compared ID for ID. The first WARM_UPS iterations are warm-ups on
 * both sides (untimed), and the store warms its send path first as `parley serve` does
 * at start: a server answers PATCH warm, and a cold first resolve costs ~3x a warm one
 * (V8 recompiles the record encoder once edit history appears), which with five timed
 * iterations decided the median.
 *
 * Loop hold: a synchronous engine call holds the event loop for its whole duration, an
 * asynchronous one (PATCH's updateMessageAsync, delete_topic) for its longest turn; a
 * loop probe runs across the call and two turns after it, so work the store defers past
 * the call (after-commit callbacks) counts too.
 *
 * Each iteration's line also says where the engine's time went (bench/write-anatomy):
 * CPU, the LMDB commits' wall time (fsync), and GC pauses inside the call.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import type pg from "pg";
import { warmUpWrites, type Store } from "../../src/engine/index.js";
import { renderMarkdown } from "../../src/markdown/index.js";
import type { Manifest } from "../../tools/generate/manifest.js";
import { compareIds, summarize, type Timing } from "../harness.js";
import { MUTATION_ROWS, engineMutations, type CheckValues, type MutationKind } from "../workloads/mutations.js";
import { chooseCast, peerMutations } from "./mutations.js";
import { formatAnatomy, watchWrites } from "../write-anatomy.js";

/** Timed iterations after the warm-ups (a move sets up 5,000 messages on each side per iteration). */
export const MUTATION_ITERATIONS: Record<MutationKind, number> = { edit: 20, move: 3, resolve: 10, deleteTopic: 5 };
/** Untimed iterations before the timed ones, on both sides (the first runs Zulip's move SQL as written). */
export const WARM_UPS = 2;
export const LOOP_BUDGET_MS = 50;
const TARGET = 20;

const DESCRIPTIONS: Record<MutationKind, string> = {
  edit: "PATCH content of a fresh message in the 10,000-subscriber channel, one mention replaced by another",
  move: "PATCH stream_id (change_all) of a 5,000-message topic from the 10,000-subscriber channel to a private channel with protected history (50 subscribers)",
  resolve:
    "PATCH topic to '✔ name' (change_all) of a 1,000-message topic in the 10,000-subscriber channel, with the resolve notice",
  deleteTopic: "POST delete_topic of a 1,000-message topic in the 10,000-subscriber channel, repeated until complete",
};

export interface MutationResult {
  readonly name: string;
  readonly description: string;
  readonly ours: Timing;
  readonly peer: Timing;
  readonly ratio: number;
  readonly target: string;
  readonly targetMet: boolean;
  /** The longest the engine held the event loop, over every timed iteration. */
  readonly oursLoopMaxMs: number;
  /** Synchronous store calls per operation (delete_topic answers complete after several). */
  readonly oursCallsPerOp: number;
  readonly loopWithinBudget: boolean;
  /** PostgreSQL's process_fts_updates after the request (not in the ratio). */
  readonly peerFts: Timing;
  readonly peerFtsRows: number;
  readonly checks: readonly string[];
  /**
   * Moves: the losing users' UserMessage DELETE as Zulip writes it (the warm-up, and that
   * whole request) and with its IDs inlined (the timed runs' median).
   */
  readonly losingRowsDelete: {
    readonly asWrittenMs: number;
    readonly asWrittenRequestMs: number;
    readonly inlinedMedianMs: number;
  } | null;
  readonly idsMatch: boolean;
  readonly mismatch: string | null;
}

function compareChecks(ours: CheckValues, peer: CheckValues): string | null {
  const problems: string[] = [];
  for (const [name, a] of Object.entries(ours)) {
    const b = peer[name] ?? [];
    const differs =
      typeof a[0] === "string" || typeof b[0] === "string"
        ? JSON.stringify(a) === JSON.stringify(b)
          ? null
          : `ours ${JSON.stringify(a)}, peer ${JSON.stringify(b)}`
        : compareIds(a as number[], b as number[]);
    if (differs) problems.push(`${name}: ${differs}`);
  }
  return problems.length === 0 ? null : problems.join("; ");
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The longest the event loop went without turning while it ran: a 1 ms interval's
 * largest gap and perf_hooks' loop-delay maximum, whichever is larger.
 */
function probeLoop(): { stop(): number } {
  let maxGap = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
  }, 1);
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  return {
    stop() {
      clearInterval(timer);
      delay.disable();
      return Math.max(maxGap, performance.now() - last, delay.max / 1e6);
    },
  };
}

export interface MutationRunOptions {
  readonly store: Store;
  readonly db: pg.Client;
  readonly manifest: Manifest;
  readonly selected: (name: string) => boolean;
  readonly log: (line: string) => void;
  /** Timed iterations per row instead of MUTATION_ITERATIONS. */
  readonly iterations?: number;
}

export async function runMutations(options: MutationRunOptions): Promise<MutationResult[]> {
  const { store, db, manifest: m, log } = options;
  const kinds = (Object.keys(MUTATION_ROWS) as MutationKind[]).filter((k) => options.selected(MUTATION_ROWS[k]));
  if (kinds.length === 0) return [];
  const cast = await chooseCast(db, m);
  const ours = engineMutations(store, m, cast);
  // As `parley serve` does before it listens: the send path, then the mutation writes on a scratch store.
  store.warmUp();
  const warm = await warmUpWrites({ renderer: renderMarkdown });
  if (warm.error !== null && warm.error !== undefined) log(`write warm-up failed: ${String(warm.error)}`);
  const bot = store.findUserByEmail(m.realmId, "notification-bot@zulip.com");
  const botId = bot?.id ?? Math.max(...store.realmUsers(m.realmId).map((u) => u.id)) + 1;
  const peer = await peerMutations(db, m, cast, ours.privateChannelId, botId);
  const results: MutationResult[] = [];
  const anatomy = watchWrites(store);

  for (const kind of kinds) {
    const name = MUTATION_ROWS[kind];
    const timed = options.iterations ?? MUTATION_ITERATIONS[kind];
    log(`${name} (${WARM_UPS} warm-ups + ${timed} iterations)…`);
    const oursMs: number[] = [];
    const peerMs: number[] = [];
    const ftsMs: number[] = [];
    let ftsRows = 0;
    let loopMax = 0;
    let calls = 0;
    let mismatch: string | null = null;
    let checks: string[] = [];
    const asWrittenDeleteMs: number[] = [];
    const inlinedDeleteMs: number[] = [];
    let asWrittenRequestMs = 0;
    for (let i = 0; i < WARM_UPS + timed; i++) {
      await peer.setup(kind, i, await ours.setup(kind, i));

      const probe = probeLoop();
      const window = anatomy.begin();
      const t0 = performance.now();
      const run = await ours.run(kind, i);
      const oursElapsed = performance.now() - t0;
      const spent = window.end();
      await turn();
      await turn();
      const hold = Math.max(...run.callsMs, probe.stop());

      // The warm-up runs Zulip's statements exactly as written; see PeerMutations.run.
      const t1 = performance.now();
      const { losingRowsDeleteMs } = await peer.run(kind, i, i === 0);
      const peerElapsed = performance.now() - t1;
      if (losingRowsDeleteMs !== null) (i === 0 ? asWrittenDeleteMs : inlinedDeleteMs).push(losingRowsDeleteMs);
      if (i === 0) asWrittenRequestMs = peerElapsed;
      const t2 = performance.now();
      const indexed = await peer.ftsCatchUp();
      const ftsElapsed = performance.now() - t2;

      const b = await peer.check(kind, i);
      checks = Object.keys(b);
      const differs = compareChecks(ours.check(kind, i), b);
      if (differs && mismatch === null) mismatch = `iteration ${i}: ${differs}`;
      if (i >= WARM_UPS) {
        oursMs.push(oursElapsed);
        peerMs.push(peerElapsed);
        ftsMs.push(ftsElapsed);
        ftsRows = indexed;
        loopMax = Math.max(loopMax, hold);
        calls = run.calls;
      }
      log(
        `  ${i < WARM_UPS ? "warm-up" : `#${i - WARM_UPS + 1}`}: ours ${oursElapsed.toFixed(1)} ms (${formatAnatomy(spent.read())}; loop ${hold.toFixed(1)} ms, ${run.calls} call(s)), peer ${peerElapsed.toFixed(1)} ms + FTS ${ftsElapsed.toFixed(1)} ms${differs ? "  !!! MISMATCH" : ""}`,
      );
    }
    const oursT = summarize(oursMs);
    const peerT = summarize(peerMs);
    const ratio = peerT.medianMs / oursT.medianMs;
    if (mismatch) log(`  !!! MISMATCH in ${name}: ${mismatch}`);
    results.push({
      name,
      description: DESCRIPTIONS[kind],
      ours: oursT,
      peer: peerT,
      ratio,
      target: `≥ ${TARGET}×`,
      targetMet: ratio >= TARGET,
      oursLoopMaxMs: loopMax,
      oursCallsPerOp: calls,
      loopWithinBudget: loopMax <= LOOP_BUDGET_MS,
      peerFts: summarize(ftsMs),
      peerFtsRows: ftsRows,
      checks,
      losingRowsDelete:
        asWrittenDeleteMs.length > 0
          ? {
              asWrittenMs: asWrittenDeleteMs[0]!,
              asWrittenRequestMs,
              inlinedMedianMs: summarize(inlinedDeleteMs).medianMs,
            }
          : null,
      idsMatch: mismatch === null,
      mismatch,
    });
    log(
      `  ours ${oursT.medianMs.toFixed(2)} ms, peer ${peerT.medianMs.toFixed(2)} ms, ${ratio.toFixed(1)}×, loop max ${loopMax.toFixed(1)} ms`,
    );
  }
  anatomy.stop();
  return results;
}

const fmt = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(1) : ms.toFixed(2));
const yes = (v: boolean, no = "**no**") => (v ? "yes" : no);

export function mutationTable(results: readonly MutationResult[]): string {
  const lines = [
    "| operation | iterations | parley median ms (p90) | PostgreSQL median ms (p90) | PG/parley | target | met | parley loop hold max ms | ≤ 50 ms | PG search catch-up ms (rows) | same IDs |",
    "|---|---:|---:|---:|---:|---|---|---:|---|---:|---|",
  ];
  for (const r of results)
    lines.push(
      `| ${r.name.replace(/^mutate: /, "")} | ${r.peer.iterations} | ${fmt(r.ours.medianMs)} (${fmt(r.ours.p90Ms)}) | ${fmt(r.peer.medianMs)} (${fmt(r.peer.p90Ms)}) | ${r.ratio.toFixed(1)}× | ${r.target} | ${yes(r.targetMet)} | ${fmt(r.oursLoopMaxMs)}${r.oursCallsPerOp > 1 ? ` (${r.oursCallsPerOp} calls)` : ""} | ${yes(r.loopWithinBudget)} | ${fmt(r.peerFts.medianMs)} (${r.peerFtsRows}) | ${yes(r.idsMatch, "**NO**")} |`,
    );
  return lines.join("\n");
}
