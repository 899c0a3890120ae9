/**
 * @module bench/attacks/runner
 * `npm run bench:attacks [-- --only REGEX] [--out DIR]` (also `npm run bench:worst -- --attacks`)
 *
 * The hostile loads of the hardening issue (bench/attacks/index.ts lists them), each
 * against a fresh `parley serve` child (both listeners, rate limits on, as deployed)
 * on a copy of a small data directory: the demo realm, plus a few users who only
 * ping. While an attack runs, a worker thread (bench/attacks/monitor.ts) samples the
 * child's RSS every 100 ms and sends GET /api/v1/users/me every 20 ms. Per attack:
 * what the server answered, its peak RSS, the slowest concurrent answer, and how long
 * the child took to exit on SIGTERM afterwards, against the targets (RSS under
 * 512 MB, a concurrent request answered within 100 ms). Report: DIR/attacks.md
 * (default bench/results).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { get } from "node:http";
import { openStore } from "../../src/index.js";
import { createDemoRealm } from "../../tools/demo/realm.js";
import { ATTACKS } from "./index.js";
import type { MonitorFigures, MonitorSetup } from "./monitor.js";
import type { Attack, AttackTarget, Credentials } from "./types.js";

const log = (line: string) => process.stderr.write(`${line}\n`);
const here = fileURLToPath(new URL(".", import.meta.url));
const CLI = join(here, "..", "..", "tools", "parley.js");
const RSS_TARGET_MB = 512;
const LATENCY_TARGET_MS = 100;
/** An attack still running after this is stopped (its signal aborts). */
const ATTACK_TIMEOUT_MS = 180_000;
/** A child that has not exited this long after SIGTERM is killed. */
const STOP_TIMEOUT_MS = 60_000;
/** Users who only ping: 50 pings/s over them stays under the per-user limit of 200/min. */
const PINGERS = 16;

export interface AttackRow {
  readonly attack: Attack;
  readonly answered: string;
  /** The server's own longest event-loop delay during the attack (its /metrics), in ms; null if unread. */
  readonly serverLoopMs: number | null;
  readonly idleRssMb: number;
  readonly figures: MonitorFigures;
  readonly stopSeconds: number | null;
  readonly seconds: number;
}

const basic = (c: Credentials) => `Basic ${Buffer.from(`${c.email}:${c.apiKey}`).toString("base64")}`;

/** The data directory every attack starts from a copy of. */
function makeData(dir: string): { owner: Credentials; member: Credentials; pingers: Credentials[] } {
  const store = openStore(dir);
  try {
    const demo = createDemoRealm(store, { subdomain: "" });
    const member = demo.users.find((u) => u.role === 400 && !u.isBot);
    if (!member) throw new Error("the demo realm has no member");
    const pingers = Array.from({ length: PINGERS }, (_, i) =>
      store.createUser({ realmId: demo.realm.id, email: `pinger${i}@example.com`, fullName: `Pinger ${i}` }),
    );
    const creds = (u: { email: string; apiKey: string }) => ({ email: u.email, apiKey: u.apiKey });
    return { owner: creds(demo.owner), member: creds(member), pingers: pingers.map(creds) };
  } finally {
    store.close();
  }
}

interface Served {
  readonly child: ChildProcess;
  readonly url: string;
  readonly compatUrl: string;
}

function serve(dir: string): Promise<Served> {
  const child = spawn(
    process.execPath,
    [CLI, "serve", "--data", dir, "--port", "0", "--compat-port", "0", "--json", "--log-level", "silent"],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`parley serve exited with ${code} before listening`)));
    createInterface({ input: child.stdout! }).once("line", (line) => {
      const info = JSON.parse(line) as { url: string; compat_url: string };
      resolve({ child, url: info.url, compatUrl: info.compat_url });
    });
  });
}

