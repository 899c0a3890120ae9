/**
 * @module serve-cluster
 * One node of `parley serve --cluster` (docs/cluster.md), composed beside src/server.ts,
 * which it runs while it leads.
 *
 * A node starts as a follower: it reconciles its store with the replicated log (undoing
 * what it committed as a leader and the log lacks, §6), opens it as a replica, serves
 * reads, registrations and event queues from it, forwards the rest to the leader, and
 * applies the log as it grows. Once a second it reads the lease; when nobody holds it
 * and the node has applied the whole log, it takes it and becomes the leader: the
 * replica closes, the same directory opens as the writer with its transactions
 * captured for the log, and `parley serve` runs on the same port, answering each write
 * only once JetStream stored it. A leader that cannot renew its lease, or whose append
 * the log refuses, steps down: it stops serving, waits for its appends to settle,
 * and starts again as a follower.
 */
import { rmSync } from "node:fs";
import { createServer as createProbe } from "node:net";
import { join } from "node:path";
import type { IncomingMessage } from "node:http";
import { LogPublisher } from "./cluster/publisher.js";
import { ClusterLog, type Lease, type LogEntry } from "./cluster/log.js";
import type { Store } from "./engine/index.js";
import { openReplica, openStore } from "./index.js";
import type { ClusterHooks, ClusterStatus } from "./http/cluster-hooks.js";
import { carriesBody, Forwarder, refuseAfterBody, writerOnly } from "./http/forward.js";
import { METRICS_PATH } from "./http/metrics.js";
import { errorReply } from "./http/respond.js";
import type { RequestHead } from "./http/request.js";
import type { HttpRequest, HttpResponse } from "uWebSockets.js";
import { listenStandby } from "./http/standby.js";
import { createServer, type ParleyServer } from "./http/server.js";
import { WORKER_HEADER } from "./http/worker-headers.js";
import { SAVED_QUEUES_FILE } from "./realtime/index.js";
import { startParley, urlHost, type ExternalImages, type Log, type Parley, type ServerSettings } from "./server.js";

export interface ClusterSettings {
  /** nats://HOST:PORT of a NATS server with JetStream. */
  readonly natsUrl: string;
  /** This node's name, unique in the cluster. */
  readonly node: string;
  /** Messages the log keeps (docs/cluster.md §7). */
  readonly maxLog: number;
  /** The URL other nodes forward writes to (default http://HOST:PORT as bound). */
  readonly advertiseUrl?: string;
}

/** The lease's time to live; renewed every LEASE_RENEW_MS, given up when not renewed for LEASE_GIVE_UP_MS. */
export const LEASE_TTL_MS = 3_000;
const LEASE_RENEW_MS = 1_000;
const LEASE_GIVE_UP_MS = 2_500;
/** Bytes the stream of large entries' parts keeps (docs/cluster.md §7). */
const LOG_PART_BYTES = 1024 ** 3;
/** Header of a leader's answer to a write: the log sequence that covers it (a follower waits to apply it). */
export const LOG_SEQ_HEADER = "X-Parley-Log-Seq";
/** How long a follower holds a forwarded write's answer for its own apply of it (read-your-writes). */
const APPLY_WAIT_MS = 5_000;

