/**
 * @module bench/write-anatomy
 * Where a timed engine call's wall time went, to tell its slow iterations apart: CPU
 * time of the process (all threads: V8's GC helpers count too), GC pauses inside it
 * (bench/gc-window), and the LMDB commits' wall time (env.transactionSync from the
 * callback's return to its own: page writes and the two fdatasyncs of a durable commit),
 * the rest being the write bodies and what runs outside them. Wraps the store's
 * environment while watching; `stop()` puts it back.
 */
import type { Store } from "../src/engine/index.js";
import { internals } from "../src/engine/internal.js";
import { watchGc } from "./gc-window.js";

export interface Anatomy {
  readonly cpuMs: number;
  readonly commitMs: number;
  readonly commits: number;
  readonly gcPauses: readonly string[];
}

export interface AnatomyWatch {
  /** Starts a window; `end()` closes it (GC pauses arrive asynchronously: call `read` after a turn). */
  begin(): { end(): { read(): Anatomy } };
  stop(): void;
}

type TransactionSync = (callback: () => unknown, flags?: number) => unknown;

export function watchWrites(store: Store): AnatomyWatch {
  const env = internals(store).tables.env as unknown as { transactionSync: TransactionSync };
  const original = env.transactionSync;
  let commitMs = 0;
  let commits = 0;
  env.transactionSync = function (this: unknown, callback, flags) {
    let bodyEnd = 0;
    const result = original.call(
      this,
      () => {
        try {
          return callback();
        } finally {
          bodyEnd = performance.now();
        }
      },
      flags,
    );
    if (bodyEnd > 0) {
      commitMs += performance.now() - bodyEnd;
      commits++;
    }
    return result;
  } as TransactionSync;
  const gc = watchGc();
  const cpu = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  return {
    begin() {
      const t0 = performance.now();
      const c0 = cpu();
      const commit0 = commitMs;
      const commits0 = commits;
      return {
        end() {
          const t1 = performance.now();
          const figures = { cpuMs: cpu() - c0, commitMs: commitMs - commit0, commits: commits - commits0 };
          return { read: () => ({ ...figures, gcPauses: gc.pausesIn(t0, t1) }) };
        },
      };
    },
    stop() {
      env.transactionSync = original;
      gc.stop();
    },
  };
}

/** "cpu 5.1 ms, commit 1.2 ms; GC scavenge 4.8 ms" */
export function formatAnatomy(a: Anatomy): string {
  const commit = a.commits > 0 ? `, commit ${a.commitMs.toFixed(1)} ms${a.commits > 1 ? ` (${a.commits})` : ""}` : "";
  return `cpu ${a.cpuMs.toFixed(1)} ms${commit}${a.gcPauses.length > 0 ? `; GC ${a.gcPauses.join(", ")}` : ""}`;
}
