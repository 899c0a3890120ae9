/**
 * `npm run bench:cluster` (docs/cluster.md): durable sends per second through one
 * `parley serve` and through a three-node `parley serve --cluster` (through the
 * leader, and through a follower that forwards), with JetStream's acknowledgement in
 * the path; replication lag (log messages a follower is behind, sampled under load);
 * and failover time (leader SIGKILLed -> first acknowledged send on any other node)
 * over --kills kills, counting acknowledged sends lost. Loopback only; needs Debian's
 * nats-server (apt-get install nats-server). Writes bench/results/cluster.json.
 *
 * Every process of a phase is on this one machine, so the cluster phases run three
 * parley processes, nats-server and the load generator where the single-node phase
 * runs one server and the generator: the CPU each used per acknowledged send is
 * measured (/proc/PID/stat) and reported beside the rates. --pin gives the serving
 * process (the single node, then the leader) CPU 0 to itself and puts everything else
 * on the other CPUs (taskset), an approximation of nodes on machines of their own.
 *
 *   node dist/bench/cluster.js [--seconds 10] [--clients 8] [--kills 10] [--pin]
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { openStore } from "../src/index.js";

const CLI = resolve(import.meta.dirname, "../tools/parley.js");
const NATS_SERVER = "/usr/sbin/nats-server";
const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "10" },
    clients: { type: "string", default: "8" },
    kills: { type: "string", default: "10" },
    pin: { type: "boolean", default: false },
  },
});
const PIN = values.pin;
/** Read before the first pin narrows this process's own affinity. */
const CPUS = availableParallelism();
const SECONDS = Number(values.seconds);
const CLIENTS = Number(values.clients);
const KILLS = Number(values.kills);

const children: ChildProcess[] = [];
const dirs: string[] = [];
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const probe = createServer();
    probe.once("error", fail);
    probe.listen({ port: 0, host: "127.0.0.1" }, () => {
      const address = probe.address();
      probe.close(() => ok(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}

function tempDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `parley-bench-cluster-${name}-`));
  dirs.push(dir);
  return dir;
}

function seed(): { dir: string; auth: string } {
  const dir = tempDir("seed");
  const store = openStore(dir, { noSync: true });
  const { owner } = store.createRealm({ subdomain: "", name: "R", owner: { email: "o@r.dev", fullName: "Owner" } });
  store.subscribe(owner.id, { channels: [{ name: "general" }] });
  store.close();
  return { dir, auth: `Basic ${Buffer.from(`${owner.email}:${owner.apiKey}`).toString("base64")}` };
}

interface Node {
  readonly name: string;
  readonly dir: string;
  child: ChildProcess;
  url: string;
}

function serve(name: string, dir: string, extra: readonly string[]): Promise<Node> {
  // Durable: fsync at commit, as a production server runs.
  const args = [CLI, "serve", "--data", dir, "--port", "0", "--json", "--no-rate-limit", "--log-level", "silent"];
  const child = spawn(process.execPath, [...args, ...extra], { stdio: ["ignore", "pipe", "ignore"] });
  children.push(child);
  return new Promise((ok, fail) => {
    child.once("exit", (code) => fail(new Error(`${name} exited with ${code}`)));
    createInterface({ input: child.stdout! }).once("line", (line) =>
      ok({ name, dir, child, url: (JSON.parse(line) as { url: string }).url }),
    );
  });
}

async function health(node: Node): Promise<{ status: number; role: string; applied: number } | null> {
  try {
    const res = await fetch(`${node.url}/health`, { signal: AbortSignal.timeout(1_000) });
    return { status: res.status, ...((await res.json()) as { role: string; applied: number }) };
  } catch {
    return null;
  }
}

async function leaderOf(nodes: readonly Node[]): Promise<Node> {
  for (;;) {
    for (const node of nodes) {
      const h = await health(node);
      if (h?.status === 200 && h.role === "leader") return node;
    }
    await sleep(50);
  }
}

let sequence = 0;
async function send(node: Node, auth: string): Promise<string | null> {
  const content = `m${sequence++}`;
  try {
    const res = await fetch(`${node.url}/api/v1/messages`, {
      method: "POST",
      headers: { authorization: auth, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ type: "stream", to: "general", topic: "bench", content }).toString(),
      signal: AbortSignal.timeout(10_000),
    });
    return res.status === 200 ? content : null;
  } catch {
    return null;
  }
}

