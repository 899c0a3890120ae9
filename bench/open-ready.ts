/**
 * @module bench/open-ready
 * `node dist/bench/open-ready.js --data DIR [--opens 3] [--drop-caches]`: opens a private copy of a
 * generated store several times in one process and prints, for each open, the time to
 * open (wall and CPU: the machine is shared) and to answer the first query (channel
 * newest 100 for the bench's main user), then anonymous RSS and the V8 heap after a
 * settled full GC (run with --expose-gc for that). The copy is deleted at the end; the first
 * open of a store written by an older build also builds its conversation_members
 * table, once (printed apart). With --drop-caches (root, Linux), the kernel's page
 * cache is dropped before each open: a server starting after a reboot, with every
 * page of the store read from disk.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { type Store } from "../src/engine/index.js";
import { openStore } from "../src/index.js";
import { workingCopy } from "./dataset.js";
import { settledGc } from "./footprint.js";
import type { Manifest } from "../tools/generate/manifest.js";

const { values } = parseArgs({
  options: { data: { type: "string" }, opens: { type: "string" }, "drop-caches": { type: "boolean" } },
  strict: true,
});
if (!values.data) throw new Error("usage: open-ready --data DIR [--opens 3] [--drop-caches]");
const manifest = JSON.parse(readFileSync(`${values.data}/dataset.json`, "utf8")) as Manifest;
const opens = Number(values.opens ?? 3);
const work = workingCopy(values.data);

function statusMB(field: string): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync("/proc/self/status", "utf8"));
  return match ? Math.round(Number(match[1]) / 1024) : -1;
}
const gc = (globalThis as { gc?: () => void }).gc;

/** Writes dirty pages out, then drops clean ones (the copy's included) from the page cache. */
function dropCaches(): void {
  execFileSync("sync");
  try {
    writeFileSync("/proc/sys/vm/drop_caches", "1");
  } catch (error) {
    throw new Error(
      `--drop-caches needs root on Linux (writing /proc/sys/vm/drop_caches failed: ${error instanceof Error ? error.message : String(error)}); run as root or leave the option out`,
    );
  }
}

let store: Store | undefined;
try {
  for (let i = 0; i <= opens; i++) {
    store?.close();
    gc?.();
    if (values["drop-caches"]) dropCaches();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    store = openStore(work.dir);
    const t1 = performance.now();
    const cpu = process.cpuUsage(cpu0);
    store.getMessages(manifest.subjects.main, {
      narrow: [{ operator: "channel", operand: manifest.generalChannelId }],
      anchor: "newest",
      numBefore: 100,
      numAfter: 0,
    });
    const t2 = performance.now();
    const label = i === 0 ? "first open of the copy (one-time migrations included)" : `open ${i}`;
    console.log(
      `${label}: open ${(t1 - t0).toFixed(0)} ms (CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms), first query ${(t2 - t1).toFixed(1)} ms`,
    );
  }
  await settledGc(gc);
  console.log(
    `after the last open and its first query: anonymous RSS ${statusMB("RssAnon")} MB, file-backed ${statusMB("RssFile")} MB, V8 heap used ${Math.round(process.memoryUsage().heapUsed / 1048576)} MB${gc ? "" : " (no --expose-gc: heap includes garbage)"}`,
  );
} finally {
  store?.close();
  work.cleanup();
}
