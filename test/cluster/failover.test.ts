/**
 * `parley serve --cluster` as an operator runs it (docs/cluster.md): Debian's
 * nats-server with JetStream and three nodes on loopback, created from one data
 * directory copied into the others. Writers send through every node at once (a
 * follower forwards to the leader); the leader is killed with SIGKILL mid-burst, twice,
 * and restarted (it rejoins as a follower, undoing what never reached the log). Then
 * every acknowledged message is on every node, every node answers GET /messages
 * alike, `parley verify` is clean on each; a follower's event queue sees each message
 * event once; and with NATS gone a follower refuses writes and says why.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/index.js";
import { CLI, sleep, stopProcess } from "../support/serve-process.js";
import { startNats, type NatsServer } from "../support/nats.js";

const dirs: string[] = [];
const children: ChildProcess[] = [];
/** Every node's stderr, said when a wait times out. */
let logs = "";
let nats: NatsServer | null = null;
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await nats?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Node {
  readonly name: string;
  readonly dir: string;
  child: ChildProcess;
  url: string;
}

interface Health {
  readonly status: number;
  readonly role: string;
  readonly applied: number;
  readonly reason?: string;
}

function seedDirectory(): { dir: string; auth: string } {
  const dir = mkdtempSync(join(tmpdir(), "parley-cluster-seed-"));
  dirs.push(dir);
  const store = openStore(dir, { noSync: true });
  const { owner } = store.createRealm({ subdomain: "", name: "R", owner: { email: "o@r.dev", fullName: "Owner" } });
  store.subscribe(owner.id, { channels: [{ name: "general" }] });
  store.close();
  return { dir, auth: `Basic ${Buffer.from(`${owner.email}:${owner.apiKey}`).toString("base64")}` };
}

function startNode(name: string, dir: string, natsUrl: string): Promise<Node> {
  const child = spawn(
    process.execPath,
    [
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
    ].concat(["--cluster", natsUrl, "--node", name]),
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    logs += chunk.toString();
  });
  return new Promise((ok, reject) => {
    child.once("exit", (code) => reject(new Error(`node ${name} exited with ${code}: ${stderr}`)));
    createInterface({ input: child.stdout! }).once("line", (line) =>
      ok({ name, dir, child, url: (JSON.parse(line) as { url: string }).url }),
    );
  });
}

async function health(node: Node): Promise<Health | null> {
  try {
    const res = await fetch(`${node.url}/health`, { signal: AbortSignal.timeout(2_000) });
    return { status: res.status, ...((await res.json()) as { role: string; applied: number; reason?: string }) };
  } catch {
    return null;
  }
}

