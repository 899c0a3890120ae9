/**
 * The commands that start a server with workers (tools/commands/serve.ts, start.ts):
 * `serve --workers 2 --compat-port 0` has the writer alone bind the HTTP/1.0-capable
 * listener, on a port the supervisor fixed and printed, which a restarted writer binds
 * again; `start --workers 2` creates the demo realm, then serves from two workers as
 * `serve --workers 2` does.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/index.js";
import { CLI, sleep, stopProcess } from "../support/serve-process.js";

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "parley-workers-cli-"));
  dirs.push(dir);
  return dir;
}

/** Runs the CLI and resolves with its first line of output (the --json greeting). */
function launch(args: readonly string[]): Promise<{ child: ChildProcess; greeting: Record<string, unknown> }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((ok, reject) => {
    child.once("exit", (code) => reject(new Error(`${args[0]} exited with ${code}: ${stderr}`)));
    createInterface({ input: child.stdout! }).once("line", (line) =>
      ok({ child, greeting: JSON.parse(line) as Record<string, unknown> }),
    );
  });
}

/** The supervisor's worker processes by role, from the role in their environment. */
function workerPids(pid: number): Record<string, number> {
  const text = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
  const named = (text === "" ? [] : text.split(" ").map(Number)).map((child) => {
    const env = readFileSync(`/proc/${child}/environ`, "utf8").split("\0");
    return [env.find((v) => v.startsWith("PARLEY_WORKER="))?.slice("PARLEY_WORKER=".length) ?? "?", child] as const;
  });
  return Object.fromEntries(named);
}

/** An HTTP/1.0 request on a raw socket (the uWS listener does not answer those): status line and worker. */
function http10(url: string, path: string): Promise<{ status: string; worker: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () =>
      socket.write(`GET ${path} HTTP/1.0\r\nHost: localhost\r\n\r\n`),
    );
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (text += chunk));
    socket.on("error", reject);
    socket.on("end", () => {
      const worker = /^x-parley-worker: *(.*?)\r$/im.exec(text)?.[1] ?? "";
      resolve({ status: text.split("\r\n")[0] ?? "", worker });
    });
  });
}

async function until<T>(what: string, attempt: () => Promise<T | null>): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const got = await attempt().catch(() => null);
    if (got !== null) return got;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("commands starting workers", () => {
  it("serve --workers 2 --compat-port 0: the writer alone listens there, on one port across restarts", async () => {
    const dir = tempDir();
    openStore(dir, { noSync: true }).close();
    const args = ["--data", dir, "--port", "0", "--compat-port", "0", "--json", "--no-sync", "--workers", "2"];
    const { child, greeting } = await launch(["serve", ...args]);
    expect(greeting["compat_url"]).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const compatUrl = String(greeting["compat_url"]);
    expect(await http10(compatUrl, "/api/v1/server_settings")).toEqual({ status: "HTTP/1.1 200 OK", worker: "writer" });

    const { writer } = workerPids(child.pid!);
    process.kill(writer!, "SIGKILL");
    await until("the writer gone", () => Promise.resolve(existsSync(`/proc/${writer}`) ? null : true));
    const again = await until("the restarted writer on the compat port", async () => {
      const answer = await http10(compatUrl, "/api/v1/server_settings");
      return answer.status.includes("200") ? answer : null;
    });
    expect(again.worker).toBe("writer");
    expect(workerPids(child.pid!)["writer"]).not.toBe(writer);
    await stopProcess(child, "SIGTERM");
    expect(child.exitCode).toBe(0);
  });

  it("start --workers 2: the demo realm, then two workers serving it", async () => {
    const dir = tempDir();
    const args = ["--data", dir, "--port", "0", "--json", "--no-sync", "--no-rate-limit", "--workers", "2"];
    const { child, greeting } = await launch(["start", ...args]);
    expect(greeting).toMatchObject({ created_demo: true, workers: 2 });
    expect(Object.keys(workerPids(child.pid!)).sort()).toEqual(["reader-1", "writer"]);
    const login = greeting["login"] as { email: string; api_key: string };
    const auth = `Basic ${Buffer.from(`${login.email}:${login.api_key}`).toString("base64")}`;
    // The demo login works whichever worker answers (each request on a connection of its own).
    const seen = new Set<string>();
    for (let i = 0; i < 40 && seen.size < 2; i++) {
      const res = await fetch(`${String(greeting["url"])}/api/v1/users/me`, {
        headers: { Authorization: auth, Connection: "close" },
      });
      expect(res.status).toBe(200);
      seen.add(String(res.headers.get("x-parley-worker")));
    }
    expect([...seen].sort()).toEqual(["reader-1", "writer"]);
    await stopProcess(child, "SIGTERM");
    expect(child.exitCode).toBe(0);
  });
});
