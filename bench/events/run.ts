/**
 * @module bench/events/run
 * `npm run bench:events [-- --clients 1000,10000] [--rate 2,0.2] [--duration 20] [--ac-secs 5] [--out DIR]`
 *
 * Event-queue delivery over loopback (issue #17). For each client count N:
 * 1. parley runs in a child process (server-child.ts) with a realm of N users on one
 *    channel; GET /messages throughput is taken with autocannon with no queues;
 * 2. N queues are registered and the server's RSS (after a full GC) is compared with
 *    the reading before: RSS per idle queue; GET /messages is measured again with the
 *    N queues attached (idle, no poll open);
 * 3. every client opens a long poll; a sender posts `rate` messages per second for
 *    `duration` seconds to the channel; each client records send → answer arrival;
 * 4. the floor: the same N clients against a trivial uWS server (floor-child.ts) that
 *    answers all parked polls at once with a same-sized canned answer, fired at the
 *    same rate. That is the load generator's own cost of reading one burst of N
 *    answers (it shares the 2 cores), and parley is judged on what it adds beyond it.
 * Writes bench/results/events-<date>.md and prints it.
 */
import { fork, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execSync } from "node:child_process";
import { cpus, totalmem } from "node:os";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { basicAuth, PollFleet, pool, register, request, sendSteadily, type Queue } from "./clients.js";
import type { ChildReply, FloorReadyMessage, ParentRequest, ReadyMessage } from "./protocol.js";

const log = (line: string) => process.stderr.write(line + "\n");
const here = fileURLToPath(new URL(".", import.meta.url));

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

/** Pause before each GET /messages measurement (uWS closes idle keep-alive sockets after 10 s). */
const SETTLE_SECS = 12;
const round1 = (x: number) => Math.round(x * 10) / 10;
const MB = 1024 * 1024;

