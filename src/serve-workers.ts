/**
 * @module serve-workers
 * The two roles of `parley serve --workers` (started by workers/supervisor with the
 * role in the environment), composed here beside src/server.ts, which the writer runs.
 *
 * The writer is `parley serve` as it runs alone (src/server.ts: the one store that
 * writes, the event queues, the scheduler, presence flush, mail and push senders,
 * uploads cleanup), sharing the public port, plus what the readers reach: its
 * internal listener for forwarded requests (http/forward) and the limits kept for the
 * whole server (http/shared-limits), on Unix sockets in the supervisor's private directory.
 *
 * A reader serves the public port too, from a follower store (engine/follower: the
 * directory opened read-only beside the writer): it answers reads itself, each after
 * catching up with the writer's change log (read-your-writes across workers), and
 * forwards the rest (http/forward's writerOnly, requests with a body, and requests whose
 * credentials fail, so that the writer counts failed authentication for every worker).
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { openFollower, type Store } from "./engine/index.js";
import { carriesBody, Forwarder, writerOnly } from "./http/forward.js";
import { createServer, type WorkerHooks } from "./http/server.js";
import { RemoteLimits, serveSharedLimits } from "./http/shared-limits.js";
import { startParley, type ExternalImages, type Log, type ServerSettings } from "./server.js";
import {
  DOWNLOAD_KEY_ENV,
  LIMITS_SOCKET,
  LOCK_TOKEN_ENV,
  supervisorMessage,
  WORKER_COMPAT_PORT_ENV,
  WORKER_DIR_ENV,
  WORKER_ENV,
  WORKER_PORT_ENV,
  WRITER_SOCKET,
  type WorkerMessage,
} from "./workers/protocol.js";

export interface WorkerEnv {
  /** "writer" or "reader-N". */
  readonly name: string;
  /** The supervisor's private directory of Unix sockets. */
  readonly dir: string;
  readonly port: number;
  /** The token of the lock the supervisor holds on the data directory: every worker's store joins it. */
  readonly lockToken: string;
  /** The supervisor's key for temporary download URLs, shared by every worker. */
  readonly downloadKey: Buffer;
  /** The port of the HTTP/1.0-capable listener the writer binds (--compat-port, fixed by the supervisor), or null. */
  readonly compatPort: number | null;
}

/** This process's worker role, when a supervisor started it. */
export function workerEnv(env: NodeJS.ProcessEnv = process.env): WorkerEnv | null {
  const name = env[WORKER_ENV];
  const dir = env[WORKER_DIR_ENV];
  const port = Number(env[WORKER_PORT_ENV]);
  const lockToken = env[LOCK_TOKEN_ENV];
  const downloadKey = env[DOWNLOAD_KEY_ENV];
  if (name === undefined || dir === undefined || lockToken === undefined || !Number.isInteger(port)) return null;
  if (downloadKey === undefined || !/^[0-9a-f]{64}$/.test(downloadKey)) return null;
  const compat = env[WORKER_COMPAT_PORT_ENV];
  const compatPort = compat === undefined ? null : Number(compat);
  if (compatPort !== null && !(Number.isInteger(compatPort) && compatPort > 0)) return null;
  return { name, dir, port, lockToken, downloadKey: Buffer.from(downloadKey, "hex"), compatPort };
}

function tell(message: WorkerMessage): void {
  process.send?.(message);
}

/** Calls `stop` once: at the first SIGTERM, SIGINT (Ctrl+C reaches every worker) or loss of the supervisor. */
function onStop(stop: () => Promise<void>): Promise<number> {
  return new Promise((resolve) => {
    let stopping = false;
    const once = (): void => {
      if (stopping) return;
      stopping = true;
      void stop().finally(() => {
        resolve(0);
        // Clients' idle keep-alive connections would keep the process for seconds (see serve's untilSignal).
        setTimeout(() => process.exit(0), 200).unref();
      });
    };
    process.on("SIGTERM", once);
    process.on("SIGINT", once);
    process.on("disconnect", once);
  });
}

