/**
 * @module bench/workers
 * `node dist/bench/workers.js [--requests N] [--messages N]`
 *
 * What `parley serve --workers 2` costs a request (src/workers, src/serve-workers.ts):
 * one keep-alive connection held to each worker (told apart by X-Parley-Worker), the
 * same requests sent one at a time over each, interleaved so the shared machine's
 * drifting load falls on both alike:
 * - forwarded: GET /events?dont_block=true on a fresh queue (answered by the writer
 *   from memory): straight to the writer, and through the reader (forwarded over the
 *   writer's Unix socket);
 * - local read: GET /messages (newest 20 of a channel) on the writer, and on the reader
 *   (which first catches up with the change log: one key read when nothing changed);
 * - read after a write: a send through the writer, then the same read on the reader,
 *   whose catch-up applies the send's change-log entry (the read alone is timed).
 * Reports median, p90 and p99 per case, in ms. Then server CPU per request (/proc, each
 * worker's user+system time over `--cpu-requests` requests of one case in a row, least
 * of `--cpu-rounds` rounds): GET /events (dont_block) and POST /messages, each straight
 * to the writer and through the reader, so the forward's cost on either side shows.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { openStore } from "../src/index.js";
import { cpuByProcess } from "./server-process.js";

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "1000" },
    messages: { type: "string", default: "2000" },
    "cpu-requests": { type: "string", default: "2000" },
    "cpu-rounds": { type: "string", default: "5" },
  },
});
const requests = Number(values.requests);
const CLI = resolve(import.meta.dirname, "../tools/parley.js");

const dir = mkdtempSync(join(tmpdir(), "parley-bench-workers-"));
const store = openStore(dir, { noSync: true });
const { owner } = store.createRealm({ subdomain: "", name: "Bench", owner: { email: "o@b.dev", fullName: "Owner" } });
store.subscribe(owner.id, { channels: [{ name: "general" }] });
for (let i = 0; i < Number(values.messages); i++)
  store.sendMessage({
    senderId: owner.id,
    to: { type: "channel", channel: "general", topic: `t${i % 50}` },
    content: `message ${i}`,
  });
store.close();
const auth = `Basic ${Buffer.from(`${owner.email}:${owner.apiKey}`).toString("base64")}`;

const child = spawn(
  process.execPath,
  [CLI, "serve", "--data", dir, "--port", "0", "--json", "--no-rate-limit", "--no-sync", "--workers", "2"],
  { stdio: ["ignore", "pipe", "inherit"] },
);
// A failed case (a throw) must not leave the server running.
process.once("exit", () => child.kill("SIGTERM"));
const url = await new Promise<string>((ok) =>
  createInterface({ input: child.stdout! }).once("line", (line) => ok((JSON.parse(line) as { url: string }).url)),
);

interface Answer {
  readonly worker: string;
  readonly body: Record<string, unknown>;
  readonly ms: number;
}

function call(agent: Agent, method: string, path: string, params: Record<string, string> = {}): Promise<Answer> {
  const form = new URLSearchParams(params).toString();
  const target = `${url}/api/v1${path}${method === "GET" && form ? `?${form}` : ""}`;
  const started = performance.now();
  return new Promise((done, fail) => {
    const req = request(target, { method, agent, headers: { Authorization: auth } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        done({
          worker: String(res.headers["x-parley-worker"] ?? ""),
          body: JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>,
          ms: performance.now() - started,
        }),
      );
    });
    req.on("error", fail);
    if (method === "GET") req.end();
    else {
      req.setHeader("Content-Type", "application/x-www-form-urlencoded");
      req.end(form);
    }
  });
}

/** One keep-alive connection to each worker: new connections until the kernel has given one to each. */
const agents = new Map<string, Agent>();
while (agents.size < 2) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const worker = (await call(agent, "GET", "/server_settings")).worker.split(">")[0]!;
  if (agents.has(worker)) agent.destroy();
  else agents.set(worker, agent);
}
const writer = agents.get("writer")!;
const reader = agents.get("reader-1")!;

const queue = String((await call(writer, "POST", "/register", { event_types: '["message"]' })).body["queue_id"]);
const poll = { queue_id: queue, last_event_id: "-1", dont_block: "true" };
const read = {
  anchor: "newest",
  num_before: "20",
  num_after: "0",
  narrow: '[{"operator":"channel","operand":"general"}]',
};

