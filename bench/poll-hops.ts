/**
 * @module bench/poll-hops
 * `node dist/bench/poll-hops.js [--clients 100] [--seconds 20] [--rate 20] [--workers 2]
 *   [--event message|reaction] [--cpu-prof DIR]`
 *
 * What long-polls cost `parley serve --workers N` when clients register on one connection
 * and poll on another, as bench:day's do (and browsers often do): each client registers on
 * a connection of its own (either worker), then long-polls on one keep-alive connection
 * (either worker), while one sender posts `--rate` messages a second to a channel every
 * client is in. After a warm-up (the first polls, and any queue moving to where its polls
 * arrive), each worker's CPU (/proc) over `--seconds`, per message sent and per poll
 * answered, and how the poll answers split by X-Parley-Worker ("reader-1>writer": forwarded).
 * `--event reaction`: the sender adds and removes a reaction on one message instead (the
 * day's most frequent event, one shared payload for every queue). `--cpu-prof DIR`: every
 * server process writes a V8 CPU profile there.
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
    clients: { type: "string", default: "100" },
    seconds: { type: "string", default: "20" },
    rate: { type: "string", default: "20" },
    workers: { type: "string", default: "2" },
    event: { type: "string", default: "message" },
    "cpu-prof": { type: "string" },
  },
});
const clients = Number(values.clients);
const CLI = resolve(import.meta.dirname, "../tools/parley.js");

const dir = mkdtempSync(join(tmpdir(), "parley-bench-poll-hops-"));
const store = openStore(dir, { noSync: true });
const { owner, realm } = store.createRealm({
  subdomain: "",
  name: "Bench",
  owner: { email: "o@b.dev", fullName: "Owner" },
});
store.subscribe(owner.id, { channels: [{ name: "general" }] });
const basic = (email: string, key: string) => `Basic ${Buffer.from(`${email}:${key}`).toString("base64")}`;
const users = Array.from({ length: clients }, (_, i) => {
  const user = store.createUser({ realmId: realm.id, email: `u${i}@b.dev`, fullName: `User ${i}` });
  store.subscribe(user.id, { channels: [{ name: "general" }] });
  return basic(user.email, user.apiKey);
});
store.close();
const ownerAuth = basic(owner.email, owner.apiKey);

if (values.event !== "message" && values.event !== "reaction") throw new Error("--event takes message or reaction");
const cpuProf = values["cpu-prof"] === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", resolve(values["cpu-prof"])];
const child = spawn(
  process.execPath,
  [
    ...cpuProf,
    CLI,
    "serve",
    "--data",
    dir,
    "--port",
    "0",
    "--json",
    "--no-rate-limit",
    "--no-sync",
    "--log-level",
    "silent",
    "--workers",
    values.workers,
  ],
  { stdio: ["ignore", "pipe", "inherit"] },
);
process.once("exit", () => {
  child.kill("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
});
const url = await new Promise<string>((ok) =>
  createInterface({ input: child.stdout! }).once("line", (line) => ok((JSON.parse(line) as { url: string }).url)),
);

function call(
  agent: Agent | false,
  auth: string,
  method: string,
  path: string,
  params: Record<string, string>,
): Promise<{ worker: string; body: Record<string, unknown> }> {
  const form = new URLSearchParams(params).toString();
  const inQuery = method === "GET" || method === "DELETE";
  const target = `${url}/api/v1${path}${inQuery ? `?${form}` : ""}`;
  return new Promise((done, fail) => {
    const req = request(target, { method, agent, headers: { Authorization: auth } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
        if (res.statusCode !== 200) fail(new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(body)}`));
        else done({ worker: String(res.headers["x-parley-worker"] ?? ""), body });
      });
    });
    req.on("error", fail);
    if (inQuery) req.end();
    else {
      req.setHeader("Content-Type", "application/x-www-form-urlencoded");
      req.end(form);
    }
  });
}

let measuring = false;
let running = true;
const answers = new Map<string, number>();
async function client(auth: string): Promise<void> {
  const queue = await call(false, auth, "POST", "/register", { event_types: JSON.stringify([values.event]) });
  const queueId = String(queue.body["queue_id"]);
  let last = Number(queue.body["last_event_id"]);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  while (running) {
    const got = await call(agent, auth, "GET", "/events", { queue_id: queueId, last_event_id: String(last) });
    const events = got.body["events"] as { id: number }[];
    if (events.length > 0) last = events.at(-1)!.id;
    if (measuring) answers.set(got.worker, (answers.get(got.worker) ?? 0) + 1);
  }
  agent.destroy();
}

// Errors after the measurement are the server stopping.
const report = (error: unknown) => running && console.error(String(error));
const polling = users.map((auth) => client(auth).catch(report));
const sender = new Agent({ keepAlive: true, maxSockets: 1 });
let sent = 0;
const sendEvery = 1000 / Number(values.rate);
const sending = (async () => {
  let target = 0;
  if (values.event === "reaction") {
    const posted = await call(sender, ownerAuth, "POST", "/messages", {
      type: "stream",
      to: "general",
      topic: "t",
      content: "r",
    });
    target = Number(posted.body["id"]);
  }
  const start = performance.now();
  for (let i = 0; running; i++) {
    const due = start + i * sendEvery;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (values.event === "reaction")
      await call(sender, ownerAuth, i % 2 === 0 ? "POST" : "DELETE", `/messages/${target}/reactions`, {
        emoji_name: "tada",
      });
    else
      await call(sender, ownerAuth, "POST", "/messages", {
        type: "stream",
        to: "general",
        topic: "t",
        content: `m${i}`,
      });
    if (measuring) sent++;
  }
})().catch(report);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
await sleep(5000);
const before = cpuByProcess(child.pid!);
measuring = true;
await sleep(Number(values.seconds) * 1000);
measuring = false;
const after = cpuByProcess(child.pid!);
running = false;
const polls = [...answers.values()].reduce((a, b) => a + b, 0);
const cpu = [...after].map(([name, s]) => [name, s - (before.get(name) ?? 0)] as const);
const total = cpu.reduce((sum, [, s]) => sum + s, 0);
console.log(
  `load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}; ${clients} clients, ${sent} ${values.event}s, ${polls} poll answers in ${values.seconds} s`,
);
console.log(`poll answers by worker: ${[...answers].map(([w, n]) => `${w} ${n}`).join(", ")}`);
console.log(
  `server CPU ${(total * 1000).toFixed(0)} ms: ${((total * 1e6) / polls).toFixed(0)} µs per poll answer, ` +
    `${((total * 1000) / sent).toFixed(2)} ms per ${values.event} (${cpu.map(([n, s]) => `${n} ${(s * 1000).toFixed(0)}`).join(", ")})`,
);
const exited = new Promise((done) => child.once("exit", done));
child.kill("SIGTERM");
await Promise.race([Promise.all([...polling, sending]), sleep(2000)]);
// A CPU profile is written as the server exits.
if (cpuProf.length > 0) await exited;
process.exit(0);