/** CLIENTS concurrent senders for SECONDS: acknowledged sends per second. */
async function throughput(node: Node, auth: string, acked: string[]): Promise<number> {
  const until = Date.now() + SECONDS * 1000;
  let count = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (Date.now() < until) {
        const content = await send(node, auth);
        if (content !== null) {
          acked.push(content);
          count++;
        }
      }
    }),
  );
  return Math.round(count / SECONDS);
}

/** user+system CPU seconds a process used so far (its threads included). */
function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** Cores each named process used over a phase, and CPU milliseconds per acknowledged send. */
async function measured(
  processes: Record<string, number | undefined>,
  run: () => Promise<number>,
): Promise<{ rate: number; cores: Record<string, number>; cpuMsPerSend: number }> {
  const before = Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, cpuSeconds(pid)]));
  const selfBefore = process.cpuUsage();
  const started = Date.now();
  const rate = await run();
  const seconds = (Date.now() - started) / 1000;
  const cores: Record<string, number> = {};
  let serverCpu = 0;
  for (const [name, pid] of Object.entries(processes)) {
    const used = cpuSeconds(pid) - before[name]!;
    cores[name] = Math.round((used / seconds) * 100) / 100;
    serverCpu += used;
  }
  const self = process.cpuUsage(selfBefore);
  cores["generator"] = Math.round(((self.user + self.system) / 1e6 / seconds) * 100) / 100;
  const sends = rate * seconds;
  return { rate, cores, cpuMsPerSend: sends > 0 ? Math.round(((serverCpu * 1000) / sends) * 100) / 100 : 0 };
}