/** A free port on `host`, for a node started with --port 0. */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createProbe();
    probe.once("error", reject);
    probe.listen({ port: 0, host, exclusive: true }, () => {
      const address = probe.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

interface FollowerParts {
  readonly store: Store;
  readonly http: ParleyServer;
  readonly forwarder: Forwarder;
  follow: { stop(): void } | null;
}

interface LeaderParts {
  readonly parley: Parley;
  readonly publisher: LogPublisher;
  revision: number;
  renewedAt: number;
}

export class ClusterNode {
  readonly #settings: ServerSettings;
  readonly #cluster: ClusterSettings;
  readonly #dataDir: string;
  readonly #images: ExternalImages;
  readonly #log: Log;
  #clusterLog: ClusterLog | null = null;
  #port: number;
  #role: "follower" | "leader" = "follower";
  #serving = false;
  #reason: string | null = "starting";
  #applied = 0;
  /** LMDB transactions this node applied log messages in (/metrics: several messages read together share one). */
  #applyCommits = 0;
  #streamLast = 0;
  #lease: Lease | null = null;
  #follower: FollowerParts | null = null;
  #leader: LeaderParts | null = null;
  #applyWaiters: { seq: number; resolve: () => void }[] = [];
  #timer: NodeJS.Timeout | null = null;
  /** The lease loop and role changes run one at a time. */
  #busy = false;
  #stopped = false;
  /** Between the replica's close and the leader's listen: the follower's server answers 503. */
  #handingOver = false;

  constructor(settings: ServerSettings, cluster: ClusterSettings, dataDir: string, images: ExternalImages, log: Log) {
    this.#settings = settings;
    this.#cluster = cluster;
    this.#dataDir = dataDir;
    this.#images = images;
    this.#log = log;
    this.#port = settings.port;
  }

  get port(): number {
    return this.#port;
  }

  get url(): string {
    return this.#cluster.advertiseUrl ?? `http://${urlHost(this.#settings.host)}:${this.#port}`;
  }

  status(): ClusterStatus {
    const connected = this.#clusterLog?.connected ?? false;
    const serving = this.#serving && connected;
    return {
      role: this.#role,
      serving,
      reason: serving ? null : connected ? this.#reason : "this node cannot reach the cluster's NATS server",
      applied: this.#role === "leader" ? (this.#leader?.publisher.stored ?? this.#applied) : this.#applied,
      lag: Math.max(0, this.#streamLast - this.#applied),
      applyCommits: this.#applyCommits,
      leader: this.#role === "leader" ? this.#cluster.node : (this.#lease?.node ?? null),
    };
  }

  /** Connects to NATS, starts as a follower and runs the lease loop. */
  async start(): Promise<void> {
    // Each role's server binds the port while the other still has it (SO_REUSEPORT), which needs a fixed port.
    if (this.#port === 0) this.#port = await freePort(this.#settings.host);
    this.#clusterLog = await ClusterLog.open({
      url: this.#cluster.natsUrl,
      node: this.#cluster.node,
      maxMessages: this.#cluster.maxLog,
      maxPartBytes: LOG_PART_BYTES,
      leaseTtlMs: LEASE_TTL_MS,
      onConnection: (connected) => this.#connectionChanged(connected),
    });
    await this.#becomeFollower();
    this.#timer = setInterval(() => void this.#tick(), LEASE_RENEW_MS);
  }

  #connectionChanged(connected: boolean): void {
    this.#log(connected ? "NATS connection back" : "NATS connection lost: writes are refused until it is back");
    if (connected || this.#leader === null || this.#stopped) return;
    // Cut off, a leader can neither store a write nor keep its lease: it stops serving at once (§5).
    this.#serving = false;
    void this.#stepDownLater("its connection to the cluster's NATS server was lost");
  }

  async #untilConnected(): Promise<void> {
    while (!this.#stopped && !this.#requireLog().connected) await new Promise((resolve) => setTimeout(resolve, 250));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) clearInterval(this.#timer);
    while (this.#busy) await new Promise((resolve) => setTimeout(resolve, 20));
    this.#busy = true;
    const leader = this.#leader;
    if (leader !== null) {
      await leader.parley.stop();
      leader.parley.http.dropConnections();
      await leader.publisher.drained();
      await this.#clusterLog?.release(leader.revision);
      this.#leader = null;
    }
    this.#closeFollower();
    await this.#clusterLog?.close();
  }

  async #tick(): Promise<void> {
    if (this.#busy || this.#stopped) return;
    this.#busy = true;
    try {
      if (this.#leader !== null) await this.#renew(this.#leader);
      else await this.#electIfFree();
    } catch (error) {
      this.#log(`lease check failed: ${reason(error)}`);
    } finally {
      this.#busy = false;
    }
  }

  async #renew(leader: LeaderParts): Promise<void> {
    const log = this.#requireLog();
    try {
      leader.revision = await withTimeout(
        log.renew(this.#cluster.node, this.url, leader.revision),
        LEASE_RENEW_MS,
        "lease renewal",
      );
      leader.renewedAt = Date.now();
    } catch (error) {
      if (Date.now() - leader.renewedAt >= LEASE_GIVE_UP_MS || !/no answer/.test(reason(error)))
        await this.#stepDown(`the lease could not be renewed (${reason(error)})`);
    }
  }

  async #electIfFree(): Promise<void> {
    const log = this.#requireLog();
    if (!log.connected) return;
    this.#lease = await withTimeout(log.lease(), LEASE_RENEW_MS, "lease read");
    const range = await withTimeout(log.range(), LEASE_RENEW_MS, "log range");
    this.#streamLast = range.last;
    if (this.#lease !== null || this.#applied !== range.last || this.#follower === null) return;
    const revision = await log.acquire(this.#cluster.node, this.url);
    if (revision !== null) await this.#promote(revision);
  }

  #requireLog(): ClusterLog {
    if (this.#clusterLog === null) throw new Error("the cluster node was not started");
    return this.#clusterLog;
  }

  // ---- follower ----

  async #becomeFollower(): Promise<void> {
    const log = this.#requireLog();
    this.#role = "follower";
    this.#serving = false;
    this.#reason = "catching up with the cluster's log";
    // Reconciling needs the log: a node cut off waits (its port answers 503 meanwhile, see #stepDown).
    await this.#untilConnected();
    if (this.#stopped) return;
    const store = openReplica(this.#dataDir, {
      noSync: this.#settings.noSync,
      renderer: this.#images.renderer,
      holder: `parley serve --cluster (${this.#cluster.node})`,
    });
    try {
      await this.#reconcile(store, log);
    } catch (error) {
      store.close();
      throw error;
    }
    this.#applied = store.replicationPosition.seq;
    const forwarder = new Forwarder({ url: () => this.#leaderUrl() }, this.#cluster.node, {
      upstream: "leader",
      beforeAnswer: (answer) => this.#appliedAnswer(answer),
    });
    const http = createServer(store, {
      config: this.#settings.config,
      dataDir: this.#dataDir,
      camoKey: this.#images.camoKey,
      ...(this.#settings.externalHost !== undefined ? { externalHost: this.#settings.externalHost } : {}),
      ...(this.#settings.rateLimit ? {} : { rateLimit: false as const, authFailureLimit: false as const }),
      requestLog: {
        level: this.#settings.logLevel,
        destination: this.#settings.logFile ?? "stdout",
        slowMs: this.#settings.slowRequestMs,
      },
      ...(process.env["PARLEY_METRICS_TOKEN"] ? { metricsToken: process.env["PARLEY_METRICS_TOKEN"] } : {}),
      worker: {
        name: this.#cluster.node,
        reader: true,
        divert: (res, req, head, unauthorized) => {
          const refusal = this.#handingOver
            ? "This node is taking over as the cluster's leader; try again in a moment"
            : unauthorized || !forwarded(head)
              ? null
              : log.connected
                ? null
                : "This node cannot reach the cluster's NATS server: writes are refused until it can";
          if (refusal !== null) {
            refuseAfterBody(res, carriesBody(head, req), errorReply(503, refusal, null), [
              [WORKER_HEADER, this.#cluster.node],
              ["Retry-After", "1"],
            ]);
            return true;
          }
          if (unauthorized || !forwarded(head)) return false;
          forwarder.forward(res, req, head.remoteAddress);
          return true;
        },
        cluster: this.#hooks(),
      },
    });
    try {
      this.#port = await http.listen(this.#port, this.#settings.host);
    } catch (error) {
      http.close();
      store.close();
      throw error;
    }
    const parts: FollowerParts = { store, http, forwarder, follow: null };
    this.#follower = parts;
    parts.follow = await log.follow(
      this.#applied + 1,
      (entries) => this.#applyFromLog(parts, entries),
      (seq, error) => this.#cannotApply(parts, seq, error),
    );
    // Know the leader before serving: else writes sent here in the first second answer "No leader is known yet".
    this.#lease = await withTimeout(log.lease(), LEASE_RENEW_MS, "lease read").catch(() => null);
    this.#serving = true;
    this.#reason = null;
    this.#log(`following the cluster's log from sequence ${this.#applied + 1} (${this.url})`);
  }

  /** §6: undo what this node committed as a leader and the log does not hold, then check the log reaches back. */
  async #reconcile(store: Store, log: ClusterLog): Promise<void> {
    const range = await log.range();
    for (;;) {
      const position = store.replicationPosition;
      if (position.seq === 0) break;
      if (position.seq <= range.last) {
        if (position.seq < range.first) break;
        if ((await log.idAt(position.seq)) === position.id) break;
      }
      if (!store.undoUnreplicated())
        throw new Error(
          `the data directory is at log sequence ${position.seq}, which the cluster's log does not hold and this ` +
            "node cannot undo: bootstrap it again from a backup of another node (parley backup, parley restore)",
        );
      this.#log(`undid transaction ${position.seq}: it never reached the cluster's log`);
    }
    const at = store.replicationPosition.seq;
    if (at < range.first - 1)
      throw new Error(
        `the data directory is at log sequence ${at} but the cluster's log starts at ${range.first}: this node fell ` +
          "too far behind; bootstrap it again from a backup of another node (parley backup, parley restore)",
      );
    store.dropUndoThrough(at);
  }

  /** Log messages read together: one LMDB transaction (§2). */
  #applyFromLog(parts: FollowerParts, entries: readonly LogEntry[]): void {
    if (this.#follower !== parts) return;
    const fresh = entries.filter((entry) => entry.seq > this.#applied);
    const last = fresh[fresh.length - 1]?.seq;
    if (last === undefined) return;
    try {
      for (const { txn, seq } of fresh)
        if (seq !== txn.seq) throw new Error(`log message ${seq} holds transaction ${txn.seq}`);
      parts.store.applyReplicated(fresh.map((entry) => entry.txn));
      this.#applyCommits++;
    } catch (error) {
      this.#cannotApply(parts, fresh[0]!.seq, error);
      return;
    }
    const seq = last;
    this.#applied = seq;
    this.#streamLast = Math.max(this.#streamLast, seq);
    if (this.#applyWaiters.length === 0) return;
    const waiting = this.#applyWaiters;
    this.#applyWaiters = [];
    for (const waiter of waiting) {
      if (waiter.seq <= seq) waiter.resolve();
      else this.#applyWaiters.push(waiter);
    }
  }

  #cannotApply(parts: FollowerParts, seq: number, error: unknown): void {
    if (this.#follower !== parts) return;
    this.#log(`cannot apply log sequence ${seq}: ${reason(error)}; starting over as a follower`);
    this.#serving = false;
    this.#reason = `cannot apply log sequence ${seq}`;
    parts.follow?.stop();
    void this.#restartFollower();
  }

  async #restartFollower(): Promise<void> {
    while (this.#busy) await new Promise((resolve) => setTimeout(resolve, 20));
    this.#busy = true;
    try {
      this.#closeFollower();
      await this.#becomeFollower();
    } catch (error) {
      this.#log(`could not start again as a follower: ${reason(error)}`);
      process.exitCode = 1;
      await this.stop();
    } finally {
      this.#busy = false;
    }
  }

  /** Read-your-writes through a follower: the answer to a forwarded write waits until this node applied it. */
  #appliedAnswer(answer: IncomingMessage): Promise<void> {
    const seq = Number(answer.headers[LOG_SEQ_HEADER.toLowerCase()]);
    if (!Number.isInteger(seq) || seq <= this.#applied) return Promise.resolve();
    return new Promise((resolve) => {
      this.#applyWaiters.push({ seq, resolve });
      setTimeout(resolve, APPLY_WAIT_MS).unref();
    });
  }

  #leaderUrl(): string | null {
    const lease = this.#lease;
    if (lease === null || lease.node === this.#cluster.node) return null;
    return lease.url;
  }

  /** `storeOpen`: false when a promotion closed the replica store already. */
  #closeFollower(storeOpen = true): void {
    const parts = this.#follower;
    if (parts === null) return;
    this.#follower = null;
    this.#handingOver = false;
    parts.follow?.stop();
    parts.http.close();
    parts.http.dropConnections();
    parts.forwarder.close();
    if (storeOpen) parts.store.close();
    for (const waiter of this.#applyWaiters.splice(0)) waiter.resolve();
  }

  // ---- leader ----

  async #promote(revision: number): Promise<void> {
    const log = this.#requireLog();
    const parts = this.#follower;
    if (parts === null) return;
    this.#serving = false;
    this.#reason = "taking over as the leader";
    this.#log("took the lease: applying the rest of the log, then serving writes");
    parts.follow?.stop();
    try {
      const range = await log.range();
      while (this.#applied < range.last) {
        const txn = await log.transactionAt(this.#applied + 1);
        if (txn === null) throw new Error(`log sequence ${this.#applied + 1} is missing`);
        parts.store.applyReplicated([txn]);
        this.#applyCommits++;
        this.#applied = txn.seq;
      }
    } catch (error) {
      this.#log(`could not catch up before leading (${reason(error)}): giving the lease back`);
      await log.release(revision);
      await this.#restartFollowerHeld();
      return;
    }
    // The follower's server keeps the port (answering 503) until the leader's binds it too.
    this.#handingOver = true;
    parts.store.close();
    // Queues saved by a former leadership of this node miss every event since: their clients register again.
    rmSync(join(this.#dataDir, SAVED_QUEUES_FILE), { force: true });
    let leader: LeaderParts | null = null;
    const publisher = new LogPublisher(
      log,
      this.#applied,
      (seq) => {
        this.#applied = seq;
        this.#streamLast = Math.max(this.#streamLast, seq);
        leader?.parley.store.confirmReplicated(seq);
      },
      (error) => void this.#stepDownLater(`the log refused an append (${error.message})`),
    );
    const store = openStore(this.#dataDir, {
      noSync: this.#settings.noSync,
      renderer: this.#images.renderer,
      holder: `parley serve --cluster (${this.#cluster.node}, leader)`,
      replication: publisher,
    });
    try {
      const parley = await startParley(
        store,
        { ...this.#settings, port: this.#port },
        this.#dataDir,
        this.#images,
        this.#log,
        {
          name: this.#cluster.node,
          cluster: this.#hooks(publisher, store),
          divert: (res, req, head) => this.#refuseUnlessServing(res, req, head),
        },
      );
      leader = { parley, publisher, revision, renewedAt: Date.now() };
      this.#closeFollower(false);
    } catch (error) {
      store.close();
      this.#closeFollower(false);
      this.#log(`could not start serving as the leader (${reason(error)}): giving the lease back`);
      await log.release(revision);
      await publisher.drained();
      await this.#restartFollowerHeld();
      return;
    }
    this.#leader = leader;
    this.#role = "leader";
    this.#serving = true;
    this.#reason = null;
    this.#log(`leading the cluster from log sequence ${this.#applied} (${this.url})`);
  }

  /**
   * A leader's request while it cannot serve (stepping down, cut off from NATS): 503
   * saying why, but /health and /metrics. Reads too: its store may hold writes the
   * log lacks, which it undoes before it serves again (§6).
   */
  #refuseUnlessServing(res: HttpResponse, req: HttpRequest, head: RequestHead): boolean {
    if (head.url === "/health" || head.url === METRICS_PATH) return false;
    const now = this.status();
    if (now.serving) return false;
    const refusal = errorReply(503, `This node cannot serve now (${now.reason ?? "changing role"}): try again`, null);
    refuseAfterBody(res, carriesBody(head, req), refusal, [
      [WORKER_HEADER, this.#cluster.node],
      ["Retry-After", "1"],
    ]);
    return true;
  }

  /** Becomes a follower again while #busy is already held by the caller; waits for NATS when it is away. */
  async #restartFollowerHeld(): Promise<void> {
    this.#closeFollower();
    for (;;) {
      try {
        await this.#becomeFollower();
        return;
      } catch (error) {
        this.#closeFollower();
        if (this.#stopped) return;
        if (!this.#requireLog().connected) {
          this.#log(`rejoining as a follower once NATS is back (${reason(error)})`);
          continue;
        }
        this.#log(`could not start again as a follower: ${reason(error)}`);
        process.exitCode = 1;
        void this.stop();
        return;
      }
    }
  }

  async #stepDownLater(why: string): Promise<void> {
    while (this.#busy) await new Promise((resolve) => setTimeout(resolve, 20));
    this.#busy = true;
    try {
      await this.#stepDown(why);
    } finally {
      this.#busy = false;
    }
  }

  /** Stops leading (#busy held): stop serving, let appends settle, and follow again from what the log holds. */
  async #stepDown(why: string): Promise<void> {
    const leader = this.#leader;
    if (leader === null || this.#stopped) return;
    this.#log(`stepping down: ${why}`);
    this.#serving = false;
    this.#reason = `stepping down: ${why}`;
    this.#leader = null;
    this.#role = "follower";
    // Until the follower's server takes the port (after NATS is back, if it is away), it answers 503 saying why.
    const standby = await listenStandby(this.#settings.host, this.#port, this.#cluster.node, () => this.status()).catch(
      (error: unknown) => {
        this.#log(`the port answers nothing until this node follows again (${reason(error)})`);
        return null;
      },
    );
    try {
      // Appends settle first (stored, or refused: their requests get 503), then the server stops.
      await leader.publisher.drained();
      await new Promise((resolve) => setImmediate(resolve));
      await leader.parley.stop();
      leader.parley.http.dropConnections();
      await this.#restartFollowerHeld();
    } finally {
      standby?.close();
    }
  }

  #hooks(publisher?: LogPublisher, store?: Store): ClusterHooks {
    const status = (): ClusterStatus => this.status();
    const uploads = this.#requireLog().uploads;
    if (publisher === undefined || store === undefined) return { status, uploads };
    return {
      status,
      uploads,
      beforeReply: async () => {
        const seq = store.replicationPosition.seq;
        try {
          await publisher.whenStored(seq);
          return { headers: [[LOG_SEQ_HEADER, String(seq)]] };
        } catch (error) {
          return {
            refusal: errorReply(
              503,
              `This node lost the leadership before the write was stored in the cluster's log (${reason(error)}); ` +
                "it was not kept: try again",
              null,
            ),
            headers: [["Retry-After", "1"]],
          };
        }
      },
    };
  }
}

/** What a follower forwards to the leader: what only a writer answers, but its own event queues and metrics. */
function forwarded(head: RequestHead): boolean {
  const url = head.url;
  if (url === METRICS_PATH || url === "/health" || url === "/api/v1/events") return false;
  if (head.method === "POST" && url === "/api/v1/register") return false;
  return writerOnly(head);
}
