/**
 * @module workers/supervisor
 * The parent of `parley serve --workers N`: it starts one writer worker, then N-1
 * reader workers, each a child process running `parley serve` with its role in the
 * environment (workers/protocol), all on one public port, and keeps them running.
 *
 * Processes from child_process.fork rather than node:cluster: cluster's one gift is
 * the primary accepting connections and handing them to workers, which applies to
 * Node's own net servers only. uWebSockets.js listens from C++, with SO_REUSEPORT on
 * Linux (measured: two processes bind one port and the kernel spreads connections
 * between them), so each worker binds the port itself and the kernel balances new
 * connections; the supervisor only checked beforehand that no other program holds it.
 *
 * - A worker that dies is started again at once (after a growing pause when it keeps
 *   dying young, so a broken start does not spin). A reader's clients reconnect to the
 *   others. While the writer restarts, readers answer what they forward with 502 and
 *   Retry-After; its event queues come back as after any restart (saved ones at a
 *   graceful stop; after a crash, clients get BAD_EVENT_QUEUE_ID and register again).
 * - SIGTERM/SIGINT to the supervisor stop every worker (each stops as `parley serve`
 *   does: the writer saves the event queues) and resolve once all have exited.
 * - A worker whose supervisor dies stops by itself (its IPC channel closes).
 */
import { fork, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  DOWNLOAD_KEY_ENV,
  LOCK_TOKEN_ENV,
  WORKER_COMPAT_PORT_ENV,
  WORKER_COUNT_ENV,
  WORKER_DIR_ENV,
  WORKER_ENV,
  WORKER_PORT_ENV,
  workerMessage,
  type SupervisorMessage,
} from "./protocol.js";

export interface SupervisorOptions {
  /** Workers in all: one writer and count-1 readers. */
  readonly count: number;
  /** The CLI script a worker runs, and its arguments (`serve ...`). */
  readonly script: string;
  readonly args: readonly string[];
  /** The public port, already checked free (never 0: every worker must bind the same one). */
  readonly port: number;
  /** The writer's --compat-port, already checked free (never 0: a restarted writer binds it again), or null. */
  readonly compatPort?: number | null;
  /** Operator messages (stderr). */
  readonly log: (line: string) => void;
  /** The token of the data directory's lock the supervisor holds (engine/storage/lock), which workers join. */
  readonly lockToken: string;
  /** Environment for the workers (default: this process's). */
  readonly env?: NodeJS.ProcessEnv;
}

/** How long a stopping worker may take before it is killed (the writer's queue save is bounded by 10 s). */
const STOP_GRACE_MS = 30_000;
/** A worker that dies younger than this is restarted after a pause. */
const YOUNG_MS = 2_000;
const MAX_PAUSE_MS = 10_000;
/** How long the writer's /metrics waits for the readers' series. */
const METRICS_WAIT_MS = 2_000;

interface Slot {
  readonly name: string;
  child: ChildProcess | null;
  startedAt: number;
  /** Consecutive deaths shortly after start. */
  youngDeaths: number;
  ready: boolean;
}

export class Supervisor {
  readonly #options: SupervisorOptions;
  readonly #dir = mkdtempSync(join(tmpdir(), "parley-workers-"));
  // One for the supervisor's life: a restarted worker still opens the URLs the others handed out.
  readonly #downloadKey = randomBytes(32).toString("hex");
  readonly #slots: Slot[];
  #stopping: Promise<void> | null = null;
  #nextMetricsId = 1;
  /** Per metrics collection: the readers' series received so far and how many are awaited. */
  readonly #collections = new Map<number, { series: unknown[][]; awaited: number; done: () => void }>();

  constructor(options: SupervisorOptions) {
    this.#options = options;
    const slot = (name: string): Slot => ({ name, child: null, startedAt: 0, youngDeaths: 0, ready: false });
    this.#slots = [slot("writer"), ...Array.from({ length: options.count - 1 }, (_, i) => slot(`reader-${i + 1}`))];
  }