/** Under --pin: the serving process alone on CPU 0, every other process of the bench on the rest. */
function pin(serving: number | undefined, others: readonly (number | undefined)[]): void {
  if (!PIN) return;
  const cpus = CPUS;
  if (cpus < 2) throw new Error("--pin needs at least 2 CPUs");
  const rest = `1-${cpus - 1}`;
  if (serving !== undefined) execFileSync("taskset", ["-a", "-p", "-c", "0", String(serving)], { stdio: "ignore" });
  for (const pid of [process.pid, ...others]) {
    if (pid !== undefined) execFileSync("taskset", ["-a", "-p", "-c", rest, String(pid)], { stdio: "ignore" });
  }
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

let natsPid: number | undefined;
function startNats(port: number, dir: string): ChildProcess {
  const child = spawn(NATS_SERVER, ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", dir], { stdio: "ignore" });
  children.push(child);
  natsPid = child.pid;
  return child;
}

async function main(): Promise<void> {
  if (!existsSync(NATS_SERVER)) throw new Error("nats-server is missing: apt-get install -y nats-server");
  const { dir: seedDir, auth } = seed();
  const acked: string[] = [];

  console.error(`single node: ${CLIENTS} clients for ${SECONDS} s`);
  const singleDir = tempDir("single");
  cpSync(seedDir, singleDir, { recursive: true });
  const single = await serve("single", singleDir, []);
  pin(single.child.pid, []);
  const singlePhase = await measured({ single: single.child.pid }, () => throughput(single, auth, []));
  single.child.kill("SIGTERM");

  const natsPort = await freePort();
  startNats(natsPort, tempDir("nats"));
  await sleep(500);
  const natsUrl = `nats://127.0.0.1:${natsPort}`;
  const nodes: Node[] = [];
  for (const name of ["n1", "n2", "n3"]) {
    const dir = tempDir(name);
    cpSync(seedDir, dir, { recursive: true });
    nodes.push(await serve(name, dir, ["--cluster", natsUrl, "--node", name]));
  }
  let leader = await leaderOf(nodes);
  const follower = nodes.find((n) => n !== leader)!;
  const clusterProcesses = (): Record<string, number | undefined> => ({
    ...Object.fromEntries(nodes.map((n) => [n === leader ? `${n.name} (leader)` : n.name, n.child.pid])),
    "nats-server": natsPid,
  });
  pin(leader.child.pid, [...nodes.filter((n) => n !== leader).map((n) => n.child.pid), natsPid]);

  console.error(`cluster, through the leader ${leader.name}`);
  const lags: number[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const [l, f] = await Promise.all([health(leader), health(follower)]);
      if (l !== null && f !== null) lags.push(Math.max(0, l.applied - f.applied));
      await sleep(100);
    }
  })();
  const leaderPhase = await measured(clusterProcesses(), () => throughput(leader, auth, acked));
  console.error(`cluster, through the follower ${follower.name}`);
  const followerPhase = await measured(clusterProcesses(), () => throughput(follower, auth, acked));
  const [singleRate, leaderRate, followerRate] = [singlePhase.rate, leaderPhase.rate, followerPhase.rate];
  sampling = false;
  await sampler;
  lags.sort((a, b) => a - b);

  const failovers: number[] = [];
  for (let kill = 0; kill < KILLS; kill++) {
    leader = await leaderOf(nodes);
    const others = nodes.filter((n) => n !== leader);
    let writing = true;
    const background = (async () => {
      while (writing) {
        const content = await send(others[0]!, auth);
        if (content !== null) acked.push(content);
      }
    })();
    await sleep(300);
    const killedAt = Date.now();
    leader.child.kill("SIGKILL");
    let recovered: number | null = null;
    while (recovered === null) {
      for (const node of others) {
        const content = await send(node, auth);
        if (content !== null) {
          acked.push(content);
          recovered = Date.now() - killedAt;
          break;
        }
      }
      if (recovered === null) await sleep(20);
    }
    writing = false;
    await background;
    failovers.push(recovered);
    console.error(`kill ${kill + 1}/${KILLS}: first write after ${recovered} ms`);
    const restarted = await serve(leader.name, leader.dir, ["--cluster", natsUrl, "--node", leader.name]);
    leader.child = restarted.child;
    leader.url = restarted.url;
  }

  // Every node caught up, then count acknowledged sends missing anywhere.
  for (;;) {
    const all = await Promise.all(nodes.map(health));
    if (all.every((h) => h?.status === 200) && new Set(all.map((h) => h!.applied)).size === 1) break;
    await sleep(200);
  }
  let lost = 0;
  for (const node of nodes) {
    const got = new Set<string>();
    let anchor = "newest";
    for (;;) {
      const query = new URLSearchParams({ anchor, num_before: "5000", num_after: "0", include_anchor: "false" });
      const res = await fetch(`${node.url}/api/v1/messages?${query}`, { headers: { authorization: auth } });
      const page = ((await res.json()) as { messages: { id: number; content: string }[] }).messages;
      for (const m of page) got.add(m.content);
      if (page.length === 0) break;
      anchor = String(page[0]!.id);
    }
    lost += acked.filter((c) => !got.has(`<p>${c}</p>`)).length;
  }
  const sortedFailovers = [...failovers].sort((a, b) => a - b);
  const result = {
    date: new Date().toISOString(),
    clients: CLIENTS,
    seconds: SECONDS,
    sendsPerSecond: { singleNode: singleRate, clusterLeader: leaderRate, clusterFollower: followerRate },
    leaderVsSingle: Math.round((leaderRate / singleRate) * 100) / 100,
    pinned: PIN,
    coresUsed: {
      singleNode: singlePhase.cores,
      clusterLeader: leaderPhase.cores,
      clusterFollower: followerPhase.cores,
    },
    serverCpuMsPerSend: {
      singleNode: singlePhase.cpuMsPerSend,
      clusterLeader: leaderPhase.cpuMsPerSend,
      clusterFollower: followerPhase.cpuMsPerSend,
    },
    replicationLagMessages: { samples: lags.length, p50: percentile(lags, 50), p99: percentile(lags, 99) },
    failoverMs: {
      kills: KILLS,
      p50: percentile(sortedFailovers, 50),
      p99: percentile(sortedFailovers, 99),
      all: failovers,
    },
    acknowledged: acked.length,
    acknowledgedLost: lost,
  };
  console.log(JSON.stringify(result, null, 2));
  const out = resolve(import.meta.dirname, "../../bench/results");
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, PIN ? "cluster-pinned.json" : "cluster.json"), `${JSON.stringify(result, null, 2)}\n`);
}

try {
  await main();
} finally {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await sleep(200);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
