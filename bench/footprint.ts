/**
 * @module bench/footprint
 * Memory and disk per million messages, and open-to-ready time, for the reports.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { type Store } from "../src/engine/index.js";
import { openStore } from "../src/index.js";
import { internals } from "../src/engine/internal.js";

export interface Footprint {
  readonly messages: number;
  readonly rssMB: number;
  /**
   * Linux split of RSS: anonymous memory (heap, native bitmaps) vs file-backed pages (the
   * LMDB map, reclaimable). With --expose-gc, after settledGc: garbage bitmaps freed.
   */
  readonly rssAnonMB: number | null;
  readonly rssFileMB: number | null;
  readonly heapUsedMB: number;
  /** V8's committed heap after the GC (live objects plus free space it keeps). */
  readonly heapTotalMB: number;
  /** Off-heap memory V8 knows of (Buffers, typed arrays, native objects that report it). */
  readonly externalMB: number;
  /** Anonymous RSS as found, before the GC (null when run without --expose-gc, when the figures above are these). */
  readonly rssAnonBeforeGcMB: number | null;
  /**
   * Anonymous RSS after a "last-resort" GC (what V8 does under memory pressure): after
   * an ordinary full GC V8 keeps freed pages pooled and unmaps them later, so the
   * figure above still counts them. Null without --expose-gc.
   */
  readonly rssAnonAfterLastResortGcMB: number | null;
  readonly lmdbFileMB: number;
  readonly bitmapCacheMB: number;
  readonly perMillion: { readonly rssMB: number; readonly lmdbFileMB: number; readonly bitmapCacheMB: number };
}

/** /proc/self/status's RssAnon in MB (null off Linux). */
function rssAnonMB(): number | null {
  try {
    const match = /RssAnon:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
    return match ? Math.round((Number(match[1]) / 1024) * 10) / 10 : null;
  } catch {
    return null;
  }
}

type GcFunction = (options?: { type: string; execution: string; flavor: string }) => void;

/**
 * A full GC whose native frees have happened. A roaring bitmap's memory is freed by
 * its N-API finalizer, which does not run inside the GC that finds it dead but on a
 * later turn of the event loop: measured at 10M right after the mark-channel-read
 * workload, anonymous RSS was 579 MB after gc() and still after one setImmediate, and
 * 162 MB after a second GC that followed a turn. Before this, the reports read RSS
 * synchronously after one gc() and counted such garbage (410-650 MB over nine runs).
 */
export async function settledGc(gc: GcFunction | undefined = (globalThis as { gc?: GcFunction }).gc): Promise<void> {
  if (!gc) return;
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  gc();
  await turn();
  gc();
  await turn();
}

/**
 * What the process holds. With --expose-gc, after a settled full GC (the benches leave
 * their garbage behind: what the store retains is the figure to compare), and the
 * anonymous RSS before it is kept apart.
 */
export async function footprint(store: Store, dir: string, messages: number): Promise<Footprint> {
  const gc = (globalThis as { gc?: GcFunction }).gc;
  const beforeGc = gc ? rssAnonMB() : null;
  await settledGc(gc);
  const mem = process.memoryUsage();
  const mb = (n: number) => Math.round((n / 1048576) * 10) / 10;
  const rssMB = mb(mem.rss);
  // Blocks on disk, not the length: a store once written through LMDB's write map is sparse.
  const lmdbFileMB = mb(statSync(join(dir, "data.mdb")).blocks * 512);
  const bitmapCacheMB = mb(internals(store).bitmaps.cachedBytes);
  const per = (v: number) => Math.round((v / (messages / 1e6)) * 10) / 10;
  const status = (() => {
    try {
      return readFileSync("/proc/self/status", "utf8");
    } catch {
      return "";
    }
  })();
  const kb = (field: string) => {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
    return match ? mb(Number(match[1]) * 1024) : null;
  };
  const anonAfterGc = kb("RssAnon");
  gc?.({ type: "major", execution: "sync", flavor: "last-resort" });
  const anonFloor = gc ? rssAnonMB() : null;
  return {
    messages,
    rssMB,
    rssAnonMB: anonAfterGc,
    rssFileMB: kb("RssFile"),
    heapUsedMB: mb(mem.heapUsed),
    heapTotalMB: mb(mem.heapTotal),
    externalMB: mb(mem.external),
    rssAnonBeforeGcMB: beforeGc,
    rssAnonAfterLastResortGcMB: anonFloor,
    lmdbFileMB,
    bitmapCacheMB,
    perMillion: { rssMB: per(rssMB), lmdbFileMB: per(lmdbFileMB), bitmapCacheMB: per(bitmapCacheMB) },
  };
}

/** Opens the store and answers a first query: the time until a server could serve. */
export function openToReady(
  dir: string,
  userId: number,
  channelId: number,
): { store: Store; openMs: number; firstQueryMs: number } {
  const t0 = performance.now();
  const store = openStore(dir);
  const t1 = performance.now();
  store.getMessages(userId, {
    narrow: [{ operator: "channel", operand: channelId }],
    anchor: "newest",
    numBefore: 100,
    numAfter: 0,
  });
  const t2 = performance.now();
  return { store, openMs: t1 - t0, firstQueryMs: t2 - t1 };
}