  /** Starts the writer, then the readers; rejects (having stopped what started) when one cannot start. */
  async start(): Promise<void> {
    try {
      const [writer, ...readers] = this.#slots;
      await this.#startFirst(writer!);
      await Promise.all(readers.map((slot) => this.#startFirst(slot)));
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  /** Process IDs by worker name (tests kill them). */
  get pids(): Record<string, number | null> {
    return Object.fromEntries(this.#slots.map((s) => [s.name, s.child?.pid ?? null]));
  }

  /** Stops every worker (SIGTERM, SIGKILL after STOP_GRACE_MS) and resolves once all have exited. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      await Promise.all(this.#slots.map((slot) => stopChild(slot.child)));
      rmSync(this.#dir, { recursive: true, force: true });
    })();
    return this.#stopping;
  }

  #startFirst(slot: Slot): Promise<void> {
    const child = this.#spawn(slot);
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null, signal: NodeJS.Signals | null): void =>
        reject(new Error(`the ${slot.name} worker could not start (${signal ?? `exit code ${code}`}); see above`));
      child.once("exit", onExit);
      const onReady = (): void => {
        if (!slot.ready) return;
        child.off("exit", onExit);
        child.off("message", onReady);
        resolve();
      };
      child.on("message", onReady);
    });
  }

  #spawn(slot: Slot): ChildProcess {
    const child = fork(this.#options.script, [...this.#options.args], {
      env: {
        ...(this.#options.env ?? process.env),
        [WORKER_ENV]: slot.name,
        [WORKER_DIR_ENV]: this.#dir,
        [WORKER_PORT_ENV]: String(this.#options.port),
        [WORKER_COUNT_ENV]: String(this.#options.count),
        [LOCK_TOKEN_ENV]: this.#options.lockToken,
        [DOWNLOAD_KEY_ENV]: this.#downloadKey,
        ...(this.#options.compatPort != null ? { [WORKER_COMPAT_PORT_ENV]: String(this.#options.compatPort) } : {}),
      },
      stdio: ["ignore", "ignore", "inherit", "ipc"],
    });
    slot.child = child;
    slot.startedAt = Date.now();
    slot.ready = false;
    child.on("message", (raw: unknown) => this.#onMessage(slot, raw));
    child.once("exit", (code, signal) => this.#onExit(slot, child, code, signal));
    return child;
  }

  #onMessage(slot: Slot, raw: unknown): void {
    const parsed = workerMessage.safeParse(raw);
    if (!parsed.success) return;
    const message = parsed.data;
    if (message.type === "ready") slot.ready = true;
    else if (message.type === "collect-metrics") this.#collectMetrics(slot, message.id);
    else {
      const collection = this.#collections.get(message.id);
      if (collection === undefined) return;
      collection.series.push(message.series);
      if (collection.series.length >= collection.awaited) collection.done();
    }
  }

  /** Asks every ready reader for its series and hands them to the writer (whatever came within METRICS_WAIT_MS). */
  #collectMetrics(writer: Slot, writerId: number): void {
    const readers = this.#slots.filter((s) => s.name !== "writer" && s.ready && s.child?.connected);
    const id = this.#nextMetricsId++;
    const series: unknown[][] = [];
    let answered = false;
    const done = (): void => {
      if (answered) return;
      answered = true;
      this.#collections.delete(id);
      send(writer.child, { type: "peer-metrics", id: writerId, series });
    };
    if (readers.length === 0) return done();
    this.#collections.set(id, { series, awaited: readers.length, done });
    setTimeout(done, METRICS_WAIT_MS).unref();
    for (const reader of readers) send(reader.child, { type: "send-metrics", id });
  }

  #onExit(slot: Slot, child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (slot.child !== child) return;
    slot.child = null;
    const wasReady = slot.ready;
    slot.ready = false;
    if (this.#stopping !== null || !wasReady) return;
    const young = Date.now() - slot.startedAt < YOUNG_MS;
    slot.youngDeaths = young ? slot.youngDeaths + 1 : 0;
    const pause = young ? Math.min(MAX_PAUSE_MS, 250 * 2 ** slot.youngDeaths) : 0;
    this.#options.log(
      `${slot.name} worker (pid ${child.pid}) ended (${signal ?? `exit code ${code}`}); starting another` +
        (pause > 0 ? ` in ${pause} ms` : ""),
    );
    setTimeout(() => {
      if (this.#stopping === null) this.#respawn(slot);
    }, pause);
  }

  /** A replacement: one that fails to start is replaced again (by #onExit, once it was ready; here otherwise). */
  #respawn(slot: Slot): void {
    const child = this.#spawn(slot);
    child.once("exit", (code, signal) => {
      if (slot.ready || this.#stopping !== null || slot.child !== null) return;
      slot.youngDeaths++;
      const pause = Math.min(MAX_PAUSE_MS, 250 * 2 ** slot.youngDeaths);
      this.#options.log(`${slot.name} worker failed to start (${signal ?? `exit code ${code}`}); again in ${pause} ms`);
      setTimeout(() => {
        if (this.#stopping === null) this.#respawn(slot);
      }, pause);
    });
  }
}

function send(child: ChildProcess | null, message: SupervisorMessage): void {
  if (child?.connected) child.send(message);
}

function stopChild(child: ChildProcess | null): Promise<void> {
  if (child === null || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill("SIGTERM");
  });
}
