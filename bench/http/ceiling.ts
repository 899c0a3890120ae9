/**
 * @module bench/http/ceiling
 * `node dist/bench/http/ceiling.js [--bytes 55700,552900] [--connections 16] [--duration 5] [--mode join|pieces]`
 *
 * What the HTTP bench can measure at all on this machine: a bare uWS server (a child
 * process, no parley code) answers every GET with a constant body of the given size,
 * and autocannon drives it as bench/http/run does. Prints req/s and the server's and
 * client's CPU (cores). A GET /messages row cannot beat the ceiling for its answer size.
 *
 * `--mode pieces` sends the body as 553-byte pieces with one res.tryEnd each (what
 * writing cached message JSON piece by piece would cost) instead of one res.end.
 */
import { fork } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import uWS from "uWebSockets.js";

const PIECE = 553;

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function serve(bytes: number, mode: string): void {
  const pieces: Buffer[] = [];
  for (let left = bytes; left > 0; left -= PIECE) pieces.push(Buffer.alloc(Math.min(PIECE, left), 97));
  const joined = Buffer.allocUnsafeSlow(bytes);
  uWS
    .App()
    .get("/*", (res) => {
      res.onAborted(() => undefined);
      res.cork(() => {
        res.writeHeader("Content-Type", "application/json");
        if (mode === "pieces") {
          for (const p of pieces) if (!res.tryEnd(p, bytes)[0]) return void res.close();
          return;
        }
        let offset = 0;
        for (const p of pieces) {
          joined.set(p, offset);
          offset += p.length;
        }
        res.end(joined);
      });
    })
    .listen("127.0.0.1", 0, (socket) => {
      if (socket) process.send!(uWS.us_socket_local_port(socket));
    });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      bytes: { type: "string" },
      connections: { type: "string" },
      duration: { type: "string" },
      mode: { type: "string" },
      serve: { type: "string" },
    },
    strict: true,
  });
  const mode = values.mode ?? "join";
  if (values.serve !== undefined) return serve(Number(values.serve), mode);
  const connections = Number(values.connections ?? 16);
  const duration = Number(values.duration ?? 5);
  for (const bytes of (values.bytes ?? "55700,552900").split(",").map(Number)) {
    const child = fork(fileURLToPath(import.meta.url), ["--serve", String(bytes), "--mode", mode]);
    try {
      const port = await new Promise<number>((resolve) => child.once("message", (m) => resolve(Number(m))));
      const server0 = cpuSeconds(child.pid!);
      const client0 = cpuSeconds(process.pid);
      const t0 = performance.now();
      const result = await autocannon({ url: `http://127.0.0.1:${port}/`, connections, duration });
      const wall = (performance.now() - t0) / 1000;
      const server = (cpuSeconds(child.pid!) - server0) / wall;
      const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
      console.log(
        `${bytes} B (${mode}), ${connections} connections: ${Math.round(result.requests.average)} req/s, server ${server.toFixed(2)} cores (${((1000 * server) / result.requests.average).toFixed(3)} ms CPU/answer), client ${((cpuSeconds(process.pid) - client0) / wall).toFixed(2)} cores, ${result.non2xx + result.errors} failures, load ${load}`,
      );
    } finally {
      child.kill();
    }
  }
}

main().catch((error: unknown) => {
  console.error(`ceiling: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
