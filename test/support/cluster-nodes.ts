/**
 * @module test/support/cluster-nodes
 * Nodes of `parley serve --cluster` as child processes (docs/cluster.md), for the
 * cluster tests: a seeded data directory copied into each node's, a node started on a
 * free port, its /health, waits that say every node's log when they time out, and the
 * API calls the tests make.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { request as httpRequest } from "node:http";
import { openStore, type Store } from "../../src/index.js";
import { CLI, sleep } from "./serve-process.js";

export interface ClusterNodeProcess {
  readonly name: string;
  readonly dir: string;
  child: ChildProcess;
  url: string;
}

export interface Health {
  readonly status: number;
  readonly role: string;
  readonly applied: number;
  readonly reason?: string;
  /** The node it knows as the leader (itself when leading); null before a follower read a lease. */
  readonly leader?: string | null;
}

/** Directories, processes and logs of one test file's nodes; `cleanUp` for its afterAll. */
export class ClusterFixture {
  readonly #dirs: string[] = [];
  readonly #children: ChildProcess[] = [];
  /** Every node's stderr, said when a wait times out. */
  logs = "";

  tempDir(prefix: string): string {
    const dir = mkdtempSync(join(tmpdir(), `parley-${prefix}-`));
    this.#dirs.push(dir);
    return dir;
  }

  /** A data directory with one realm, its owner subscribed to "general", then `fill`'s writes. */
  seed(fill: (store: Store, ownerId: number) => void = () => undefined): { dir: string; auth: string } {
    const dir = this.tempDir("cluster-seed");
    const store = openStore(dir, { noSync: true });
    const { owner } = store.createRealm({ subdomain: "", name: "R", owner: { email: "o@r.dev", fullName: "Owner" } });
    store.subscribe(owner.id, { channels: [{ name: "general" }] });
    fill(store, owner.id);
    store.close();
    return { dir, auth: `Basic ${Buffer.from(`${owner.email}:${owner.apiKey}`).toString("base64")}` };
  }

  /** A copy of `seedDir` for node `name`. */
  nodeDir(name: string, seedDir: string): string {
    const dir = this.tempDir(`cluster-${name}`);
    cpSync(seedDir, dir, { recursive: true });
    return dir;
  }

  start(name: string, dir: string, natsUrl: string): Promise<ClusterNodeProcess> {
    const args = ["serve", "--data", dir, "--port", "0", "--json", "--no-rate-limit", "--no-sync"];
    const child = spawn(
      process.execPath,
      [CLI, ...args, "--log-level", "silent", "--cluster", natsUrl, "--node", name],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    this.#children.push(child);
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      this.logs += chunk.toString();
    });
    return new Promise((ok, reject) => {
      child.once("exit", (code) => reject(new Error(`node ${name} exited with ${code}: ${stderr}`)));
      createInterface({ input: child.stdout! }).once("line", (line) =>
        ok({ name, dir, child, url: (JSON.parse(line) as { url: string }).url }),
      );
    });
  }

  async waitFor<T>(what: string, probe: () => Promise<T | null>, timeoutMs = 30_000): Promise<T> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== null) return value;
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}; the nodes said:\n${this.logs}`);
      await sleep(100);
    }
  }

  leaderOf(nodes: readonly ClusterNodeProcess[]): Promise<ClusterNodeProcess> {
    return this.waitFor("a leader", async () => {
      for (const node of nodes) {
        const h = await health(node);
        if (h?.status !== 200 || h.role !== "leader") continue;
        // and every other node serving knows it, or a write sent there answers "No leader is known yet".
        const others = await Promise.all(nodes.filter((n) => n !== node).map(health));
        if (others.every((o) => o === null || o.status !== 200 || o.leader === node.name)) return node;
      }
      return null;
    });
  }

  /** Every node serving (200) at the same log sequence. */
  allCaughtUp(nodes: readonly ClusterNodeProcess[]): Promise<number> {
    return this.waitFor("every node caught up", async () => {
      const all = await Promise.all(nodes.map(health));
      if (all.some((h) => h?.status !== 200)) return null;
      const applied = new Set(all.map((h) => h!.applied));
      return applied.size === 1 ? all[0]!.applied : null;
    });
  }

  cleanUp(): void {
    for (const child of this.#children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    for (const dir of this.#dirs) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One request on a connection of its own. Nodes swap servers on the same port when they
 * change role (and a cut-off leader hands the port to a standby listener): a pooled
 * keep-alive connection to the old server is closed under a request reusing it ("other
 * side closed"), which a client would retry but a test must not mistake for an answer.
 */
function request(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs: number },
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: options.method ?? "GET", headers: options.headers, agent: false, timeout: options.timeoutMs },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer from ${url} in ${options.timeoutMs} ms`)));
    req.on("error", reject);
    req.end(options.body);
  });
}

export async function health(node: ClusterNodeProcess): Promise<Health | null> {
  try {
    const res = await request(`${node.url}/health`, { timeoutMs: 2_000 });
    return { status: res.status, ...(JSON.parse(res.text) as Omit<Health, "status">) };
  } catch {
    return null;
  }
}

export async function api(
  node: ClusterNodeProcess,
  auth: string,
  method: string,
  path: string,
  form?: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await request(`${node.url}/api/v1${path}`, {
    method,
    headers: { authorization: auth, ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}) },
    ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    timeoutMs: 15_000,
  });
  return { status: res.status, body: JSON.parse(res.text) as Record<string, unknown> };
}

export interface ListedMessage {
  readonly id: number;
  readonly content: string;
  readonly subject: string;
}

/** The newest 5,000 messages the owner can read, as `node` answers. */
export async function messagesOn(node: ClusterNodeProcess, auth: string): Promise<ListedMessage[]> {
  const query = new URLSearchParams({ anchor: "newest", num_before: "5000", num_after: "0", apply_markdown: "false" });
  const res = await api(node, auth, "GET", `/messages?${query}`);
  if (res.status !== 200) throw new Error(`GET /messages on ${node.name}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body["messages"] as ListedMessage[];
}

/** `parley verify` of a stopped node's directory: its exit status and output. */
export function verify(dir: string): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [CLI, "verify", "--data", dir], { encoding: "utf8" });
  return { status: run.status, output: run.stdout + run.stderr };
}
