/**
 * `parley serve --workers 2`: the limits a single server applies per client address
 * hold for the whole server, whichever worker a connection reaches (src/http/
 * shared-limits): requests in progress per address (MAX_REQUESTS_PER_ADDRESS), the
 * memory of request bodies (BODY_MEMORY_MIB), and the block of an address after
 * failed authentication. Each is filled through one worker (the writer, which holds
 * long-polls and bodies) and then asked of the reader, which must refuse as a single
 * server would.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LEASE_MS } from "../../src/http/shared-limits.js";
import { openStore } from "../../src/index.js";
import { CLI, sleep, stopProcess } from "../support/serve-process.js";

const dirs: string[] = [];
const children: ChildProcess[] = [];
const agents: Agent[] = [];
afterAll(() => {
  for (const agent of agents) agent.destroy();
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function startWorkers(dir: string): Promise<string> {
  const args = [CLI, "serve", "--data", dir, "--port", "0", "--json", "--no-sync", "--workers", "2"];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((ok, reject) => {
    child.once("exit", (code) => reject(new Error(`serve --workers exited with ${code}: ${stderr}`)));
    createInterface({ input: child.stdout! }).once("line", (line) => ok((JSON.parse(line) as { url: string }).url));
  });
}

interface Answer {
  readonly status: number;
  readonly worker: string;
  readonly code: string;
}

/** One request on `agent` (or a connection of its own from `from`); a body makes it a form. */
function ask(
  url: string,
  target: { agent?: Agent; from?: string },
  method: string,
  path: string,
  auth: string | null,
  body: string | null = null,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = auth === null ? {} : { Authorization: auth };
    if (body !== null) {
      headers["Content-Type"] = "application/x-www-form-urlencoded";
      // Node sends a GET's body with neither length nor chunks unless told.
      headers["Content-Length"] = String(Buffer.byteLength(body));
    }
    const options = target.agent ? { agent: target.agent } : { agent: false as const, localAddress: target.from };
    const req = request(`${url}${path}`, { method, headers, ...options }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString();
        const code = text.startsWith("{") ? String((JSON.parse(text) as { code?: string }).code ?? "") : "";
        resolve({ status: res.statusCode ?? 0, worker: String(res.headers["x-parley-worker"] ?? ""), code });
      });
    });
    req.on("error", reject);
    req.end(body ?? undefined);
  });
}

/** A keep-alive connection from `from` that the kernel gave to `worker` (new ones until it does). */
async function connectionTo(url: string, worker: string, from: string): Promise<Agent> {
  for (;;) {
    const agent = new Agent({ keepAlive: true, maxSockets: 1, localAddress: from });
    const answered = await ask(url, { agent }, "GET", "/api/v1/server_settings", null);
    if (answered.worker === worker) {
      agents.push(agent);
      return agent;
    }
    agent.destroy();
  }
}

