/**
 * @module test/support/nginx
 * Debian's nginx for the sharding tests (docs/cluster.md section 11): installed with apt-get when missing (as
 * test/support/nats installs nats-server), run with its own prefix and configuration on a free loopback port,
 * never as root (under root it runs as nobody), in the foreground as the test's child.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { childrenOf } from "../../tools/shard/nginx-control.js";
import { freePort } from "./nats.js";

const NGINX = "/usr/sbin/nginx";
const NOBODY = 65534;

export function ensureNginx(): string {
  if (!existsSync(NGINX)) {
    const install = `test -x ${NGINX} || { apt-get install -y -o DPkg::Lock::Timeout=300 nginx || { apt-get update && apt-get install -y -o DPkg::Lock::Timeout=300 nginx; }; }`;
    execFileSync("flock", ["/tmp/parley-nginx-install.lock", "sh", "-c", install], {
      stdio: "ignore",
      timeout: 600_000,
    });
  }
  return NGINX;
}

export interface Nginx {
  readonly port: number;
  readonly prefix: string;
  /** The file nginx includes in its http block (the generated routing). */
  readonly includeFile: string;
  readonly pidFile: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

function chownTree(path: string, uid: number): void {
  chownSync(path, uid, uid);
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const inner = join(path, entry.name);
    if (entry.isDirectory()) chownTree(inner, uid);
    else chownSync(inner, uid, uid);
  }
}

/**
 * Starts nginx once `writeInclude(file, port)` has written the routing it includes. The main configuration bounds
 * a reload's drain (worker_shutdown_timeout), as docs/cluster.md asks of operators.
 */
export async function startNginx(writeInclude: (file: string, port: number) => void): Promise<Nginx> {
  const binary = ensureNginx();
  const port = await freePort();
  const prefix = mkdtempSync(join(tmpdir(), "parley-nginx-"));
  for (const dir of ["tmp", "logs"]) mkdirSync(join(prefix, dir));
  const includeFile = join(prefix, "parley.conf");
  const pidFile = join(prefix, "nginx.pid");
  writeInclude(includeFile, port);
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
    .map((t) => `  ${t}_temp_path ${join(prefix, "tmp", t)};`)
    .join("\n");
  writeFileSync(
    join(prefix, "nginx.conf"),
    [
      "worker_processes 1;",
      `pid ${pidFile};`,
      `error_log ${join(prefix, "logs", "error.log")} warn;`,
      "worker_shutdown_timeout 5s;",
      "events { worker_connections 256; }",
      "http {",
      "  access_log off;",
      temp,
      `  include ${includeFile};`,
      "}",
      "",
    ].join("\n"),
  );
  const root = process.getuid?.() === 0;
  if (root) chownTree(prefix, NOBODY);
  const child = spawn(binary, ["-p", prefix, "-c", join(prefix, "nginx.conf"), "-e", "stderr", "-g", "daemon off;"], {
    stdio: ["ignore", "ignore", "pipe"],
    ...(root ? { uid: NOBODY, gid: NOBODY } : {}),
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  for (let i = 0; i < 100 && !existsSync(pidFile); i++) {
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  if (!existsSync(pidFile)) {
    child.kill("SIGKILL");
    throw new Error(`nginx did not start: ${stderr}`);
  }
  return {
    port,
    prefix,
    includeFile,
    pidFile,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
        // nginx's fast shutdown: the master stops its workers, then exits. SIGKILL would orphan the workers.
        child.kill("SIGTERM");
        const force = setTimeout(() => {
          for (const worker of childrenOf(child.pid!)) process.kill(worker, "SIGKILL");
          child.kill("SIGKILL");
        }, 5_000);
        await exited;
        clearTimeout(force);
      }
      rmSync(prefix, { recursive: true, force: true });
    },
  };
}
