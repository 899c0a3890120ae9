/**
 * @module bench/gc-window
 * Which GC pauses fell inside a timed window (perf_hooks "gc" entries), to tell a slow
 * iteration that paid for a scavenge or a mark-compact from one whose own work was slow.
 * Entries arrive asynchronously: ask after a turn of the event loop.
 */
import { PerformanceObserver, type PerformanceEntry } from "node:perf_hooks";

const KINDS: Record<number, string> = { 1: "scavenge", 2: "mark-compact", 4: "incremental", 8: "weak-callbacks" };

export interface GcWindow {
  /** The pauses overlapping [from, to) (performance.now() times), as "scavenge 5.2 ms" each. */
  pausesIn(from: number, to: number): string[];
  stop(): void;
}

export function watchGc(): GcWindow {
  const entries: PerformanceEntry[] = [];
  const observer = new PerformanceObserver((list) => {
    entries.push(...list.getEntries());
    // Only the recent ones are asked for.
    if (entries.length > 1000) entries.splice(0, entries.length - 1000);
  });
  observer.observe({ entryTypes: ["gc"] });
  return {
    pausesIn(from, to) {
      return entries
        .filter((e) => e.startTime + e.duration > from && e.startTime < to)
        .map((e) => {
          const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0;
          return `${KINDS[kind] ?? `kind ${kind}`} ${e.duration.toFixed(1)} ms`;
        });
    },
    stop() {
      observer.disconnect();
    },
  };
}
