/**
 * @module bench/shared-limits-cpu
 * `node dist/bench/shared-limits-cpu.js [--reads 5000] [--rounds 3]`
 *
 * What the whole-server limits of `parley serve --workers` (src/http/shared-limits)
 * cost a read a reader answers, in CPU of each side: the writer's side in a child
 * process, the reader's here, over a Unix socket as the workers have them, rate limiting
 * off (as bench:day runs). Each read is admitted, answered in a later turn and released,
 * one after the other. Two cases, alternated, least of `--rounds` rounds:
 * - leased: another request from the address is in progress on the reader (a client's
 *   long-poll; bench:day's clients all come from 127.0.0.1), so the reader answers from
 *   the slots it leased;
 * - asked: nothing else from the address is in progress, so each read asks the writer
 *   and gives its slot back (before leases, every read did).
 * The reader's figure includes the loop's own turns (two setImmediate a read).
 */
import { fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { OpenRequests } from "../src/http/load-limits.js";
import { RemoteLimits, serveSharedLimits } from "../src/http/shared-limits.js";

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const cpuMicros = (u: NodeJS.CpuUsage): number => u.user + u.system;

async function writerSide(socketPath: string): Promise<void> {
  await serveSharedLimits({ open: new OpenRequests(), authFailures: null, rate: null }, socketPath);
  process.send?.("ready");
  process.on("message", (m) => {
    if (m === "cpu") process.send?.(cpuMicros(process.cpuUsage()));
    if (m === "stop") process.exit(0);
  });
}

async function readerSide(reads: number, rounds: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "parley-limits-cpu-"));
  const socketPath = join(dir, "limits.sock");
  const child = fork(process.argv[1]!, ["--writer", socketPath]);
  await new Promise((resolve) => child.once("message", resolve));
  const writerCpu = (): Promise<number> =>
    new Promise((resolve) => {
      child.once("message", (m) => resolve(Number(m)));
      child.send("cpu");
    });
  const remote = new RemoteLimits(socketPath);
  const run = async (address: string, n: number): Promise<{ reader: number; writer: number }> => {
    const w0 = await writerCpu();
    const r0 = process.cpuUsage();
    for (let i = 0; i < n; i++) {
      const admission = await remote.admit(address, 5);
      await turn();
      admission.release();
      await turn();
    }
    const reader = cpuMicros(process.cpuUsage(r0)) / n;
    return { reader, writer: ((await writerCpu()) - w0) / n };
  };
  const held = await remote.admit("10.1.1.1", 5);
  await run("10.1.1.1", 500);
  await run("10.2.2.2", 500);
  const best = { leased: { reader: Infinity, writer: Infinity }, asked: { reader: Infinity, writer: Infinity } };
  for (let round = 1; round <= rounds; round++) {
    for (const [name, address] of [
      ["leased", "10.1.1.1"],
      ["asked", "10.2.2.2"],
    ] as const) {
      const r = await run(address, reads);
      best[name] = { reader: Math.min(best[name].reader, r.reader), writer: Math.min(best[name].writer, r.writer) };
      process.stderr.write(
        `  round ${round} ${name}: reader ${r.reader.toFixed(1)} µs, writer ${r.writer.toFixed(1)} µs\n`,
      );
    }
  }
  held.release();
  remote.close();
  child.send("stop");
  rmSync(dir, { recursive: true, force: true });
  console.log(`| case | reader µs / read | writer µs / read |\n|---|---:|---:|`);
  for (const [name, r] of Object.entries(best))
    console.log(`| ${name} | ${r.reader.toFixed(1)} | ${r.writer.toFixed(1)} |`);
}

const { values } = parseArgs({
  options: { reads: { type: "string" }, rounds: { type: "string" }, writer: { type: "string" } },
});
if (values.writer !== undefined) await writerSide(values.writer);
else await readerSide(Number(values.reads ?? 5000), Number(values.rounds ?? 3));
