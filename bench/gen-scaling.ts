/**
 * @module bench/gen-scaling
 * `node dist/bench/gen-scaling.js --data DIR --messages N [--every 250000]`: generates a
 * dataset (seed 1, the bench's defaults) and prints, every `--every` messages, the rate
 * over that interval and where the process's memory is: V8 heap, external and
 * ArrayBuffers, anonymous vs file-backed RSS (LMDB's mapped pages are file-backed), and
 * the bitmap cache's estimate. Used to find what made 10M generation slow down. Run with
 * `node --expose-gc` to force a full collection before each line (the heap column is then
 * the live heap).
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { generateDataset } from "../tools/generate/generate.js";
import { internals } from "../src/engine/internal.js";

const { values } = parseArgs({
  options: {
    data: { type: "string" },
    messages: { type: "string" },
    every: { type: "string" },
    "per-commit": { type: "string" },
    "bitmap-cache-mb": { type: "string" },
  },
});
if (!values.data || !values.messages)
  throw new Error(
    "usage: gen-scaling --data DIR --messages N [--every 250000] [--per-commit 16000] [--bitmap-cache-mb 2048]",
  );
const messages = Number(values.messages);
const every = Number(values.every ?? 250_000);

function procStatus(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of readFileSync("/proc/self/status", "utf8").split("\n")) {
    const m = /^(VmRSS|VmHWM|RssAnon|RssFile):\s+(\d+) kB/.exec(line);
    if (m) out[m[1]!] = Number(m[2]) / 1024;
  }
  return out;
}

/** Bytes this process has caused to be written to storage (dirtied pages of the mapped file included). */
function writtenBytes(): number {
  const m = /^write_bytes: (\d+)$/m.exec(readFileSync("/proc/self/io", "utf8"));
  return m ? Number(m[1]) : 0;
}

const mb = (n: number) => (n / 1048576).toFixed(0);
let lastWritten = writtenBytes();
let lastAt = Date.now();
let lastDone = 0;
let lastCpu = process.cpuUsage();
const started = Date.now();
// The machine is shared: messages per CPU-second is the rate to compare, wall time is noise.
console.log(
  "messages\tinterval_s\tmsg_per_s\tcpu_s\tmsg_per_cpu_s\trss_mb\tanon_mb\tfile_mb\theap_mb\theap_total_mb\texternal_mb\tarraybuf_mb\tbitmap_cache_est_mb\tcached_bitmaps\twritten_mb",
);
await generateDataset(values.data, {
  messages,
  seed: 1,
  quiet: true,
  ...(values["per-commit"] ? { messagesPerCommit: Number(values["per-commit"]) } : {}),
  ...(values["bitmap-cache-mb"] ? { bitmapCacheBytes: Number(values["bitmap-cache-mb"]) * 1048576 } : {}),
  onProgress(done, store) {
    if (Math.floor(done / every) === Math.floor(lastDone / every) && done !== messages) return;
    const now = Date.now();
    const s = (now - lastAt) / 1000;
    const cpu = process.cpuUsage(lastCpu);
    const cpuS = (cpu.user + cpu.system) / 1e6;
    // With --expose-gc, the heap column is what is live, not what the collector has not reached yet.
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    const mem = process.memoryUsage();
    const st = procStatus();
    const bitmaps = internals(store).bitmaps;
    const written = writtenBytes();
    console.log(
      [
        done,
        s.toFixed(1),
        ((done - lastDone) / s).toFixed(0),
        cpuS.toFixed(1),
        ((done - lastDone) / cpuS).toFixed(0),
        st["VmRSS"]!.toFixed(0),
        st["RssAnon"]!.toFixed(0),
        st["RssFile"]!.toFixed(0),
        mb(mem.heapUsed),
        mb(mem.heapTotal),
        mb(mem.external),
        mb(mem.arrayBuffers),
        mb(bitmaps.cachedBytes),
        bitmaps.cachedKeys().length,
        mb(written - lastWritten),
      ].join("\t"),
    );
    lastWritten = written;
    lastAt = now;
    lastDone = done;
    lastCpu = process.cpuUsage();
  },
});
console.log(`total ${((Date.now() - started) / 1000).toFixed(1)} s, peak RSS ${procStatus()["VmHWM"]!.toFixed(0)} MB`);
