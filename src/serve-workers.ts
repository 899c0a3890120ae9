/**
 * @module serve-workers
 * The two roles of `parley serve --workers` (started by workers/supervisor with the
 * role in the environment), composed here beside src/server.ts, which the writer runs.
 *
 * The writer is `parley serve` as it runs alone (src/server.ts: the one store that
 * writes, the event queues, the scheduler, presence flush, mail and push senders,
 * uploads cleanup), sharing the public port, plus what the readers reach: its
 * internal listener for forwarded requests (http/frame-listener) and the limits kept for the
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
import { carriesBody, writerOnly } from "./http/forward.js";
import { FrameForwarder } from "./http/frame-forward.js";
import { loadSavedQueues, writeSavedQueues } from "./realtime/persist.js";
import { EventBroadcaster, EventSubscriber } from "./realtime/writer-stream.js";
import { Handoffs, internalSocket, QueueRouter, queueIdPrefix } from "./http/queue-routing.js";
import { createServer, type ParleyServer, type WorkerHooks } from "./http/server.js";
import { RemoteLimits, serveSharedLimits } from "./http/shared-limits.js";
import { startParley, type ExternalImages, type Log, type Parley, type ServerSettings } from "./server.js";
import {
  DOWNLOAD_KEY_ENV,
  EVENTS_SOCKET,
  LIMITS_SOCKET,
  LOCK_TOKEN_ENV,
  supervisorMessage,
  WORKER_COMPAT_PORT_ENV,
  WORKER_COUNT_ENV,
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
  /** How many workers the server runs (the writer and the readers). */
  readonly workers: number;
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
  const workers = Number(env[WORKER_COUNT_ENV]);
  const lockToken = env[LOCK_TOKEN_ENV];
  const downloadKey = env[DOWNLOAD_KEY_ENV];
  if (name === undefined || dir === undefined || lockToken === undefined || !Number.isInteger(port)) return null;
  if (!Number.isInteger(workers) || workers < 1) return null;
  if (downloadKey === undefined || !/^[0-9a-f]{64}$/.test(downloadKey)) return null;
  const compat = env[WORKER_COMPAT_PORT_ENV];
  const compatPort = compat === undefined ? null : Number(compat);
  if (compatPort !== null && !(Number.isInteger(compatPort) && compatPort > 0)) return null;
  return { name, dir, port, workers, lockToken, downloadKey: Buffer.from(downloadKey, "hex"), compatPort };
}

const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));

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
  // A queue the writer handed away lately: its polls go on to where it went (http/queue-routing).
  const handoffs = new Handoffs();
  const router = new QueueRouter(worker.name, worker.dir, log, (queueId) =>
    hubOf?.holds(queueId) === true ? null : handoffs.recent(queueId),
  );
  let hubOf: ParleyServer["events"] | null = null;
  const hooks: WorkerHooks = {
    name: worker.name,
    downloadKey: worker.downloadKey,
    // A reader's queue is polled and deleted where it lives (http/queue-routing).
    divert: (res, req, head, unauthorized) => !unauthorized && router.route(res, req, head),
    peerMetrics: () =>
      new Promise((resolve) => {
        const id = nextId++;
        waiting.set(id, resolve);
        tell({ type: "collect-metrics", id });
      }),
  };
  // The HTTP/1.0-capable listener is the writer's alone, on the port the supervisor fixed.
  const own = { ...settings, port: worker.port, compatPort: worker.compatPort };
  // Before the public port: readers of a writer being replaced connect again while it warms up, so that no
  // client's write lands before their stream begins (they would drop their queues, unable to tell what they missed).
  const broadcaster = await EventBroadcaster.listen(join(worker.dir, EVENTS_SOCKET), store);
  let parley: Parley;
  try {
    parley = await startParley(store, own, dataDir, images, log, hooks);
  } catch (error) {
    broadcaster.close();
    router.close();
    throw error;
  }
  const hub = parley.http.events;
  hubOf = hub;
  // A queue polled here that another worker holds moves here (realtime/writer-stream).
  hub.setMoveHere((queueId, userId) => broadcaster.moveToWriter(queueId, userId));
  broadcaster.queues = {
    handOver: (queueId, userId, to) => {
      const saved = hub.handOver(queueId, userId);
      if (saved !== null) handoffs.handed(queueId, to);
      return saved;
    },
    expect: (spec) => hub.expect(spec),
    fill: (queueId, saved) => hub.fill(queueId, saved),
  };
  let limits: { close(): void } | null = null;
  try {
    const socketPath = join(worker.dir, WRITER_SOCKET);
    // A writer killed before it could close leaves its socket file, which would refuse the bind.
    rmSync(socketPath, { force: true });
    await parley.http.listenInternal(socketPath);
    limits = await serveSharedLimits(parley.http.limits, join(worker.dir, LIMITS_SOCKET));
  } catch (error) {
    await parley.stop();
    broadcaster.close();
    router.close();
    throw error;
  }
  const stopped = onStop(async () => {
    limits?.close();
    // The store is closed by then: the stream ends after the last batch, and readers may save their queues.
    await parley.stop();
    broadcaster.close();
    router.close();
  });
  tell({ type: "ready" });
  return stopped;
}

