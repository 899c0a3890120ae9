/**
 * @module bench/peer/cluster
 * A throwaway PostgreSQL cluster from Debian's packages: initdb as the postgres user
 * in a temporary directory, started with pg_ctl on a free loopback port with its unix
 * socket in that directory; stop() shuts it down and removes everything (also wired to
 * SIGINT/SIGTERM and to uncaught errors by the caller via onExit()).
 */
import { spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Cluster {
  readonly dir: string;
  readonly port: number;
  readonly socketDir: string;
  readonly version: string;
  stop(): void;
}

function sh(cmd: string, args: readonly string[], what: string): string {
  const r = spawnSync(cmd, args, { encoding: "utf8" });
  if (r.status !== 0)
    throw new Error(`${what} failed (${cmd} ${args.join(" ")}): ${(r.stderr || r.stdout || String(r.error)).trim()}`);
  return r.stdout;
}

/** The newest installed server's bin directory; installs Debian's postgresql if none. */
export function ensurePostgres(log: (line: string) => void): string {
  const find = () => {
    const root = "/usr/lib/postgresql";
    if (!existsSync(root)) return null;
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, "bin", "initdb")))
      .sort((a, b) => Number(b) - Number(a));
    return versions[0] ? join(root, versions[0], "bin") : null;
  };
  const found = find();
  if (found) return found;
  if (process.getuid?.() !== 0)
    throw new Error("PostgreSQL is not installed: run `apt-get install -y postgresql` as root, then retry");
  log("PostgreSQL not found: apt-get update && apt-get install -y postgresql");
  sh("apt-get", ["update"], "apt-get update");
  log(sh("apt-cache", ["policy", "postgresql"], "apt-cache policy").trim());
  const r = spawnSync("apt-get", ["install", "-y", "postgresql"], {
    stdio: "inherit",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  if (r.status !== 0) throw new Error("apt-get install -y postgresql failed: see the output above");
  const bin = find();
  if (!bin) throw new Error("postgresql installed but no initdb under /usr/lib/postgresql/*/bin");
  return bin;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Settings for a bulk-loaded, read-mostly benchmark on this machine (see README). */
const SETTINGS = `
listen_addresses = '127.0.0.1'
shared_buffers = '6GB'
effective_cache_size = '16GB'
work_mem = '64MB'
maintenance_work_mem = '2GB'
max_parallel_maintenance_workers = 2
max_parallel_workers_per_gather = 2
random_page_cost = 1.1
effective_io_concurrency = 200
wal_level = minimal
max_wal_senders = 0
max_wal_size = '16GB'
checkpoint_timeout = '30min'
synchronous_commit = on
fsync = on
jit = off
autovacuum = off
`;

export async function startCluster(bin: string, log: (line: string) => void): Promise<Cluster> {
  if (process.getuid?.() !== 0) throw new Error("bench:peer runs initdb as the postgres user and must run as root");
  const uid = Number(sh("id", ["-u", "postgres"], "id -u postgres").trim());
  const gid = Number(sh("id", ["-g", "postgres"], "id -g postgres").trim());
  const dir = mkdtempSync(join(tmpdir(), "parley-peer-"));
  chownSync(dir, uid, gid);
  const data = join(dir, "data");
  const port = await freePort();
  let running = false;
  const cluster: Cluster = {
    dir,
    port,
    socketDir: dir,
    version: "",
    stop() {
      if (running)
        spawnSync("runuser", ["-u", "postgres", "--", join(bin, "pg_ctl"), "-D", data, "-m", "fast", "-w", "stop"], {
          stdio: "ignore",
        });
      running = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    sh(
      "runuser",
      [
        "-u",
        "postgres",
        "--",
        join(bin, "initdb"),
        "-D",
        data,
        "-U",
        "postgres",
        "--auth=trust",
        "-E",
        "UTF8",
        "--locale=C.UTF-8",
        "--no-sync",
      ],
      "initdb",
    );
    writeFileSync(
      join(data, "postgresql.conf"),
      `\n${SETTINGS}\nport = ${port}\nunix_socket_directories = '${dir}'\n`,
      { flag: "a" },
    );
    sh(
      "runuser",
      [
        "-u",
        "postgres",
        "--",
        join(bin, "pg_ctl"),
        "-D",
        data,
        "-l",
        join(dir, "server.log"),
        "-w",
        "-t",
        "120",
        "start",
      ],
      "pg_ctl start",
    );
    running = true;
    const version = sh(join(bin, "postgres"), ["--version"], "postgres --version").trim();
    log(`${version} on 127.0.0.1:${port}, socket and data in ${dir}`);
    return { ...cluster, version, stop: cluster.stop };
  } catch (error) {
    cluster.stop();
    throw error;
  }
}

/** Runs `cleanup` once on normal exit, SIGINT/SIGTERM, or an uncaught error. */
export function onExit(cleanup: () => void): void {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    cleanup();
  };
  process.once("exit", once);
  // A closed stderr (e.g. piped into `head`) must not kill the run before cleanup.
  process.stderr.on("error", () => undefined);
  process.once("uncaughtException", (error) => {
    once();
    console.error(error);
    process.exit(1);
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      once();
      process.exit(130);
    });
  }
}