async function waitFor<T>(what: string, probe: () => Promise<T | null>, timeoutMs = 30_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}; the nodes said:\n${logs}`);
    await sleep(100);
  }
}

function leaderOf(nodes: readonly Node[]): Promise<Node> {
  return waitFor("a leader", async () => {
    for (const node of nodes) {
      const h = await health(node);
      if (h?.status === 200 && h.role === "leader") return node;
    }
    return null;
  });
}

async function api(node: Node, auth: string, method: string, path: string, form?: Record<string, string>) {
  const res = await fetch(`${node.url}/api/v1${path}`, {
    method,
    headers: { authorization: auth, ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}) },
    ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    signal: AbortSignal.timeout(15_000),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** One send; true only when the server acknowledged it. */
async function send(node: Node, auth: string, content: string): Promise<boolean> {
  try {
    const res = await api(node, auth, "POST", "/messages", { type: "stream", to: "general", topic: "burst", content });
    return res.status === 200 && res.body["result"] === "success";
  } catch {
    return false;
  }
}

async function messagesOn(node: Node, auth: string): Promise<{ id: number; content: string }[]> {
  const query = new URLSearchParams({ anchor: "newest", num_before: "5000", num_after: "0", apply_markdown: "false" });
  const res = await api(node, auth, "GET", `/messages?${query}`);
  expect(res.status).toBe(200);
  return res.body["messages"] as { id: number; content: string }[];
}

describe("parley serve --cluster", () => {
  it("loses no acknowledged write when the leader is killed mid-burst, and every node ends up alike", async () => {
    nats = await startNats();
    const seed = seedDirectory();
    const nodes: Node[] = [];
    for (const name of ["n1", "n2", "n3"]) {
      const dir = mkdtempSync(join(tmpdir(), `parley-cluster-${name}-`));
      dirs.push(dir);
      cpSync(seed.dir, dir, { recursive: true });
      nodes.push(await startNode(name, dir, nats.url));
    }
    await leaderOf(nodes);

    const acked: string[] = [];
    let writing = true;
    const writers = [0, 1, 2].map(async (w) => {
      for (let i = 0; writing; i++) {
        const content = `w${w}-${i}`;
        if (await send(nodes[w]!, seed.auth, content)) acked.push(content);
        else await sleep(50);
      }
    });

    for (let kill = 0; kill < 2; kill++) {
      const leader = await leaderOf(nodes);
      const before = acked.length;
      await waitFor("writes under way", async () => (acked.length >= before + 20 ? true : null));
      await stopProcess(leader.child, "SIGKILL");
      const others = nodes.filter((n) => n !== leader);
      const next = await leaderOf(others);
      expect(next).not.toBe(leader);
      // The killed leader comes back on its directory and rejoins as a follower.
      const restarted = await startNode(leader.name, leader.dir, nats.url);
      leader.child = restarted.child;
      leader.url = restarted.url;
      const afterKill = acked.length;
      await waitFor("writes on the new leader", async () => (acked.length >= afterKill + 20 ? true : null));
    }
    writing = false;
    await Promise.all(writers);
    expect(acked.length).toBeGreaterThan(80);

    // Every node serving, and at the same place in the log.
    await waitFor("every node caught up", async () => {
      const all = await Promise.all(nodes.map(health));
      if (all.some((h) => h?.status !== 200)) return null;
      const applied = new Set(all.map((h) => h!.applied));
      return applied.size === 1 ? true : null;
    });
    const answers = await Promise.all(nodes.map((n) => messagesOn(n, seed.auth)));
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    const contents = new Set(answers[0]!.map((m) => m.content));
    const lost = acked.filter((c) => !contents.has(c));
    expect(lost).toEqual([]);

    // A follower's event queue sees each message event once, sent through any node.
    const leader = await leaderOf(nodes);
    const follower = nodes.find((n) => n !== leader)!;
    const other = nodes.find((n) => n !== leader && n !== follower)!;
    const queue = await api(follower, seed.auth, "POST", "/register", { event_types: '["message"]' });
    expect(queue.status).toBe(200);
    const sent = ["e0", "e1", "e2", "e3", "e4", "e5"];
    for (const [i, content] of sent.entries())
      expect(await send([leader, other, follower][i % 3]!, seed.auth, content)).toBe(true);
    const seen: string[] = [];
    let lastEventId = queue.body["last_event_id"] as number;
    while (seen.length < sent.length) {
      const query = new URLSearchParams({
        queue_id: String(queue.body["queue_id"]),
        last_event_id: String(lastEventId),
      });
      const polled = await api(follower, seed.auth, "GET", `/events?${query}`);
      expect(polled.status).toBe(200);
      for (const event of polled.body["events"] as { id: number; type: string; message?: { content: string } }[]) {
        lastEventId = Math.max(lastEventId, event.id);
        if (event.type === "message") seen.push(event.message!.content.replace(/<\/?p>/g, ""));
      }
    }
    expect(seen).toEqual(sent);

    // Cut off from NATS, a follower keeps reading but refuses writes, saying why.
    await nats.stop();
    const cutOff = await waitFor("a follower noticing NATS is gone", async () => {
      const h = await health(follower);
      return h !== null && h.status === 503 ? h : null;
    });
    expect(cutOff.reason).toMatch(/NATS/);
    const refused = await api(follower, seed.auth, "POST", "/messages", {
      type: "stream",
      to: "general",
      topic: "t",
      content: "x",
    });
    expect(refused.status).toBe(503);
    expect(String(refused.body["msg"])).toMatch(/NATS/);
    expect((await messagesOn(follower, seed.auth)).length).toBe(answers[0]!.length + sent.length);

    for (const node of nodes) await stopProcess(node.child, "SIGTERM");
    for (const node of nodes) {
      const verify = spawnSync(process.execPath, [CLI, "verify", "--data", node.dir], { encoding: "utf8" });
      expect(verify.status, `${node.name}: ${verify.stdout}${verify.stderr}`).toBe(0);
    }
  }, 180_000);
});
