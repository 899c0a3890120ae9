/**
 * @module bench/harness
 * One timing loop for both systems in the peer comparison, so neither gets a
 * different measurement method: warm-up, then timed iterations until a time budget
 * or an iteration cap; optional untimed reset after each iteration. Reports the
 * median (robust to GC pauses and checkpoints) plus mean and p90.
 */

export interface Timing {
  readonly iterations: number;
  readonly medianMs: number;
  readonly meanMs: number;
  readonly p90Ms: number;
  readonly minMs: number;
}

export interface MeasureOptions {
  readonly warmup?: number;
  readonly minIterations?: number;
  readonly maxIterations?: number;
  readonly budgetMs?: number;
  readonly reset?: () => unknown;
}

export async function measure(fn: () => unknown, options: MeasureOptions = {}): Promise<Timing> {
  const { warmup = 2, minIterations = 5, maxIterations = 200, budgetMs = 2000, reset } = options;
  for (let i = 0; i < warmup; i++) {
    await fn();
    if (reset) await reset();
  }
  const samples: number[] = [];
  const started = performance.now();
  while (samples.length < maxIterations && (samples.length < minIterations || performance.now() - started < budgetMs)) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
    if (reset) await reset();
  }
  return summarize(samples);
}

export function summarize(samples: readonly number[]): Timing {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return {
    iterations: sorted.length,
    medianMs: sorted.length % 2 ? at(0.5) : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2,
    meanMs: sorted.reduce((a, b) => a + b, 0) / sorted.length,
    p90Ms: at(0.9),
    minMs: sorted[0]!,
  };
}

/** Compares two ascending ID lists; null when equal, else a short description. */
export function compareIds(ours: readonly number[], peer: readonly number[]): string | null {
  if (ours.length === peer.length && ours.every((id, i) => id === peer[i])) return null;
  const peerSet = new Set(peer);
  const oursSet = new Set(ours);
  const onlyOurs = ours.filter((id) => !peerSet.has(id));
  const onlyPeer = peer.filter((id) => !oursSet.has(id));
  return `ours ${ours.length} ids, peer ${peer.length}; only ours: [${onlyOurs.slice(0, 5).join(",")}${onlyOurs.length > 5 ? ",…" : ""}] (${onlyOurs.length}), only peer: [${onlyPeer.slice(0, 5).join(",")}${onlyPeer.length > 5 ? ",…" : ""}] (${onlyPeer.length})`;
}
