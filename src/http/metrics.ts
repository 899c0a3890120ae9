/**
 * @module http/metrics
 * GET /metrics in Prometheus text format (prom-client), outside /api/v1: requests by
 * route template and status, latency histograms, event queues and waiting long-polls,
 * events delivered, messages sent, flag updates, LMDB map size and pages in use,
 * bitmap cache bytes, and Node's process collectors (CPU, memory, event loop lag).
 * parley has no mail or push outbox yet, so there are no outbox depths to export.
 *
 * Labels are route templates, never raw paths, so a client cannot grow the number of
 * series. Readers: loopback clients, or anyone presenting the configured bearer token
 * (metrics name users' activity levels and the deployment's size, so they are not
 * public).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { BlockList, isIP } from "node:net";
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Store } from "../engine/index.js";
import type { EventHub } from "../realtime/index.js";
import { errorReply, type Reply } from "./respond.js";
import type { ClusterStatus } from "./cluster-hooks.js";

export const METRICS_PATH = "/metrics";

/** 127.0.0.0/8 and ::1; Node's BlockList also matches their IPv4-mapped and long IPv6 spellings. */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/** Whether a peer address (as uWS or Node give it) is this machine's loopback. */
export function isLoopback(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && LOOPBACK.check(address, family === 4 ? "ipv4" : "ipv6");
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** Loopback, or `Authorization: Bearer <token>` with the configured token (compared in constant time). */
export function mayReadMetrics(remoteAddress: string, authorization: string, token: string | undefined): boolean {
  if (isLoopback(remoteAddress)) return true;
  if (token === undefined || token === "") return false;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match !== null && timingSafeEqual(digest(match[1]!), digest(token));
}

/**
 * Node's process collectors, once per process: they start an event-loop delay
 * monitor and GC observers, which every server in a process (tests make many) would
 * otherwise add again.
 */
let processRegistry: Registry | null = null;
function processMetrics(): Registry {
  if (processRegistry === null) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export class ServerMetrics {
  readonly registry = new Registry();
  readonly #requests: Counter<"method" | "path" | "status">;
  readonly #latency: Histogram<"method" | "path">;
  readonly #unsubscribe: () => void;

  /**
   * `countsCommits` false: a reader worker's, whose store releases the writer's events too; the writer counts
   * what was committed (messages, flag changes), else the summed /metrics of `parley serve --workers` doubled it.
   */
  constructor(store: Store, events: EventHub, cluster?: () => ClusterStatus, countsCommits = true) {
    const registers = [this.registry];
    if (cluster !== undefined) ServerMetrics.#clusterGauges(registers, cluster);
    this.#requests = new Counter({
      name: "parley_http_requests_total",
      help: 'HTTP requests by method, route template and status ("aborted" when the client left first)',
      labelNames: ["method", "path", "status"],
      registers,
    });
    this.#latency = new Histogram({
      name: "parley_http_request_duration_seconds",
      help: "Time from request head to response, by method and route template (GET /api/v1/events includes long-poll waits)",
      labelNames: ["method", "path"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 90],
      registers,
    });
    const sent = new Counter({
      name: "parley_messages_sent_total",
      help: "Messages stored (sends and scheduled deliveries)",
      registers,
    });
    const flagUpdates = new Counter({
      name: "parley_flag_updates_total",
      help: "Flag changes committed, by flag and op",
      labelNames: ["flag", "op"],
      registers,
    });
    const flagMessages = new Counter({
      name: "parley_flag_update_messages_total",
      help: "Messages whose flag changed, by flag and op",
      labelNames: ["flag", "op"],
      registers,
    });
    const renderFailures = new Counter({
      name: "parley_markdown_render_failures_total",
      help: "Messages stored as plain text because the Markdown renderer failed (each is logged with its ID)",
      registers,
    });
    const stopRenderFailures = store.onRenderFailure(() => renderFailures.inc());
    const stopEvents = store.onEvents((batch) => {
      if (!countsCommits) return;
      for (const { event } of batch.deliveries) {
        if (event.type === "message") sent.inc();
        else if (event.type === "update_message_flags") {
          flagUpdates.inc({ flag: event.flag, op: event.op });
          flagMessages.inc({ flag: event.flag, op: event.op }, event.messages.length);
        }
      }
    });
    this.#unsubscribe = () => {
      stopEvents();
      stopRenderFailures();
    };

    const hub = (pick: (s: EventHub["stats"]) => number) =>
      function (this: Gauge) {
        this.set(pick(events.stats));
      };
    new Gauge({
      name: "parley_event_queues",
      help: "Event queues registered",
      registers,
      collect: hub((s) => s.queues),
    });
    new Gauge({
      name: "parley_event_polls_waiting",
      help: "Long-polls (GET /events) waiting for events",
      registers,
      collect: hub((s) => s.polling),
    });
    new Gauge({
      name: "parley_event_queued_events",
      help: "Events held in queues, not yet acknowledged",
      registers,
      collect: hub((s) => s.queuedEvents),
    });
    let delivered = 0;
    new Counter({
      name: "parley_events_delivered_total",
      help: "Events put into event queues",
      registers,
      collect() {
        const now = events.stats.eventsDelivered;
        if (now > delivered) this.inc(now - delivered);
        delivered = now;
      },
    });

    const storage = (pick: (s: ReturnType<Store["storageStats"]>) => number) =>
      function (this: Gauge) {
        this.set(pick(store.storageStats()));
      };
    new Gauge({
      name: "parley_lmdb_map_size_bytes",
      // One environment, seen by every worker of `parley serve --workers`: not a sum.
      aggregator: "max",
      help: "LMDB map size (address space reserved for the data file)",
      registers,
      collect: storage((s) => s.mapSizeBytes),
    });
    new Gauge({
      name: "parley_lmdb_pages_used",
      // One environment, seen by every worker of `parley serve --workers`: not a sum.
      aggregator: "max",
      help: "LMDB pages up to the highest one written (freed pages inside are reused first)",
      registers,
      collect: storage((s) => s.pagesUsed),
    });
    new Gauge({
      name: "parley_lmdb_page_size_bytes",
      // One environment, seen by every worker of `parley serve --workers`: not a sum.
      aggregator: "max",
      help: "LMDB page size",
      registers,
      collect: storage((s) => s.pageSize),
    });
    new Gauge({
      name: "parley_lmdb_readers",
      // One environment, seen by every worker of `parley serve --workers`: not a sum.
      aggregator: "max",
      help: "LMDB read transactions open, from any process (a running backup holds one)",
      registers,
      collect: storage((s) => s.readers),
    });
    new Gauge({
      name: "parley_bitmap_cache_bytes",
      help: "Approximate bytes of bitmaps held in the engine's cache",
      registers,
      collect: storage((s) => s.bitmapCacheBytes),
    });
  }

  /** A cluster node's role, applied log sequence and lag (docs/cluster.md §9). */
  static #clusterGauges(registers: Registry[], status: () => ClusterStatus): void {
    const gauge = (name: string, help: string, pick: (s: ClusterStatus) => number): void => {
      new Gauge({
        name,
        help,
        registers,
        collect(this: Gauge) {
          this.set(pick(status()));
        },
      });
    };
    gauge("parley_cluster_role", "1 on the cluster's leader, 0 on a follower", (s) => (s.role === "leader" ? 1 : 0));
    gauge("parley_cluster_serving", "1 while the node serves (see GET /health)", (s) => (s.serving ? 1 : 0));
    gauge("parley_cluster_applied_seq", "The replicated log's sequence this node has applied", (s) => s.applied);
    gauge("parley_cluster_lag", "Log messages stored by JetStream and not yet applied here", (s) => s.lag);
    gauge(
      "parley_cluster_apply_commits",
      "LMDB transactions this node applied log messages in (messages read together share one)",
      (s) => s.applyCommits,
    );
  }

  /** One finished request. `status` null: the client went away first. */
  observe(method: string, path: string, status: number | null, seconds: number): void {
    this.#requests.inc({ method, path, status: status === null ? "aborted" : String(status) });
    this.#latency.observe({ method, path }, seconds);
  }

  /**
   * The response to GET /metrics (access already checked). With `peers` (the other
   * workers of `parley serve --workers`), every series is summed over the workers
   * (LMDB's, which all see alike, take the largest), so it reports the whole server.
   */
  async scrape(peers?: () => Promise<readonly unknown[]>): Promise<Reply> {
    if (peers !== undefined) {
      const all = [await this.json(), ...(await peers()).filter((p): p is unknown[] => Array.isArray(p))];
      const body = await AggregatorRegistry.aggregate(all).metrics();
      return { status: 200, body, contentType: this.registry.contentType };
    }
    const [process, server] = await Promise.all([processMetrics().metrics(), this.registry.metrics()]);
    return { status: 200, body: `${process}\n${server}`, contentType: this.registry.contentType };
  }

  /** This process's series as prom-client JSON, for the worker that aggregates. */
  async json(): Promise<unknown[]> {
    const [process, server] = await Promise.all([
      processMetrics().getMetricsAsJSON(),
      this.registry.getMetricsAsJSON(),
    ]);
    return [...process, ...server];
  }

  /** Refusals: 405 for other methods, 401 without loopback or the token. */
  static refusal(method: string, allowed: boolean, tokenConfigured: boolean): Reply | null {
    if (method !== "GET")
      return errorReply(405, "Method Not Allowed", null, { allowed_methods: ["GET"] }, [["Allow", "GET"]]);
    if (allowed) return null;
    return errorReply(
      401,
      tokenConfigured
        ? "Metrics are served to loopback clients and to Authorization: Bearer with the metrics token"
        : "Metrics are served to loopback clients only (no metrics token is configured)",
      "UNAUTHORIZED",
      {},
      [["WWW-Authenticate", 'Bearer realm="metrics"']],
    );
  }

  close(): void {
    this.#unsubscribe();
    this.registry.clear();
  }
}
