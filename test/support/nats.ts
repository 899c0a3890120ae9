/**
 * @module test/support/nats
 * Debian's nats-server with JetStream, for the cluster tests (docs/cluster.md):
 * installed with apt-get when missing (as test/support/chromium installs Chromium),
 * started on a free loopback port with its store in a temporary directory.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const NATS_SERVER = "/usr/sbin/nats-server";

export function ensureNatsServer(): string {
  if (!existsSync(NATS_SERVER)) {
    // Two test files may start at once on a fresh machine: flock makes the second wait for the first's install.
    const install = `test -x ${NATS_SERVER} || { apt-get install -y -o DPkg::Lock::Timeout=300 nats-server || { apt-get update && apt-get install -y -o DPkg::Lock::Timeout=300 nats-server; }; }`;
    execFileSync("flock", ["/tmp/parley-nats-install.lock", "sh", "-c", install], {
      stdio: "ignore",
      timeout: 600_000,
    });
  }
  return NATS_SERVER;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen({ port: 0, host: "127.0.0.1", exclusive: true }, () => {
      const address = probe.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

export interface NatsServer {
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: "127.0.0.1" });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * A JetStream-enabled nats-server on loopback; stop() kills it and removes its store.
 * `maxPayload`: the server's max_payload (bytes; its default is 1 MiB), through a configuration file.
 */
export async function startNats(options: { readonly maxPayload?: number } = {}): Promise<NatsServer> {
  const binary = ensureNatsServer();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "parley-nats-"));
  const args = ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", dir];
  if (options.maxPayload !== undefined) {
    const config = join(dir, "nats.conf");
    writeFileSync(config, `max_payload: ${options.maxPayload}\n`);
    args.push("-c", config);
  }
  const child = spawn(binary, args, { stdio: "ignore" });
  for (let i = 0; i < 100 && !(await accepts(port)); i++) await new Promise((r) => setTimeout(r, 50));
  return {
    url: `nats://127.0.0.1:${port}`,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        const done = (): void => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        };
        if (child.exitCode !== null || child.signalCode !== null) return done();
        child.once("exit", done);
        child.kill("SIGKILL");
      }),
  };
}