/** Seconds until the child exited after SIGTERM; null when it had to be killed (or had died). */
function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(null);
  const started = performance.now();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve(signal === "SIGKILL" ? null : (performance.now() - started) / 1000);
    });
    child.kill("SIGTERM");
  });
}

function mark(monitor: Worker): Promise<MonitorFigures> {
  return new Promise((resolve) => {
    monitor.once("message", (figures: MonitorFigures) => resolve(figures));
    monitor.postMessage("mark");
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The server's longest event-loop delay since the last scrape, in ms: prom-client's
 * nodejs_eventloop_lag_max_seconds (reset on every scrape). It tells a stall of the
 * server from one of this process (the pings share the machine's 2 cores with the attack).
 */
function serverLoopMaxMs(baseUrl: string): Promise<number | null> {
  return new Promise((resolve) => {
    get(`${baseUrl}/metrics`, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => {
        const match = /^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text);
        resolve(match ? Number(match[1]) * 1000 : null);
      });
    }).on("error", () => resolve(null));
  });
}

async function runOne(
  attack: Attack,
  base: string,
  scratch: string,
  creds: ReturnType<typeof makeData>,
): Promise<AttackRow> {
  const dir = join(scratch, `run-${attack.item}-${attack.name.replace(/\W+/g, "-")}`);
  cpSync(base, dir, { recursive: true });
  const served = await serve(dir);
  const setup: MonitorSetup = { pid: served.child.pid!, baseUrl: served.url, auths: creds.pingers.map(basic) };
  const monitor = new Worker(join(here, "monitor.js"), { workerData: setup });
  const died = new Promise<string>((resolve) =>
    served.child.once("exit", (code, signal) => resolve(`server exited (${signal ?? code}) during the attack`)),
  );
  try {
    // A second of pings first: the idle RSS, and every ping path compiled.
    await sleep(1000);
    const idle = await mark(monitor);
    await serverLoopMaxMs(served.url);
    const target: AttackTarget = {
      baseUrl: served.url,
      compatUrl: served.compatUrl,
      owner: creds.owner,
      member: creds.member,
    };
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), ATTACK_TIMEOUT_MS);
    const started = performance.now();
    let answered: string;
    try {
      answered = await Promise.race([attack.run(target, controller.signal), died]);
    } catch (error) {
      answered = `attack failed: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      clearTimeout(timer);
      controller.abort();
    }
    const seconds = (performance.now() - started) / 1000;
    const figures = await mark(monitor);
    const serverLoopMs = await serverLoopMaxMs(served.url);
    const stopSeconds = await stop(served.child);
    return { attack, answered, serverLoopMs, idleRssMb: idle.peakRssMb, figures, stopSeconds, seconds };
  } finally {
    await monitor.terminate();
    await stop(served.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

const mb = (n: number) => `${Math.round(n)} MB`;
const ms = (n: number) => `${Math.round(n)} ms`;

function statusText(statuses: Readonly<Record<string, number>>): string {
  return Object.entries(statuses)
    .sort((a, b) => b[1] - a[1])
    .map(([status, n]) => `${n.toLocaleString("en-US")}×${status}`)
    .join(", ");
}

export function report(rows: readonly AttackRow[]): string {
  const [one, five] = loadavg();
  const lines = [
    "# Attacks (bench:worst --attacks)",
    "",
    `Each attack of the hardening issue (issue 26) against a fresh \`parley serve\` child (uWS and compatibility listeners, rate limits on) on a copy of the demo realm, from this machine over loopback (2 cores, shared; load average ${one!.toFixed(2)} / ${five!.toFixed(2)} at the end). A worker thread sampled the child's RSS every 100 ms and sent GET /api/v1/users/me every 20 ms alongside (over ${PINGERS} users, under the per-user rate limit, from 127.0.0.2, the attacks from 127.0.0.1 or 127.0.0.3: failed authentication is limited per address). "idle" is the RSS in the second before the attack; "server loop max" is the server's own longest event-loop delay during the attack (\`nodejs_eventloop_lag_max_seconds\` from its /metrics, 10 ms resolution): where the concurrent latency is far above it, the time went to this machine's shared CPUs, not to a stalled server. "stop" is the time from SIGTERM to exit after it. Targets: RSS under ${RSS_TARGET_MB} MB, a concurrent request answered within ${LATENCY_TARGET_MS} ms.`,
    "",
    "| item | attack | what the server answered | peak RSS (idle) | worst concurrent latency (over 100 ms; answers) | server loop max | stop | targets |",
    "|---:|---|---|---:|---:|---:|---:|---|",
  ];
  for (const r of rows) {
    const rssOk = r.figures.peakRssMb < RSS_TARGET_MB;
    const latencyOk =
      r.figures.worstMs <= LATENCY_TARGET_MS && Object.keys(r.figures.statuses).every((s) => s === "200");
    const verdict = `${rssOk ? "RSS ok" : "**RSS over**"}, ${latencyOk ? "latency ok" : "**latency over**"}`;
    lines.push(
      `| ${r.attack.item} | ${r.attack.name} (${r.seconds.toFixed(1)} s) | ${r.answered.replace(/\|/g, "\\|")} | ${mb(r.figures.peakRssMb)} (${mb(r.idleRssMb)}) | ${ms(r.figures.worstMs)} (${r.figures.slowPings.toLocaleString("en-US")} of ${r.figures.pings.toLocaleString("en-US")}; ${statusText(r.figures.statuses)}) | ${r.serverLoopMs === null ? "?" : ms(r.serverLoopMs)} | ${r.stopSeconds === null ? "killed" : `${r.stopSeconds.toFixed(1)} s`} | ${verdict} |`,
    );
  }
  return `${lines.join("\n")}\n`;
}

