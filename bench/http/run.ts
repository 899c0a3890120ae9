/**
 * @module bench/http/run
 * `npm run bench:http [-- --scale 100k|N] [--data DIR] [--duration S] [--connections 1,4,16,64]`
 *
 * Loopback HTTP throughput of the real server: `dist/tools/parley.js serve` runs as a
 * child process on a generated dataset; autocannon drives GET /messages (windows of
 * 100 and 1000) and POST /messages at several concurrencies, reporting req/s, p50,
 * p99 and the server's CPU (from /proc, in cores) and RSS. Results go to
 * bench/results/http-<scale>.{json,md}. The server is stopped at the end, on error
 * and on Ctrl-C.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { openStore } from "../../src/engine/index.js";
import { chooseDataset, ensureDataset, workingCopy } from "../dataset.js";

const log = (line: string) => process.stderr.write(line + "\n");

interface Scenario {
  readonly name: string;
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly body?: string;
}

interface Row {
  readonly scenario: string;
  readonly connections: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly serverCpuCores: number;
  readonly serverRssMB: number;
}

/** utime + stime of a process in seconds (from /proc/PID/stat). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssMB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Math.round(Number(match[1]) / 1024) : 0;
}

/** Starts `parley serve` and resolves with its port from the `listening on` line. */
async function startServer(dir: string): Promise<{ child: ChildProcess; port: number }> {
  const cli = join("dist", "tools", "parley.js");
  const child = spawn(process.execPath, [cli, "serve", "--data", dir, "--port", "0", "--no-rate-limit", "--log-level", "silent"], { stdio: ["ignore", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("parley serve printed no 'listening on' line within 120 s")), 120_000);
    child.once("exit", (code) => reject(new Error(`parley serve exited with code ${code}: is the build current (npm run build) and the data directory free?`)));
    lines.on("line", (line) => {
      const match = /listening on https?:\/\/[^:]+:(\d+)/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
  });
  return { child, port };
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { scale: { type: "string" }, data: { type: "string" }, duration: { type: "string" }, connections: { type: "string" }, out: { type: "string" } }, strict: true });
  const choice = chooseDataset(values.scale, values.data, "100k");
  const manifest = await ensureDataset(choice, false, log);
  const duration = Number(values.duration ?? 5);
  const concurrencies = (values.connections ?? "1,4,16,64").split(",").map(Number);

  // The server sends messages: serve a private copy so the dataset stays as generated.
  const work = workingCopy(choice.dir);
  // Credentials straight from the store (the server is not running yet: one process per data dir).
  const store = openStore(work.dir);
  const user = store.getUser(manifest.subjects.main);
  const auth = "Basic " + Buffer.from(`${user.email}:${user.apiKey}`).toString("base64");
  store.close();

  const { child, port } = await startServer(work.dir);
  const stop = () => {
    if (child.exitCode === null) child.kill("SIGTERM");
  };
  process.once("exit", stop);
  process.once("SIGINT", () => {
    stop();
    process.exit(130);
  });
  try {
    const narrow = encodeURIComponent(JSON.stringify([{ operator: "channel", operand: manifest.generalChannelId }]));
    const scenarios: Scenario[] = [
      { name: "GET /messages 100", method: "GET", path: `/api/v1/messages?anchor=newest&num_before=100&num_after=0&narrow=${narrow}` },
      { name: "GET /messages 1000", method: "GET", path: `/api/v1/messages?anchor=newest&num_before=1000&num_after=0&narrow=${narrow}` },
      { name: "POST /messages", method: "POST", path: "/api/v1/messages", body: new URLSearchParams({ type: "stream", to: String(manifest.generalChannelId), topic: "http bench", content: "Load test message." }).toString() },
    ];
    const rows: Row[] = [];
    for (const scenario of scenarios) {
      for (const connections of concurrencies) {
        log(`${scenario.name}, ${connections} connection(s), ${duration} s…`);
        const cpu0 = cpuSeconds(child.pid!);
        const t0 = performance.now();
        const result = await autocannon({
          url: `http://127.0.0.1:${port}${scenario.path}`,
          method: scenario.method,
          connections,
          duration,
          headers: { authorization: auth, ...(scenario.body ? { "content-type": "application/x-www-form-urlencoded" } : {}) },
          ...(scenario.body ? { body: scenario.body } : {}),
        });
        const wall = (performance.now() - t0) / 1000;
        const row: Row = {
          scenario: scenario.name, connections, requestsPerSecond: Math.round(result.requests.average), p50Ms: result.latency.p50, p99Ms: result.latency.p99,
          non2xx: result.non2xx, errors: result.errors, serverCpuCores: Math.round(((cpuSeconds(child.pid!) - cpu0) / wall) * 100) / 100, serverRssMB: rssMB(child.pid!),
        };
        rows.push(row);
        log(`  ${row.requestsPerSecond} req/s, p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms, server CPU ${row.serverCpuCores} cores, RSS ${row.serverRssMB} MB${row.non2xx || row.errors ? `, ${row.non2xx} non-2xx, ${row.errors} errors` : ""}`);
      }
    }
    const outDir = values.out ?? join("bench", "results");
    mkdirSync(outDir, { recursive: true });
    const prefix = join(outDir, `http-${choice.label}`);
    writeFileSync(`${prefix}.json`, JSON.stringify({ scale: choice.label, messages: manifest.scale.messages, duration, rows }, null, 2) + "\n");
    const md = [
      `# HTTP throughput over loopback: ${choice.label} messages`,
      "",
      `autocannon → \`parley serve\` (separate process, same 2-core machine, so the load generator competes for CPU), ${duration} s per cell, authenticated as an active member. GET narrows to the 10,000-subscriber channel.`,
      "",
      "| scenario | connections | req/s | p50 ms | p99 ms | server CPU (cores) | server RSS MB | non-2xx / errors |",
      "|---|---:|---:|---:|---:|---:|---:|---|",
      ...rows.map((r) => `| ${r.scenario} | ${r.connections} | ${r.requestsPerSecond} | ${r.p50Ms} | ${r.p99Ms} | ${r.serverCpuCores} | ${r.serverRssMB} | ${r.non2xx} / ${r.errors} |`),
      "",
    ].join("\n");
    writeFileSync(`${prefix}.md`, md);
    log(md);
    return rows.some((r) => r.non2xx > 0 || r.errors > 0) ? 1 : 0;
  } finally {
    stop();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`bench:http: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);