function waitFor<T>(child: ChildProcess, test: (m: unknown) => m is T, timeoutMs: number, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off("message", onMessage);
      reject(new Error(`${what}: no answer within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    const onExit = (code: number | null) => reject(new Error(`${what}: child exited with code ${code}`));
    function onMessage(m: unknown) {
      if (!test(m)) return;
      clearTimeout(timer);
      child.off("message", onMessage);
      child.off("exit", onExit);
      resolve(m);
    }
    child.on("message", onMessage);
    child.once("exit", onExit);
  });
}

async function ask<K extends ChildReply["reply"]>(
  child: ChildProcess,
  cmd: ParentRequest["cmd"],
  reply: K,
): Promise<Extract<ChildReply, { reply: K }>> {
  const answer = waitFor(
    child,
    (m): m is Extract<ChildReply, { reply: K }> =>
      typeof m === "object" && m !== null && (m as { reply?: unknown }).reply === reply,
    60_000,
    cmd,
  );
  child.send({ cmd });
  return answer;
}

async function waitPolling(child: ChildProcess, n: number, timeoutMs: number): Promise<number> {
  const end = performance.now() + timeoutMs;
  let polling = 0;
  while (performance.now() < end) {
    polling = (await ask(child, "stats", "stats")).polling;
    if (polling >= n) return polling;
    await new Promise((r) => setTimeout(r, 200));
  }
  return polling;
}

/**
 * Each measurement starts from a settled server: a pause, then a full GC. Measured
 * right after 10,000 registrations, the "with queues" run was ~40% slower, but 12 s
 * later it matched the runs without queues: it was paying for the registrations'
 * aftermath (garbage, idle sockets closing), not for the queues.
 */
async function settle(child: ChildProcess, seconds: number): Promise<void> {
  await new Promise((r) => setTimeout(r, seconds * 1000));
  await ask(child, "gc", "gc");
}

async function messagesThroughput(
  port: number,
  auth: string,
  channelId: number,
  seconds: number,
): Promise<{ rps: number; p99: number; non2xx: number }> {
  const narrow = encodeURIComponent(JSON.stringify([{ operator: "channel", operand: channelId }]));
  const url = `http://127.0.0.1:${port}/api/v1/messages?anchor=newest&num_before=100&num_after=0&narrow=${narrow}`;
  await autocannon({ url, connections: 8, duration: 1, headers: { authorization: auth } });
  const r = await autocannon({ url, connections: 8, duration: seconds, headers: { authorization: auth } });
  return { rps: Math.round(r.requests.average), p99: r.latency.p99, non2xx: r.non2xx + r.errors };
}

interface Delivery {
  readonly sent: number;
  readonly expected: number;
  readonly received: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** Median over bursts of last − first answer arrival for one message. */
  readonly spanP50: number;
  readonly eventsPerSec: number;
  readonly serverCpuCores: number;
  readonly generatorCpuCores: number;
  readonly errors: number;
  readonly lastError: string;
  readonly answerBytes: number;
  readonly pollingAtStart: number;
}

async function deliver(
  fleet: PollFleet,
  child: ChildProcess,
  n: number,
  count: number,
  rate: number,
  post: (seq: number) => Promise<{ status: number; body: string }>,
  label: string,
): Promise<Delivery> {
  fleet.start();
  const pollingAtStart = await waitPolling(child, n, 120_000);
  log(`  ${label}: ${pollingAtStart}/${n} polls parked; sending ${count} messages at ${rate}/s…`);
  const cpu0 = cpuSeconds(child.pid!);
  const gen0 = process.cpuUsage();
  const t0 = performance.now();
  const sent = await sendSteadily(fleet, count, rate, post, (seq) => {
    if ((seq + 1) % Math.max(1, Math.round(rate * 5)) === 0)
      log(`    sent ${seq + 1}/${count}, ${fleet.messageEvents} deliveries so far`);
  });
  // Let the last burst drain: until every expected delivery arrived or 30 s passed.
  const drainEnd = performance.now() + 30_000;
  while (fleet.messageEvents < count * n && performance.now() < drainEnd) await new Promise((r) => setTimeout(r, 50));
  const wall = (performance.now() - t0) / 1000;
  const gen = process.cpuUsage(gen0);
  const serverCpu = (cpuSeconds(child.pid!) - cpu0) / wall;
  fleet.stop();
  const sorted = [...fleet.latencies].sort((a, b) => a - b);
  const spans = [...fleet.arrivals.values()].map(([a, b]) => b - a).sort((a, b) => a - b);
  const bytes = [...fleet.answerBytes].sort((a, b) => a - b);
  return {
    sent: count,
    expected: count * n,
    received: fleet.messageEvents,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted[sorted.length - 1] ?? NaN,
    spanP50: percentile(spans, 0.5),
    eventsPerSec: Math.round(fleet.messageEvents / wall),
    serverCpuCores: Math.round(serverCpu * 100) / 100,
    generatorCpuCores: Math.round(((gen.user + gen.system) / 1e6 / wall) * 100) / 100,
    errors: fleet.errors + sent.failures,
    lastError: fleet.lastError || sent.lastFailure,
    answerBytes: percentile(bytes, 0.5),
    pollingAtStart,
  };
}

interface Result {
  readonly clients: number;
  readonly rate: number;
  readonly setupSecs: number;
  readonly registerSecs: number;
  readonly rssBeforeMB: number;
  readonly rssAfterMB: number;
  readonly rssPerQueueKB: number;
  readonly messagesRpsBefore: number;
  readonly messagesRpsAfter: number;
  /** After DELETE of all N queues (brackets the comparison in time). */
  readonly messagesRpsDeleted: number;
  readonly parley: Delivery;
  readonly floor: Delivery;
}

async function runOne(n: number, rate: number, duration: number, acSecs: number): Promise<Result> {
  const count = Math.max(5, Math.round(rate * duration));
  log(`\n== ${n} clients ==`);
  log(`starting parley (child) with ${n} users…`);
  const child = fork(join(here, "server-child.js"), [String(n), "200"], {
    execArgv: ["--expose-gc"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  try {
    const ready = await waitFor(
      child,
      (m): m is ReadyMessage => (m as { type?: unknown }).type === "ready",
      600_000,
      "parley child start",
    );
    log(`  realm ready in ${round1(ready.setupSecs)} s on port ${ready.port}`);
    const senderAuth = basicAuth(ready.sender);

    log(`  GET /messages throughput, no queues (${acSecs} s)…`);
    await settle(child, SETTLE_SECS);
    const before = await messagesThroughput(ready.port, senderAuth, ready.channelId, acSecs);
    log(`    ${before.rps} req/s`);

    const rss0 = (await ask(child, "gc", "gc")).rss;
    log(`  registering ${n} queues…`);
    const r0 = performance.now();
    const queues: Queue[] = await pool(
      ready.users,
      32,
      (u) => register(agent, ready.port, u),
      (done) => log(`    ${done}/${n} registered`),
    );
    const registerSecs = (performance.now() - r0) / 1000;
    const rss1 = (await ask(child, "gc", "gc")).rss;
    log(
      `    ${n} queues in ${round1(registerSecs)} s; RSS ${round1(rss0 / MB)} → ${round1(rss1 / MB)} MB (${round1((rss1 - rss0) / n / 1024)} KB/queue)`,
    );

    log(`  GET /messages throughput with ${n} idle queues (${acSecs} s)…`);
    await settle(child, SETTLE_SECS);
    const after = await messagesThroughput(ready.port, senderAuth, ready.channelId, acSecs);
    log(`    ${after.rps} req/s`);
    // Bracket the comparison (the machine's load drifts): delete the queues, measure
    // without them again, then register fresh ones for the delivery run.
    log(`  deleting the ${n} queues, GET /messages again without them…`);
    await pool(queues, 32, async (q) => {
      const a = await request(
        agent,
        ready.port,
        "DELETE",
        `/api/v1/events?queue_id=${encodeURIComponent(q.queueId)}`,
        q.auth,
      );
      if (a.status !== 200) throw new Error(`DELETE /events: HTTP ${a.status} ${a.body.slice(0, 200)}`);
    });
    await settle(child, SETTLE_SECS);
    const deleted = await messagesThroughput(ready.port, senderAuth, ready.channelId, acSecs);
    log(`    ${deleted.rps} req/s; registering ${n} fresh queues for the delivery run…`);
    queues.splice(0, queues.length, ...(await pool(ready.users, 32, (u) => register(agent, ready.port, u))));

    const fleet = new PollFleet(agent, ready.port, queues);
    const parley = await deliver(
      fleet,
      child,
      n,
      count,
      rate,
      (seq) =>
        request(
          agent,
          ready.port,
          "POST",
          "/api/v1/messages",
          senderAuth,
          new URLSearchParams({
            type: "stream",
            to: String(ready.channelId),
            topic: "bench",
            content: `bench-${seq}`,
          }).toString(),
        ),
      "parley",
    );
    log(
      `    parley: ${parley.received}/${parley.expected} deliveries, p50 ${round1(parley.p50)} ms, p99 ${round1(parley.p99)} ms, ${parley.eventsPerSec} events/s, server CPU ${parley.serverCpuCores} cores, errors ${parley.errors}${parley.lastError ? ` (${parley.lastError})` : ""}`,
    );
    child.disconnect();
    agent.destroy();

    const floor = await runFloor(n, count, rate, parley.answerBytes);
    return {
      clients: n,
      rate,
      setupSecs: ready.setupSecs,
      registerSecs,
      rssBeforeMB: rss0 / MB,
      rssAfterMB: rss1 / MB,
      rssPerQueueKB: (rss1 - rss0) / n / 1024,
      messagesRpsBefore: before.rps,
      messagesRpsAfter: after.rps,
      messagesRpsDeleted: deleted.rps,
      parley,
      floor,
    };
  } finally {
    if (child.connected) child.disconnect();
    if (child.exitCode === null) setTimeout(() => child.kill("SIGKILL"), 5000).unref();
    agent.destroy();
  }
}

async function runFloor(n: number, count: number, rate: number, bytes: number): Promise<Delivery> {
  log(`  floor: trivial uWS server, ${n} parked polls, answers of ${bytes} bytes…`);
  const child = fork(join(here, "floor-child.js"), [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  try {
    const ready = await waitFor(
      child,
      (m): m is FloorReadyMessage => (m as { type?: unknown }).type === "floor-ready",
      60_000,
      "floor child start",
    );
    const queues: Queue[] = Array.from({ length: n }, (_, i) => ({
      auth: `floor-${i}`,
      queueId: `q${i}`,
      lastEventId: -1,
    }));
    const fleet = new PollFleet(agent, ready.port, queues);
    const floor = await deliver(
      fleet,
      child,
      n,
      count,
      rate,
      (seq) => request(agent, ready.port, "POST", `/fire?seq=${seq}&bytes=${bytes}`, null, ""),
      "floor",
    );
    log(
      `    floor: ${floor.received}/${floor.expected} deliveries, p50 ${round1(floor.p50)} ms, p99 ${round1(floor.p99)} ms, burst span p50 ${round1(floor.spanP50)} ms, generator CPU ${floor.generatorCpuCores} cores`,
    );
    return floor;
  } finally {
    if (child.connected) child.disconnect();
    agent.destroy();
  }
}

function report(results: readonly Result[], duration: number, acSecs: number, ulimit: string): string {
  const rows = results.map((r) => {
    const p = r.parley;
    const f = r.floor;
    return {
      r,
      p,
      f,
      addP50: p.p50 - f.p50,
      addP99: p.p99 - f.p99,
      ratio: r.messagesRpsAfter / ((r.messagesRpsBefore + r.messagesRpsDeleted) / 2),
    };
  });
  const ms = (x: number) => (Number.isFinite(x) ? round1(x).toFixed(1) : "–");
  const lines = [
    `# Event queues over loopback (issue #17), ${new Date().toISOString().slice(0, 10)}`,
    "",
    `Machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${Math.round(totalmem() / 1024 ** 3)} GB, Node ${process.version}, \`ulimit -n\` ${ulimit}. The cores are shared: by parley (child process), the load generator (this process: all N clients on node:http, plus autocannon) and other engineers' work on the machine, so absolute figures are noisy.`,
    "",
    `Setup: one realm, 1 sender + N users all subscribed to one channel (200 messages of history). Each client registers a queue (\`event_types=["message"]\`) and keeps one \`GET /events\` long poll open on its own keep-alive socket; the sender posts messages to the channel at a steady rate (per row below) for ${duration} s (at least 5 messages). Latency = arrival of the complete poll answer carrying the message − the moment the sender's POST was issued, measured in the generator for every (client, message) pair.`,
    "",
    "**Floor**: the same clients against a trivial uWebSockets.js server that parks their polls and answers all of them at once, with a canned answer of the same size, when the sender's request arrives (same rate). It is what reading one burst of N answers costs this generator on this machine (plus the least any server must spend writing them). parley is judged on latency minus the floor.",
    "",
    "## Delivery",
    "",
    "| clients | messages/s | deliveries (got/expected) | parley p50 ms | parley p99 ms | floor p50 ms | floor p99 ms | added p50 ms | added p99 ms | floor burst span p50 ms | events/s | server CPU (cores) | generator CPU (cores) | errors |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      ({ r, p, f, addP50, addP99 }) =>
        `| ${r.clients.toLocaleString("en")} | ${r.rate} | ${p.received}/${p.expected} | ${ms(p.p50)} | ${ms(p.p99)} | ${ms(f.p50)} | ${ms(f.p99)} | ${ms(addP50)} | ${ms(addP99)} | ${ms(f.spanP50)} | ${p.eventsPerSec.toLocaleString("en")} | ${p.serverCpuCores} | ${p.generatorCpuCores} (floor run: ${f.generatorCpuCores}) | ${p.errors + f.errors} |`,
    ),
    "",
    "## Memory and GET /messages with queues attached",
    "",
    `RSS of the server process after a full GC (\`--expose-gc\`), before and after registering N idle queues. GET /messages: autocannon, 8 connections, ${acSecs} s after a ${SETTLE_SECS} s pause, a full GC and a 1 s warm-up, newest 100 of the channel, before registering, with the N queues registered (idle: no poll open), and again after DELETE of all N; the ratio is with-queues over the mean of the two without-queue runs that bracket it.`,
    "",
    "| clients | register all (s) | RSS before MB | RSS after MB | extra MB | per queue KB | GET /messages req/s, no queues | with N queues | after DELETE | ratio |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      ({ r, ratio }) =>
        `| ${r.clients.toLocaleString("en")} | ${round1(r.registerSecs)} | ${round1(r.rssBeforeMB)} | ${round1(r.rssAfterMB)} | ${round1(r.rssAfterMB - r.rssBeforeMB)} | ${round1(r.rssPerQueueKB)} | ${r.messagesRpsBefore} | ${r.messagesRpsAfter} | ${r.messagesRpsDeleted} | ${ratio.toFixed(2)} |`,
    ),
    "",
    "## Targets",
    "",
    ...rows.flatMap(({ r, addP99, ratio }) => [
      ...(r.clients === 1000
        ? [
            `- p99 within 20 ms of the floor at 1,000 clients: added p99 ${ms(addP99)} ms → **${addP99 <= 20 ? "met" : "not met"}**`,
          ]
        : []),
      ...(r.clients === 10_000
        ? [
            `- 10,000 idle queues in under 200 MB extra RSS: ${round1(r.rssAfterMB - r.rssBeforeMB)} MB → **${r.rssAfterMB - r.rssBeforeMB < 200 ? "met" : "not met"}**`,
            `- GET /messages with 10,000 queues within 20% of without: ratio ${ratio.toFixed(2)} → **${ratio >= 0.8 ? "met" : "not met"}**`,
          ]
        : []),
    ]),
    "",
  ];
  return lines.join("\n");
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      clients: { type: "string" },
      rate: { type: "string" },
      duration: { type: "string" },
      "ac-secs": { type: "string" },
      out: { type: "string" },
    },
    strict: true,
  });
  const sizes = (values.clients ?? "1000,10000").split(",").map(Number);
  const rates = (values.rate ?? "2,0.2").split(",").map(Number);
  const duration = Number(values.duration ?? 20);
  const acSecs = Number(values["ac-secs"] ?? 5);
  const ulimit = execSync("ulimit -n", { shell: "/bin/sh" }).toString().trim();
  log(
    `ulimit -n: ${ulimit} (each process needs about N sockets + a few; the parent holds N client sockets, the server N)`,
  );
  for (const n of sizes)
    if (Number(ulimit) < n + 100) log(`warning: ulimit -n ${ulimit} is below ${n} clients + margin; expect EMFILE`);
  const results: Result[] = [];
  // One rate per client count (the last repeats): at 10,000 clients this generator
  // needs seconds to read one burst, so a higher rate would only measure its backlog.
  const rateFor = (i: number) => rates[Math.min(i, rates.length - 1)]!;
  for (const [i, n] of sizes.entries()) results.push(await runOne(n, rateFor(i), duration, acSecs));
  const md = report(results, duration, acSecs, ulimit);
  const outDir = values.out ?? join("bench", "results");
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `events-${new Date().toISOString().slice(0, 10)}.md`);
  writeFileSync(file, md);
  writeFileSync(
    file.replace(/\.md$/, ".json"),
    JSON.stringify({ rates, duration, acSecs, ulimit, results }, null, 2) + "\n",
  );
  process.stdout.write(md + "\n");
  log(`written ${file}`);
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`bench:events: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exitCode = 1;
  },
);