/** The writer: serves as `parley serve` does, plus the readers' channels; resolves with the exit code. */
export async function runWriter(
  worker: WorkerEnv,
  store: Store,
  settings: ServerSettings,
  dataDir: string,
  images: ExternalImages,
  log: Log,
): Promise<number> {
  const waiting = new Map<number, (series: readonly unknown[]) => void>();
  let nextId = 1;
  process.on("message", (raw: unknown) => {
    const parsed = supervisorMessage.safeParse(raw);
    if (!parsed.success || parsed.data.type !== "peer-metrics") return;
    waiting.get(parsed.data.id)?.(parsed.data.series);
    waiting.delete(parsed.data.id);
  });
  const hooks: WorkerHooks = {
    name: worker.name,
    downloadKey: worker.downloadKey,
    peerMetrics: () =>
      new Promise((resolve) => {
        const id = nextId++;
        waiting.set(id, resolve);
        tell({ type: "collect-metrics", id });
      }),
  };
  // The HTTP/1.0-capable listener is the writer's alone, on the port the supervisor fixed.
  const own = { ...settings, port: worker.port, compatPort: worker.compatPort };
  const parley = await startParley(store, own, dataDir, images, log, hooks);
  let limits: { close(): void } | null = null;
  try {
    const socketPath = join(worker.dir, WRITER_SOCKET);
    // A writer killed before it could close leaves its socket file, which would refuse the bind.
    rmSync(socketPath, { force: true });
    await parley.http.listenInternal(socketPath);
    limits = await serveSharedLimits(parley.http.limits, join(worker.dir, LIMITS_SOCKET));
  } catch (error) {
    await parley.stop();
    throw error;
  }
  const stopped = onStop(async () => {
    limits?.close();
    await parley.stop();
  });
  tell({ type: "ready" });
  return stopped;
}

/** A reader: answers reads from a follower store, forwards the rest to the writer. */
export async function runReader(
  worker: WorkerEnv,
  settings: ServerSettings,
  dataDir: string,
  images: ExternalImages,
): Promise<number> {
  const forwarder = new Forwarder(join(worker.dir, WRITER_SOCKET), worker.name);
  const store = openFollower(dataDir, {
    noSync: settings.noSync,
    renderer: images.renderer,
    lockToken: worker.lockToken,
    holder: "parley serve (reader worker)",
  });
  const limits = new RemoteLimits(join(worker.dir, LIMITS_SOCKET));
  const http = createServer(store, {
    config: settings.config,
    dataDir,
    camoKey: images.camoKey,
    ...(settings.externalHost !== undefined ? { externalHost: settings.externalHost } : {}),
    ...(settings.rateLimit ? {} : { rateLimit: false as const }),
    // Counted by the writer, which answers every request whose credentials fail (divert below).
    authFailureLimit: false,
    requestLog: { level: settings.logLevel, destination: settings.logFile ?? "stdout", slowMs: settings.slowRequestMs },
    ...(process.env["PARLEY_METRICS_TOKEN"] ? { metricsToken: process.env["PARLEY_METRICS_TOKEN"] } : {}),
    worker: {
      name: worker.name,
      reader: true,
      downloadKey: worker.downloadKey,
      divert: (res, req, head, unauthorized) => {
        // A body is buffered by the writer only, against its budget, which is then the whole server's.
        if (!unauthorized && !writerOnly(head) && !carriesBody(head, req)) return false;
        forwarder.forward(res, req, head.remoteAddress);
        return true;
      },
      beforeLocal: () => void store.catchUp(),
      limits,
    },
  });
  process.on("message", (raw: unknown) => {
    const parsed = supervisorMessage.safeParse(raw);
    if (!parsed.success || parsed.data.type !== "send-metrics") return;
    const id = parsed.data.id;
    void http.metricsJson().then((series) => tell({ type: "metrics", id, series }));
  });
  try {
    await http.listen(worker.port, settings.host);
  } catch (error) {
    http.close();
    store.close();
    throw error;
  }
  const stopped = onStop(async () => {
    http.close();
    limits.close();
    // Forwarded requests (long-polls the stopping writer answers) are passed on before the exit.
    await Promise.race([forwarder.drained(), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
    forwarder.close();
    store.close();
  });
  tell({ type: "ready" });
  return stopped;
}
