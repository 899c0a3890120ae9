/**
 * A refused body is answered and the rest of it read before the connection closes
 * (issue 26, item 5): closing while the client still sends makes the server's kernel
 * reset the connection, and a client that had not yet read the answer loses it
 * (Node's http client got EPIPE/ECONNRESET). The server runs in its own process (so
 * that this one can be busy the way a loaded client is, while the kernels go on
 * sending); Node's http client sends a 10 MiB body to an endpoint whose limit is
 * 16 KiB, asking to close the connection after (uWS closes such a connection the
 * moment its answer ends), and must read the 413 every time, on both listeners.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, expect, it } from "vitest";
import { CLI, stopProcess } from "../support/serve-process.js";

const BODY = Buffer.alloc(10 * 1024 * 1024, "x");
const TRIES = 20;

let dir: string;
let child: ChildProcess;
let urls: { uws: string; compat: string };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "parley-linger-"));
  child = spawn(
    process.execPath,
    [CLI, "serve", "--data", dir, "--port", "0", "--compat-port", "0", "--json", "--no-sync", "--log-level", "silent"],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  const line = await new Promise<string>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`serve exited with ${code}`)));
    createInterface({ input: child.stdout! }).once("line", resolve);
  });
  const info = JSON.parse(line) as { url: string; compat_url: string };
  urls = { uws: info.url, compat: info.compat_url };
});
afterAll(async () => {
  await stopProcess(child, "SIGTERM");
  rmSync(dir, { recursive: true, force: true });
});

/** One POST of BODY; resolves with the status read, or the error the client got instead. */
function postOnce(base: string): Promise<string> {
  return new Promise((resolve) => {
    const url = new URL(`${base}/api/v1/fetch_api_key`);
    // agent: false sends Connection: close.
    const req = request(
      {
        agent: false,
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", "Content-Length": BODY.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve(`${res.statusCode} ${Buffer.concat(chunks).toString("utf8")}`));
        res.on("error", (error: NodeJS.ErrnoException) => resolve(`response ${error.code ?? error.message}`));
      },
    );
    req.on("error", (error: NodeJS.ErrnoException) => resolve(`request ${error.code ?? error.message}`));
    req.end(BODY);
    // This process is busy for a moment, as a loaded client is; the kernels go on meanwhile.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  });
}

for (const listener of ["uws", "compat"] as const) {
  it(`${listener}: Node's http client reads the 413 in ${TRIES} of ${TRIES} tries`, async () => {
    const answers: string[] = [];
    for (let i = 0; i < TRIES; i++) answers.push(await postOnce(urls[listener]));
    const expected = `413 ${JSON.stringify({ result: "error", msg: "Request body too large", code: "BAD_REQUEST" })}`;
    expect(answers).toEqual(Array.from({ length: TRIES }, () => expected));
  });
}
