/**
 * @module bench/loop-probe
 * How long the event loop was held while an operation ran: the largest gap between runs
 * of a 1 ms interval (what a request arriving then would wait) and perf_hooks' loop-delay
 * histogram (which also sees holds shorter than a timer turn). Shared by the benches that
 * report a loop figure against the 50 ms budget.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";

export interface LoopFigures {
  readonly longestBlockMs: number;
  readonly loopDelayMaxMs: number;
  readonly loopDelayP99Ms: number;
}

export interface LoopProbe {
  stop(): LoopFigures;
}

const ms1 = (x: number) => Number(x.toFixed(1));

export function probeLoop(): LoopProbe {
  let maxGap = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const t = performance.now();
    maxGap = Math.max(maxGap, t - last);
    last = t;
  }, 1);
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  return {
    stop() {
      clearInterval(timer);
      histogram.disable();
      return {
        longestBlockMs: ms1(Math.max(maxGap, performance.now() - last)),
        loopDelayMaxMs: ms1(histogram.max / 1e6),
        loopDelayP99Ms: ms1(histogram.percentile(99) / 1e6),
      };
    },
  };
}
