/**
 * @module bench/first-upload-rss
 * `node dist/bench/first-upload-rss.js [--mb 100] [--runs 3] [--images 1]` (from the checkout whose
 * build to measure: it starts that checkout's dist/tools/parley.js).
 *
 * How much a fresh `parley serve` grows with its first uploads (issue #26, item 15:
 * "the first upload after start grows RSS ~34 MB"). In a child process with a fresh
 * data directory: the server's RSS (VmRSS) settled after start, then after each of
 * `runs` multipart uploads of `mb` MB (not an image), then after `images` uploads of a
 * 2000x1500 PNG and their thumbnails (which load sharp/libvips). Settled: 1.5 s after the request, without
 * forcing a GC. Prints one JSON line per step and a summary line.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { crc32, deflateSync } from "node:zlib";

const log = (line: string) => process.stderr.write(line + "\n");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rssMB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Math.round((Number(match[1]) / 1024) * 10) / 10 : 0;
}

function post(
  port: number,
  auth: string,
  path: string,
  contentType: string,
  parts: readonly Buffer[],
  size: number,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        headers: { Authorization: auth, "Content-Type": contentType, "Content-Length": String(size) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      },
    );
    req.on("error", reject);
    let i = 0;
    const pump = (): void => {
      while (i < parts.length) if (!req.write(parts[i++]!)) return void req.once("drain", pump);
      req.end();
    };
    pump();
  });
}

/** A multipart body of `size` bytes of `fill` in 1 MiB parts (the same buffer repeated: the client stays small). */
function multipart(
  name: string,
  type: string,
  data: readonly Buffer[],
): { contentType: string; parts: Buffer[]; size: number } {
  const boundary = "----parleyrss";
  const parts = [
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ${type}\r\n\r\n`,
    ),
    ...data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ];
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    parts,
    size: parts.reduce((n, p) => n + p.length, 0),
  };
}

/** A `width`x`height` RGB PNG of noise, encoded here so that the client never loads sharp. */
function noisePng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    out.write(type, 4, "latin1");
    data.copy(out, 8);
    out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const rows = Buffer.alloc((width * 3 + 1) * height);
  let x = 1;
  for (let i = 0; i < rows.length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    rows[i] = i % (width * 3 + 1) === 0 ? 0 : x >>> 24;
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([
    signature,
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      mb: { type: "string", default: "100" },
      runs: { type: "string", default: "3" },
      images: { type: "string", default: "1" },
    },
  });
  const mb = Number(values.mb);
  const runs = Number(values.runs);
  const images = Number(values.images);
  const dataDir = join(mkdtempSync(join(tmpdir(), "parley-rss-")), "data");
  const cli = join("dist", "tools", "parley.js");
  try {
    const created = spawnSync(
      process.execPath,
      [
        cli,
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
    if (created.status !== 0)
      throw new Error(`realm create failed (is the build current? npm run build): ${created.stderr}`);
    const owner = JSON.parse(created.stdout) as { email: string; api_key: string };
    const auth = `Basic ${Buffer.from(`${owner.email}:${owner.api_key}`).toString("base64")}`;
    const child = spawn(
      process.execPath,
      [cli, "serve", "--data", dataDir, "--port", "0", "--no-rate-limit", "--log-level", "silent", "--json"],
      { stdio: ["ignore", "pipe", "ignore"] },
    );
    const port = await new Promise<number>((resolve, reject) => {
      child.once("exit", (code) => reject(new Error(`parley serve exited with ${code}`)));
      createInterface({ input: child.stdout! }).once("line", (line) =>
        resolve((JSON.parse(line) as { port: number }).port),
      );
    });
    const pid = child.pid!;
    const steps: { step: string; rss_mb: number }[] = [];
    const settle = async (step: string) => {
      await sleep(1500);
      steps.push({ step, rss_mb: rssMB(pid) });
      log(JSON.stringify(steps.at(-1)));
    };
    try {
      await settle("started");
      const block = Buffer.alloc(1024 * 1024);
      for (let i = 0; i < block.length; i += 4) block.writeUInt32LE((i * 2654435761) >>> 0, i);
      for (let run = 1; run <= runs; run++) {
        const body = multipart(
          "big.bin",
          "application/octet-stream",
          Array.from({ length: mb }, () => block),
        );
        const r = await post(port, auth, "/api/v1/user_uploads", body.contentType, body.parts, body.size);
        if (r.status !== 200) throw new Error(`upload answered ${r.status}: ${r.body.slice(0, 200)}`);
        await settle(`after ${mb} MB upload ${run}`);
      }
      for (let i = 0; i < images; i++) {
        const png = noisePng(2000 + i, 1500);
        const image = multipart("noise.png", "image/png", [png]);
        const r = await post(port, auth, "/api/v1/user_uploads", image.contentType, image.parts, image.size);
        if (r.status !== 200) throw new Error(`image upload answered ${r.status}: ${r.body.slice(0, 200)}`);
        const url = (JSON.parse(r.body) as { url: string }).url;
        await new Promise<void>((resolve, reject) => {
          const path = `${url.replace("/user_uploads/", "/user_uploads/thumbnail/")}/840x560.webp`;
          httpRequest({ host: "127.0.0.1", port, path, headers: { Authorization: auth } }, (res) => {
            res.resume();
            res.on("end", () =>
              res.statusCode === 200 ? resolve() : reject(new Error(`thumbnail answered ${res.statusCode}`)),
            );
          })
            .on("error", reject)
            .end();
        });
      }
      await settle(`after ${images} PNG upload(s) and thumbnail(s)`);
    } finally {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    const first = steps[1]!.rss_mb - steps[0]!.rss_mb;
    log(
      `first ${mb} MB upload: +${first.toFixed(1)} MB; after ${runs}: +${(steps[runs]!.rss_mb - steps[0]!.rss_mb).toFixed(1)} MB; ${images} image(s) + thumbnail(s): +${(steps.at(-1)!.rss_mb - steps[runs]!.rss_mb).toFixed(1)} MB`,
    );
    return 0;
  } finally {
    rmSync(join(dataDir, ".."), { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);