export async function runAttacks(options: { only?: string; out?: string } = {}): Promise<number> {
  const only = options.only === undefined ? null : new RegExp(options.only, "i");
  const chosen = ATTACKS.filter((a) => only === null || only.test(`${a.item} ${a.name}`));
  if (chosen.length === 0) {
    log(
      `no attack matches --only ${options.only ?? ""}; attacks: ${ATTACKS.map((a) => `${a.item} ${a.name}`).join(", ")}`,
    );
    return 2;
  }
  mkdirSync(join("bench", "tmp"), { recursive: true });
  const scratch = mkdtempSync(join("bench", "tmp", "attacks-"));
  const base = join(scratch, "base");
  try {
    const creds = makeData(base);
    const rows: AttackRow[] = [];
    for (const [i, attack] of chosen.entries()) {
      log(`[${i + 1}/${chosen.length}] item ${attack.item}: ${attack.name} ...`);
      const row = await runOne(attack, base, scratch, creds);
      log(
        `  ${row.answered}; server loop max ${row.serverLoopMs?.toFixed(0) ?? "?"} ms; peak RSS ${mb(row.figures.peakRssMb)}, worst concurrent ${ms(row.figures.worstMs)} (${row.figures.slowPings} of ${row.figures.pings} over 100 ms; ${statusText(row.figures.statuses)})`,
      );
      if (row.figures.slowest.length > 0)
        log(
          `  slowest pings (s after start: ms): ${row.figures.slowest.map(([t, v]) => `${t.toFixed(1)}: ${v.toFixed(0)}`).join(", ")}`,
        );
      rows.push(row);
    }
    const text = report(rows);
    const outDir = options.out ?? (only === null ? join("bench", "results") : join("bench", "tmp"));
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, "attacks.md"), text);
    process.stdout.write(text);
    log(`wrote ${join(outDir, "attacks.md")}`);
    return 0;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { parseArgs } = await import("node:util");
  const { values } = parseArgs({ options: { only: { type: "string" }, out: { type: "string" } }, strict: true });
  process.exitCode = await runAttacks({
    ...(values.only !== undefined ? { only: values.only } : {}),
    ...(values.out !== undefined ? { out: values.out } : {}),
  });
}
