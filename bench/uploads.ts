/**
 * @module bench/uploads
 * `npm run bench:uploads [-- --mb 100] [--runs 1] [--out DIR]`
 *
 * Upload and download of one large file over loopback against `parley serve` in a
 * child process (a fresh data directory, fsync on): POST /api/v1/user_uploads with a
 * multipart body streamed from a file on disk, then GET of the stored file. Reports
 * MB/s each way (1 MB = 10^6 bytes, the request's wall time as the client sees it,
 * fsync and rename included) and the server's RSS (VmRSS from /proc, sampled every
 * 20 ms) before, at its peak during, and after the upload. Targets (issue #10):
 * >= 200 MB/s each way, RSS growth < 32 MB during a 100 MB upload.
 * Report: bench/results/uploads.md (and .json).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createReadStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";

const log = (line: string) => process.stderr.write(line + "\n");

function rssMB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) / 1024 : 0;
}

async function startServer(dir: string): Promise<{ child: ChildProcess; port: number }> {
  const cli = join("dist", "tools", "parley.js");
  const child = spawn(
    process.execPath,
    [cli, "serve", "--data", dir, "--port", "0", "--no-rate-limit", "--log-level", "silent"],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error("parley serve printed no 'listening on' line within 60 s")),
      60_000,
    );
    child.once("exit", (code) =>
      reject(new Error(`parley serve exited with code ${code}: is the build current (npm run build)?`)),
    );
    lines.on("line", (line) => {
      const match = /listening on https?:\/\/[^:]+:(\d+)/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
  });
  return { child, port };
}

/** Samples the server's RSS every 20 ms while `work` runs. */
async function sampled<T>(
  pid: number,
  work: () => Promise<T>,
): Promise<{ result: T; before: number; peak: number; after: number }> {
  const before = rssMB(pid);
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, rssMB(pid))), 20);
  try {
    const result = await work();
    peak = Math.max(peak, rssMB(pid));
    return { result, before, peak, after: rssMB(pid) };
  } finally {
    clearInterval(timer);
  }
}

function uploadFile(
  port: number,
  auth: string,
  path: string,
  size: number,
): Promise<{ status: number; body: string; ms: number }> {
  const boundary = "----parleybench";
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port,
        path: "/api/v1/user_uploads",
        method: "POST",
        headers: {
          Authorization: auth,
          "Content-Type": `multipart/form-data; boundary=${boundary}`,
          "Content-Length": String(head.length + size + tail.length),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString("utf8"),
            ms: performance.now() - started,
          }),
        );
      },
    );
    req.on("error", reject);
    req.write(head);
    const file = createReadStream(path, { highWaterMark: 1024 * 1024 });
    file.on("error", reject);
    file.on("end", () => req.end(tail));
    file.pipe(req, { end: false });
  });
}

function download(port: number, auth: string, url: string): Promise<{ status: number; bytes: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: "127.0.0.1", port, path: url, method: "GET", headers: { Authorization: auth } },
      (res) => {
        let bytes = 0;
        res.on("data", (c: Buffer) => (bytes += c.length));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, bytes, ms: performance.now() - started }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      mb: { type: "string", default: "100" },
      runs: { type: "string", default: "1" },
      out: { type: "string", default: join("bench", "results") },
    },
  });
  const size = Number(values.mb) * 1_000_000;
  const runs = Number(values.runs);
  const work = mkdtempSync(join(tmpdir(), "parley-bench-uploads-"));
  const dataDir = join(work, "data");
  const source = join(work, "big.bin");
  try {
    // Random bytes, written once (not compressible, not all zeroes).
    const handle = await open(source, "w");
    const block = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < block.length; i += 4) block.writeUInt32LE((Math.random() * 2 ** 32) >>> 0, i);
    for (let written = 0; written < size; written += block.length)
      await handle.write(block, 0, Math.min(block.length, size - written));
    await handle.close();
    const created = spawnSync(
      process.execPath,
      [
        join("dist", "tools", "parley.js"),
        "realm",
        "create",
        "--data",
        dataDir,
        "--subdomain",
        "",
        "--name",
        "Bench",
        "--owner-email",
        "bench@example.com",
        "--json",
      ],
      { encoding: "utf8" },
    );
    if (created.status !== 0) throw new Error(`realm create failed: ${created.stderr}`);
    const owner = JSON.parse(created.stdout) as { email: string; api_key: string };
    const auth = `Basic ${Buffer.from(`${owner.email}:${owner.api_key}`).toString("base64")}`;
    const { child, port } = await startServer(dataDir);
    const rows: Record<string, number | string>[] = [];
    try {
      for (let run = 1; run <= runs; run++) {
        const up = await sampled(child.pid!, () => uploadFile(port, auth, source, size));
        if (up.result.status !== 200)
          throw new Error(`upload answered ${up.result.status}: ${up.result.body.slice(0, 200)}`);
        const url = (JSON.parse(up.result.body) as { url: string }).url;
        const down = await sampled(child.pid!, () => download(port, auth, url));
        if (down.result.status !== 200 || down.result.bytes !== size)
          throw new Error(`download answered ${down.result.status} with ${down.result.bytes} bytes`);
        const row = {
          run,
          upload_mb_s: Math.round((size / 1e6 / (up.result.ms / 1000)) * 10) / 10,
          download_mb_s: Math.round((size / 1e6 / (down.result.ms / 1000)) * 10) / 10,
          rss_before_upload_mb: Math.round(up.before),
          rss_peak_upload_mb: Math.round(up.peak),
          rss_growth_upload_mb: Math.round((up.peak - up.before) * 10) / 10,
          rss_peak_download_mb: Math.round(down.peak),
          rss_growth_download_mb: Math.round((down.peak - down.before) * 10) / 10,
        };
        log(JSON.stringify(row));
        rows.push(row);
      }
    } finally {
      child.kill("SIGTERM");
    }
    mkdirSync(values.out!, { recursive: true });
    const when = new Date().toISOString();
    writeFileSync(
      join(values.out!, "uploads.json"),
      JSON.stringify({ when, sizeBytes: size, cpus: cpus().length, node: process.version, rows }, null, 2) + "\n",
    );
    const table = [
      "| run | upload MB/s | download MB/s | server RSS before | peak during upload | growth during upload | growth during download |",
      "|---|---|---|---|---|---|---|",
    ];
    for (const r of rows)
      table.push(
        `| ${r["run"]} | ${r["upload_mb_s"]} | ${r["download_mb_s"]} | ${r["rss_before_upload_mb"]} MB | ${r["rss_peak_upload_mb"]} MB | ${r["rss_growth_upload_mb"]} MB | ${r["rss_growth_download_mb"]} MB |`,
      );
    writeFileSync(
      join(values.out!, "uploads.md"),
      [
        `# Uploads: ${size / 1e6} MB over loopback`,
        "",
        `${when}, Node ${process.version}, ${cpus().length} CPUs (shared with other work), \`parley serve\` in a child process with fsync on.`,
        "Upload: POST /api/v1/user_uploads, multipart streamed from disk, timed until the response (the server's fsync and rename included).",
        "Download: GET /user_uploads/<path_id>, bytes counted and dropped. MB = 10^6 bytes. RSS: the server's VmRSS, sampled every 20 ms.",
        "Targets (issue #10): >= 200 MB/s each way; RSS growth < 32 MB during the upload.",
        "",
        ...table,
        "",
      ].join("\n"),
    );
    return 0;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);
