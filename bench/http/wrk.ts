/**
 * @module bench/http/wrk
 * Drives one HTTP bench cell with wrk (Debian's `wrk`, a C load generator) instead of
 * autocannon. On a 2-core machine the load generator shares the cores with the server:
 * autocannon (Node) spends about a core of its own on a 553 KB answer, which capped the
 * GET /messages 1000 cell below what the server can do (bench/http/ceiling.ts); wrk
 * reads the same bytes for a fraction of that. A Lua script sets method, body and
 * headers, and cycles the Authorization header through a list when given one.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface WrkCell {
  readonly url: string;
  readonly method: "GET" | "POST";
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly rotateAuth?: readonly string[];
  readonly connections: number;
  readonly durationSeconds: number;
}

export interface WrkResult {
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly non2xx: number;
  readonly errors: number;
}

const lua = (s: string) => JSON.stringify(s); // a JSON string literal is a valid Lua string literal for ASCII

function script(cell: WrkCell): string {
  const lines = [`wrk.method = ${lua(cell.method)}`];
  for (const [name, value] of Object.entries(cell.headers)) lines.push(`wrk.headers[${lua(name)}] = ${lua(value)}`);
  if (cell.body !== undefined) lines.push(`wrk.body = ${lua(cell.body)}`);
  if (cell.rotateAuth && cell.rotateAuth.length > 0) {
    lines.push(
      `local auths = {${cell.rotateAuth.map(lua).join(",")}}`,
      "local i = 0",
      "request = function()",
      "  i = i % #auths + 1",
      '  wrk.headers["authorization"] = auths[i]',
      "  return wrk.format()",
      "end",
    );
  }
  return lines.join("\n") + "\n";
}

/** wrk prints latencies as 812.00us, 1.23ms or 1.02s. */
function millis(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text);
  if (!m) throw new Error(`wrk printed a latency this bench cannot read: ${text}`);
  const value = Number(m[1]);
  return m[2] === "us" ? value / 1000 : m[2] === "ms" ? value : m[2] === "s" ? value * 1000 : value * 60_000;
}

/** Parses wrk's report (run with --latency). */
export function parseWrk(output: string): WrkResult {
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(output);
  const p50 = /^\s*50%\s+(\S+)/m.exec(output);
  const p99 = /^\s*99%\s+(\S+)/m.exec(output);
  if (!rps || !p50 || !p99) throw new Error(`wrk's report lacks Requests/sec or the latency distribution:\n${output}`);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(output);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  return {
    requestsPerSecond: Math.round(Number(rps[1])),
    p50Ms: millis(p50[1]!),
    p99Ms: millis(p99[1]!),
    non2xx: non2xx ? Number(non2xx[1]) : 0,
    errors: socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
  };
}

/** Runs one cell (one wrk thread: the other core is the server's). */
export async function runWrk(cell: WrkCell): Promise<WrkResult> {
  const dir = mkdtempSync(join(tmpdir(), "parley-wrk-"));
  try {
    const file = join(dir, "cell.lua");
    writeFileSync(file, script(cell));
    const args = [
      "-t",
      "1",
      "-c",
      String(cell.connections),
      "-d",
      `${cell.durationSeconds}s`,
      "--latency",
      "-s",
      file,
      cell.url,
    ];
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn("wrk", args, { stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
      child.on("error", (error: NodeJS.ErrnoException) =>
        reject(
          error.code === "ENOENT"
            ? new Error("wrk is not installed: run `apt-get install -y wrk`, or use --client autocannon")
            : error,
        ),
      );
      child.on("close", (code) =>
        code === 0 ? resolve(out) : reject(new Error(`wrk exited with ${String(code)}:\n${out}`)),
      );
    });
    return parseWrk(output);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
