/**
 * @module bench/attacks/monitor
 * A worker thread of bench/attacks/runner.ts, with its own event loop so that an
 * attack's thousands of sockets in the main thread do not delay it: samples the
 * server's RSS (/proc/PID/status VmRSS) every 100 ms and sends GET /api/v1/users/me
 * every 20 ms (rotating over several users so that no one passes the per-user rate
 * limit), recording the slowest answer. "mark" answers with the figures since the
 * last mark, then starts afresh.
 */
import { readFileSync } from "node:fs";
import { request, Agent } from "node:http";
import { parentPort, workerData } from "node:worker_threads";

export interface MonitorSetup {
  readonly pid: number;
  readonly baseUrl: string;
  /** Basic authorization headers of the users who ping. */
  readonly auths: readonly string[];
}

export interface MonitorFigures {
  readonly peakRssMb: number;
  readonly worstMs: number;
  readonly pings: number;
  /** Pings answered (or not) after more than 100 ms. */
  readonly slowPings: number;
  /** When the slowest ones were sent, in seconds since the mark, with their time in ms (for the log). */
  readonly slowest: readonly (readonly [number, number])[];
  /** Answers by status ("timeout" and "error" for none). */
  readonly statuses: Readonly<Record<string, number>>;
}

const SAMPLE_MS = 100;
const PING_MS = 20;
/** A ping unanswered this long is counted as such, and its time as its latency. */
const PING_TIMEOUT_MS = 30_000;
const PING_ADDRESS = "127.0.0.2";

const setup = workerData as MonitorSetup;
// Idle sockets are closed before uWS's own ~10 s idle timeout could race a reuse.
const agent = new Agent({ keepAlive: true, maxSockets: 64, timeout: 5_000 });
let peakRssKb = 0;
let worstMs = 0;
let pings = 0;
let slowPings = 0;
let slowest: [number, number][] = [];
let markedAt = performance.now();
let statuses: Record<string, number> = {};
let next = 0;

function rssKb(): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${setup.pid}/status`, "utf8"));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

function count(status: string, ms: number, started: number): void {
  pings++;
  if (ms > 100) {
    slowPings++;
    slowest.push([(started - markedAt) / 1000, ms]);
    slowest = slowest.sort((a, b) => b[1] - a[1]).slice(0, 10);
  }
  worstMs = Math.max(worstMs, ms);
  statuses[status] = (statuses[status] ?? 0) + 1;
}

function ping(): void {
  const started = performance.now();
  const url = new URL(`${setup.baseUrl}/api/v1/users/me`);
  const auth = setup.auths[next++ % setup.auths.length]!;
  let done = false;
  const finish = (status: string) => {
    if (done) return;
    done = true;
    count(status, performance.now() - started, started);
  };
  // From another loopback address than the attacks: failed authentication is limited
  // per client address, and the pings stand for other users, not the attacker.
  const req = request(
    {
      agent,
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      localAddress: PING_ADDRESS,
      headers: { Authorization: auth },
    },
    (res) => {
      res.resume();
      res.on("end", () => finish(String(res.statusCode)));
      res.on("error", () => finish("error"));
    },
  );
  req.setTimeout(PING_TIMEOUT_MS, () => {
    finish("timeout");
    req.destroy();
  });
  req.on("error", () => finish("error"));
  req.end();
}

setInterval(() => (peakRssKb = Math.max(peakRssKb, rssKb())), SAMPLE_MS);
setInterval(ping, PING_MS);

parentPort!.on("message", (message: unknown) => {
  if (message !== "mark") return;
  peakRssKb = Math.max(peakRssKb, rssKb());
  const figures: MonitorFigures = { peakRssMb: peakRssKb / 1024, worstMs, pings, slowPings, slowest, statuses };
  parentPort!.postMessage(figures);
  peakRssKb = rssKb();
  worstMs = 0;
  pings = 0;
  slowPings = 0;
  slowest = [];
  markedAt = performance.now();
  statuses = {};
});