async function until<T>(what: string, attempt: () => Promise<T | null>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const got = await attempt();
    if (got !== null) return got;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const messages = "/api/v1/messages?anchor=newest&num_before=1&num_after=0";

describe("parley serve --workers 2: per-address limits are the whole server's", () => {
  let url = "";
  let auth = "";
  let email = "";
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "parley-wide-limits-"));
    dirs.push(dir);
    const store = openStore(dir, { noSync: true });
    const { owner } = store.createRealm({ subdomain: "", name: "R", owner: { email: "o@r.dev", fullName: "Owner" } });
    store.close();
    writeFileSync(join(dir, "parley.json"), JSON.stringify({ MAX_REQUESTS_PER_ADDRESS: 2, BODY_MEMORY_MIB: 1 }));
    email = owner.email;
    auth = `Basic ${Buffer.from(`${owner.email}:${owner.apiKey}`).toString("base64")}`;
    url = await startWorkers(dir);
  });
  afterAll(async () => {
    const supervisor = children.at(-1)!;
    await stopProcess(supervisor, "SIGTERM");
    expect(supervisor.exitCode).toBe(0);
  });

  it("counts requests in progress per address across workers", async () => {
    // Requests in progress from 127.0.0.2: two long-polls (held by the writer, whichever worker took them)
    // fill its share; a read the reader would answer itself is then refused as on a single server.
    const toReader = await connectionTo(url, "reader-1", "127.0.0.2");
    const toWriter = await connectionTo(url, "writer", "127.0.0.2");
    // The slots the reader leased for the requests that found it go back once unused for LEASE_MS (two sweeps).
    await sleep(2 * LEASE_MS + 200);
    // One queue each: a second poll of one queue would end the first.
    const register = (): Promise<string> =>
      new Promise((resolve, reject) => {
        const req = request(`${url}/api/v1/register`, { method: "POST", headers: { Authorization: auth } }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve((JSON.parse(Buffer.concat(chunks).toString()) as { queue_id: string }).queue_id));
        });
        req.on("error", reject);
        req.end();
      });
    const polls: ReturnType<typeof request>[] = [];
    for (const queue of [await register(), await register()]) {
      const poll = `/api/v1/events?queue_id=${queue}&last_event_id=-1`;
      const held = request(`${url}${poll}`, {
        agent: false,
        localAddress: "127.0.0.2",
        headers: { Authorization: auth },
      });
      held.on("error", () => undefined);
      held.end();
      polls.push(held);
    }
    await until("the writer holding both polls", async () => {
      const probe = await ask(url, { agent: toWriter }, "GET", messages, auth);
      return probe.status === 503 ? probe : null;
    });
    expect(await ask(url, { agent: toReader }, "GET", messages, auth)).toEqual({
      status: 503,
      worker: "reader-1",
      // A single server's 503 (SERVER_BUSY goes out as Zulip's BAD_REQUEST).
      code: "BAD_REQUEST",
    });
    // The polls' clients leave: their requests end on the writer too.
    for (const held of polls) held.destroy();
  });

  it("has the writer read every request body (one body budget)", async () => {
    // A reader buffers no body: every request with one is read by the writer, against its budget
    // (BODY_MEMORY_MIB), which is then the whole server's.
    const toReader = await connectionTo(url, "reader-1", "127.0.0.1");
    const withBody = await ask(
      url,
      { agent: toReader },
      "GET",
      "/api/v1/messages",
      auth,
      "anchor=newest&num_before=1&num_after=0",
    );
    expect(withBody).toEqual({ status: 200, worker: "reader-1>writer", code: "" });
    const bodiless = await ask(url, { agent: toReader }, "GET", messages, auth);
    expect(bodiless).toEqual({ status: 200, worker: "reader-1", code: "" });
  });

  it("blocks an address after failed authentication on every worker", async () => {
    // Failed authentication from 127.0.0.3 (counted by the writer) blocks the address on the reader too.
    const blockedReader = await connectionTo(url, "reader-1", "127.0.0.3");
    expect((await ask(url, { agent: blockedReader }, "GET", messages, auth)).status).toBe(200);
    const bad = `Basic ${Buffer.from(`${email}:${"x".repeat(32)}`).toString("base64")}`;
    const failing = new Agent({ keepAlive: true, maxSockets: 1, localAddress: "127.0.0.3" });
    agents.push(failing);
    let status = 401;
    for (let i = 0; i < 300 && status === 401; i++)
      status = (await ask(url, { agent: failing }, "GET", messages, bad)).status;
    expect(status).toBe(429);
    // The reader asks about the address again at most LEASE_MS after the writer's last answer (its lease), while
    // the failures go on (a block lasts until the address's bucket refills a token: 0.6 s at 100 a minute).
    let onReader: Awaited<ReturnType<typeof ask>> | null = null;
    const until = Date.now() + 3 * LEASE_MS;
    while (Date.now() < until && onReader?.status !== 429) {
      await ask(url, { agent: failing }, "GET", messages, bad);
      onReader = await ask(url, { agent: blockedReader }, "GET", messages, auth);
    }
    expect(onReader).toEqual({ status: 429, worker: "reader-1", code: "RATE_LIMIT_HIT" });
    // Other addresses are served.
    const other = await connectionTo(url, "reader-1", "127.0.0.4");
    expect((await ask(url, { agent: other }, "GET", messages, auth)).status).toBe(200);
  });
});