const cases: Record<string, number[]> = {
  "GET /events (dont_block), writer": [],
  "GET /events (dont_block), reader -> writer": [],
  "GET /messages, writer": [],
  "GET /messages, reader (catch-up: nothing new)": [],
  "GET /messages, reader (catch-up: one send)": [],
};
const time = async (name: string, answer: Promise<Answer>, expectWorker: string): Promise<void> => {
  const got = await answer;
  if (got.worker !== expectWorker) throw new Error(`${name}: answered by ${got.worker}, not ${expectWorker}`);
  cases[name]!.push(got.ms);
};
// Warm-up: both processes' code paths compiled before anything is timed.
for (let i = 0; i < 200; i++) {
  await call(reader, "GET", "/messages", read);
  await call(reader, "GET", "/events", poll);
}
for (let i = 0; i < requests; i++) {
  await time("GET /events (dont_block), writer", call(writer, "GET", "/events", poll), "writer");
  await time("GET /events (dont_block), reader -> writer", call(reader, "GET", "/events", poll), "reader-1>writer");
  await time("GET /messages, writer", call(writer, "GET", "/messages", read), "writer");
  await time("GET /messages, reader (catch-up: nothing new)", call(reader, "GET", "/messages", read), "reader-1");
  await call(writer, "POST", "/messages", { type: "stream", to: "general", topic: "t", content: `sent ${i}` });
  await time("GET /messages, reader (catch-up: one send)", call(reader, "GET", "/messages", read), "reader-1");
  if (i % 100 === 99) process.stderr.write(`\r${i + 1}/${requests}`);
}
process.stderr.write("\n");

const quantile = (sorted: number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}; ${requests} requests per case`,
);
console.log("| case | median ms | p90 ms | p99 ms |");
console.log("|---|---|---|---|");
for (const [name, times] of Object.entries(cases)) {
  const sorted = [...times].sort((a, b) => a - b);
  const cells = [0.5, 0.9, 0.99].map((q) => quantile(sorted, q).toFixed(3));
  console.log(`| ${name} | ${cells.join(" | ")} |`);
}

const cpuRequests = Number(values["cpu-requests"]);
// A queue no send reaches: its polls stay the same small answer however many messages the cases send.
const quietQueue = String(
  (await call(writer, "POST", "/register", { event_types: '["alert_words"]' })).body["queue_id"],
);
const quietPoll = { ...poll, queue_id: quietQueue };
const cpuCases: Record<string, { expect: string; send: (i: number) => Promise<Answer> }> = {
  "GET /events (dont_block), writer": { expect: "writer", send: () => call(writer, "GET", "/events", quietPoll) },
  "GET /events (dont_block), reader -> writer": {
    expect: "reader-1>writer",
    send: () => call(reader, "GET", "/events", quietPoll),
  },
  "POST /messages, writer": {
    expect: "writer",
    send: (i) => call(writer, "POST", "/messages", { type: "stream", to: "general", topic: "c", content: `w ${i}` }),
  },
  "POST /messages, reader -> writer": {
    expect: "reader-1>writer",
    send: (i) => call(reader, "POST", "/messages", { type: "stream", to: "general", topic: "c", content: `r ${i}` }),
  },
};
const cpuMs = new Map<string, { writer: number; reader: number }[]>();
for (let round = 0; round < Number(values["cpu-rounds"]); round++) {
  for (const [name, { expect, send }] of Object.entries(cpuCases)) {
    const before = cpuByProcess(child.pid!);
    for (let i = 0; i < cpuRequests; i++) {
      const got = await send(i);
      if (got.worker !== expect) throw new Error(`${name}: answered by ${got.worker}, not ${expect}`);
    }
    const after = cpuByProcess(child.pid!);
    const per = (worker: string): number =>
      (((after.get(worker) ?? 0) - (before.get(worker) ?? 0)) * 1000) / cpuRequests;
    cpuMs.set(name, [...(cpuMs.get(name) ?? []), { writer: per("writer"), reader: per("reader-1") }]);
    process.stderr.write(`\rCPU round ${round + 1}: ${name}                    `);
  }
}
process.stderr.write("\n");
console.log(`\nServer CPU per request, ms (least of ${values["cpu-rounds"]} rounds of ${cpuRequests}; by total):`);
console.log("| case | writer | reader | both |");
console.log("|---|---|---|---|");
for (const [name, rounds] of cpuMs) {
  const best = rounds.reduce((a, b) => (b.writer + b.reader < a.writer + a.reader ? b : a));
  const cells = [best.writer, best.reader, best.writer + best.reader].map((x) => x.toFixed(3));
  console.log(`| ${name} | ${cells.join(" | ")} |`);
}

for (const agent of agents.values()) agent.destroy();
await new Promise<void>((done) => {
  child.once("exit", () => done());
  child.kill("SIGTERM");
});
rmSync(dir, { recursive: true, force: true });