/** How often a reader tells the writer which users no longer have queues here. */
const UNWATCH_EVERY_MS = 10_000;

/** How long a stopping reader waits for the writer's last events before saving its queues. */
const WRITER_END_WAIT_MS = 20_000;

/**
 * A reader: answers reads from a follower store, and its own event queues (fed by the
 * writer's event stream); forwards the rest to the writer, and polls of another
 * worker's queue to that worker.
 */
export async function runReader(
  worker: WorkerEnv,
  settings: ServerSettings,
  dataDir: string,
  images: ExternalImages,
  log: Log,
): Promise<number> {
  const forwarder = new FrameForwarder(join(worker.dir, WRITER_SOCKET), worker.name, { log });
  // A queue polled here moves here (realtime/writer-stream), unless this reader handed it away lately
  // (http/queue-routing). Without the writer's stream a queue cannot move: the writer answers (or 502 while it
  // restarts).
  const handoffs = new Handoffs();
  const router = new QueueRouter(worker.name, worker.dir, log, (queueId) => {
    if (http.events.holds(queueId)) return null;
    return handoffs.recent(queueId) ?? (subscriber?.subscribed === true ? null : "writer");
  });
  const store = openFollower(dataDir, {
    noSync: settings.noSync,
    renderer: images.renderer,
    lockToken: worker.lockToken,
    holder: "parley serve (reader worker)",
  });
  const limits = new RemoteLimits(join(worker.dir, LIMITS_SOCKET));
  let stopping = false;
  let subscriber: EventSubscriber | null = null;
  /** The change-log end when the writer's stream ended cleanly, until the next stream begins. */
  let endedAt: number | null = null;
  // Events released meanwhile would be missing from every queue here: their clients register again.
  const dropQueues = (why: string): void => {
    const dropped = http.events.dropAll();
    if (dropped > 0) log(`${worker.name}: ${why}; dropped ${dropped} event queue(s)`);
  };
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
    events: {
      queueIdPrefix: queueIdPrefix(worker.name),
      followsWriter: true,
      moveHere: (queueId, userId) => subscriber?.move(queueId, userId, worker.name) ?? null,
    },
    worker: {
      name: worker.name,
      reader: true,
      downloadKey: worker.downloadKey,
      divert: (res, req, head, unauthorized) => {
        if (!unauthorized) {
          if (router.route(res, req, head)) return true;
          // Queues answered here; registered here while the writer's events arrive (else the writer registers).
          if (head.url === "/api/v1/events" && (head.method === "GET" || head.method === "DELETE")) return false;
          const registerHere = subscriber?.subscribed === true;
          if (head.method === "POST" && head.url === "/api/v1/register" && registerHere) return false;
        }
        // A body is buffered by the writer only, against its budget, which is then the whole server's.
        if (!unauthorized && !writerOnly(head) && !carriesBody(head, req)) return false;
        forwarder.forward(res, req, head);
        return true;
      },
      beforeLocal: () => void store.catchUp(),
      limits,
      watchUser: (userId) => subscriber?.watch(userId) ?? { ready: Promise.resolve(), release: () => undefined },
    },
  });
  // Set once the saved queues are back: from then on the writer's batches name only the users with queues here.
  let queuesInPlace = false;
  subscriber = new EventSubscriber(join(worker.dir, EVENTS_SOCKET), {
    batch: (batch) => {
      try {
        store.releaseWriterBatch(batch);
      } catch (error) {
        log(`${worker.name}: could not deliver the writer's events: ${reason(error)}`);
      }
    },
    subscribed: () => {
      // After a writer's clean stop, the queues here missed nothing unless a write was committed before this stream.
      if (endedAt !== null && store.catchUp().seq !== endedAt) dropQueues("the writer restarted");
      endedAt = null;
      if (queuesInPlace) subscriber?.select(http.events.usersWithQueues());
    },
    queues: {
      adopted: (queue) => {
        const held = http.events.adopt(queue);
        if (!held) log(`${worker.name}: could not take over event queue ${queue.id}`);
        return held;
      },
      expect: (spec) => http.events.expect(spec),
      fill: (queueId, saved) => http.events.fill(queueId, saved),
      describe: (queueId, userId) => http.events.describe(queueId, userId),
      handOver: (queueId, to) => {
        const saved = http.events.handOver(queueId);
        if (saved !== null) handoffs.handed(queueId, to);
        return saved;
      },
    },
    lost: () => {
      if (stopping) return;
      // A writer stopping cleanly (the server stops: this reader's signal may come a moment later) sent every batch.
      if (subscriber?.endedCleanly === true) endedAt = store.catchUp().seq;
      else dropQueues("lost the writer's events");
    },
  });
  const savedFile = `event-queues.${worker.name}.json`;
  process.on("message", (raw: unknown) => {
    const parsed = supervisorMessage.safeParse(raw);
    if (!parsed.success || parsed.data.type !== "send-metrics") return;
    const id = parsed.data.id;
    void http.metricsJson().then((series) => tell({ type: "metrics", id, series }));
  });
  try {
    // Started after the writer was ready: its stream is there (a writer dying meanwhile only delays registrations).
    await Promise.race([subscriber.whenSubscribed(), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
    await restoreQueues(http, store, dataDir, savedFile, subscriber.subscribed, log);
    queuesInPlace = true;
    subscriber.select(http.events.usersWithQueues());
    const socketPath = internalSocket(worker.dir, worker.name);
    // A reader killed before it could close leaves its socket file, which would refuse the bind.
    rmSync(socketPath, { force: true });
    await http.listenInternal(socketPath);
    await http.listen(worker.port, settings.host);
  } catch (error) {
    subscriber.close();
    http.close();
    store.close();
    throw error;
  }
  // Users whose queues went (collected, deleted) are left out of the writer's batches again.
  const sweep = setInterval(() => subscriber.sweep(http.events.usersWithQueues()), UNWATCH_EVERY_MS);
  sweep.unref();
  const stopped = onStop(async () => {
    stopping = true;
    clearInterval(sweep);
    // The writer stops too: its last events (of requests it still answers) reach these queues before they are saved.
    const complete = await subscriber.ended(WRITER_END_WAIT_MS);
    subscriber.close();
    http.events.flush();
    const seq = store.catchUp().seq;
    http.close();
    limits.close();
    if (complete) await saveQueues(http.events.save(), dataDir, savedFile, seq, log);
    else if (http.events.stats.queues > 0)
      log(`${worker.name}: the writer's events did not end cleanly; event queues not saved (clients register again)`);
    // Forwarded requests (long-polls the stopping writer answers) are passed on before the exit.
    const drained = Promise.all([forwarder.drained(), router.drained()]);
    await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
    forwarder.close();
    router.close();
    store.close();
  });
  tell({ type: "ready" });
  return stopped;
}

/**
 * A reader's queues saved at its last clean stop come back when no write was committed
 * since (the writer's events of any such write never reached them); otherwise the file
 * is discarded and their clients get BAD_EVENT_QUEUE_ID and register again.
 */
async function restoreQueues(
  http: ParleyServer,
  store: Store,
  dataDir: string,
  file: string,
  subscribed: boolean,
  log: Log,
): Promise<void> {
  const seq = store.catchUp().seq;
  // Not subscribed: events would be missed from here on; -1 matches no file, which is then discarded.
  const saved = await loadSavedQueues(dataDir, log, { file, seq: subscribed ? seq : -1 });
  if (saved.length === 0) return;
  if (store.catchUp().seq !== seq) {
    log(`discarded ${saved.length} saved event queue(s): writes were committed while they loaded`);
    return;
  }
  const restored = http.events.restore(saved);
  if (restored > 0) log(`restored ${restored} event queue(s) from the last shutdown`);
}

async function saveQueues(
  queues: ReturnType<ParleyServer["events"]["save"]>,
  dataDir: string,
  file: string,
  seq: number,
  log: Log,
): Promise<void> {
  if (queues.length === 0) return;
  try {
    const { saved, dropped } = await writeSavedQueues(dataDir, queues, { file, seq });
    log(`saved ${saved} event queue(s)` + (dropped > 0 ? `; dropped ${dropped} (their clients register again)` : ""));
  } catch (error) {
    log(`could not save event queues (their clients will register again): ${reason(error)}`);
  }
}
