/**
 * @module tools/commands/serve
 * `parley serve [--data DIR] [--config FILE] [--port N] [--host H] [--external-host NAME] [--compat-port N]
 * [--no-rate-limit] [--no-sync] [--log-level L] [--log-file PATH] [--slow-request-ms N]`:
 * opens the store (creating the directory), serves the Zulip API and prints
 * `listening on http://HOST:PORT` as its first line of output, so scripts and tests
 * can read the bound port even with --port 0. Settings come from the configuration
 * file (--config FILE, else DATA/parley.json when present; src/config), flags
 * override. The server itself is composed in src/server.ts; SIGINT or SIGTERM stops it
 * and the process exits 0. The settings and signal steps are exported for `parley start`.
 */
import { checkJwtKeys, ConfigError, resolveConfig } from "../../src/config/index.js";
import { DataDirectoryLockedError, lockDataDir, type DataDirLock, type Store } from "../../src/engine/index.js";
import { DEFAULT_SLOW_MS, LOG_LEVELS, type LogLevel } from "../../src/http/request-log.js";
import {
  checkPortFree,
  externalImages,
  startParley,
  urlHost,
  type Parley,
  type ServerSettings,
} from "../../src/server.js";
import { Supervisor } from "../../src/workers/supervisor.js";
import { runReader, runWriter, workerEnv, type WorkerEnv } from "../../src/serve-workers.js";
import { ClusterNode, type ClusterSettings } from "../../src/serve-cluster.js";
import { availableParallelism } from "node:os";
import { createServer as createProbe } from "node:net";
import { intOption, parseOptions, type OptionSpec, type Parsed } from "../args.js";
import { describeSubdomain, openForCommand, parseOrUsage, USAGE_EXIT } from "../demo/cli.js";

/** Zulip's development server port, so Zulip clients' dev settings work unchanged. */
export const DEFAULT_PORT = 9991;

/** Options shared by serve and start. */
export const SERVE_OPTIONS: OptionSpec = {
  port: { type: "string" },
  config: { type: "string" },
  host: { type: "string", default: "127.0.0.1" },
  "external-host": { type: "string" },
  "compat-port": { type: "string" },
  "no-rate-limit": { type: "boolean" },
  "no-sync": { type: "boolean" },
  "log-level": { type: "string", default: "info" },
  "log-file": { type: "string" },
  "slow-request-ms": { type: "string" },
  workers: { type: "string" },
};

/** The settings serve and start run with (src/server.ts), and how many worker processes serve (src/workers). */
export type ServeSettings = ServerSettings & { readonly workers: number };

/** --workers N|auto, else the configuration's WORKERS: "auto" is one per core. */
function workerCount(parsed: Parsed, configured: number | "auto"): number {
  const flag = parsed.values["workers"];
  const value = flag === undefined ? configured : flag === "auto" ? "auto" : intOption(parsed, "workers", 1, 1, 256);
  return value === "auto" ? availableParallelism() : value;
}

/**
 * Resolves with exit code 0 after the first SIGINT or SIGTERM has stopped the server
 * (src/server.ts: workers, listeners, the event queues saved, then the store closed,
 * which frees the data directory). A second signal during the save ends the process
 * at once (the handlers are removed after the first).
 */
export function untilSignal(parley: Parley): Promise<number> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      console.error(`parley: ${signal}: shutting down`);
      void parley.stop().finally(() => {
        // Closing the listen socket leaves clients' idle keep-alive connections open in
        // uWebSockets.js (ParleyServer cannot drop them), and they would keep the process
        // alive for seconds. The timer does not itself hold the process: it only ends one
        // that lingers, after the dispatcher has set the exit code.
        setTimeout(() => process.exit(), 200).unref();
        resolve(0);
      });
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

function logLevel(value: unknown): LogLevel {
  const level = LOG_LEVELS.find((l) => l === value);
  if (level === undefined)
    throw new Error(`--log-level must be one of ${LOG_LEVELS.join(", ")}, not '${String(value)}'`);
  return level;
}

/**
 * Flags win over the configuration file, so a one-off run can override it; the file
 * is read here, so a bad key stops the command before anything is opened.
 */
export function readServeSettings(parsed: Parsed): ServeSettings {
  const flagHost = parsed.values["external-host"];
  const explicit = parsed.values["config"];
  const { config, source } = resolveConfig(
    typeof explicit === "string" ? explicit : undefined,
    parsed.values["data"] as string,
  );
  const externalHost = typeof flagHost === "string" ? flagHost : config.EXTERNAL_HOST;
  return {
    config,
    configSource: source,
    port: intOption(parsed, "port", DEFAULT_PORT, 0, 65535),
    host: parsed.values["host"] as string,
    externalHost,
    compatPort: parsed.values["compat-port"] === undefined ? null : intOption(parsed, "compat-port", 0, 0, 65535),
    rateLimit: parsed.values["no-rate-limit"] !== true && config.RATE_LIMITING,
    noSync: parsed.values["no-sync"] === true,
    logLevel: logLevel(parsed.values["log-level"]),
    logFile: typeof parsed.values["log-file"] === "string" ? parsed.values["log-file"] : null,
    slowRequestMs: intOption(parsed, "slow-request-ms", DEFAULT_SLOW_MS, 0, 3_600_000),
    workers: workerCount(parsed, config.WORKERS),
  };
}

/**
 * The configuration checks that need jose (asynchronous, so not in readServeSettings):
 * false, after saying why, when a JWT key cannot serve its algorithms. Run before the
 * store is opened, so a refused start creates nothing.
 */
export async function jwtKeysUsable(command: string, settings: ServeSettings): Promise<boolean> {
  try {
    await checkJwtKeys(settings.config, settings.configSource ?? "the configuration");
    return true;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`parley ${command}: ${error.message}`);
    return false;
  }
}

/** One line per realm, for the human output of serve and start. */
export function realmLines(store: Store, url: string): string[] {
  const realms = store.listRealms();
  if (realms.length === 0) return ["no realms yet: create one with parley realm create (or parley demo)"];
  return realms.map(
    (r) =>
      `realm ${describeSubdomain(r.subdomain)}: ${r.name}${r.subdomain === "" ? ` at ${url}` : ""}${r.deactivated ? " (deactivated)" : ""}`,
  );
}

const USAGE =
  "parley serve [--data DIR] [--config FILE] [--port N] [--host H] [--external-host NAME] [--compat-port N] [--no-rate-limit] [--no-sync] [--log-level L] [--log-file PATH] [--slow-request-ms N] [--workers N|auto] [--cluster nats://HOST:PORT --node NAME [--advertise-url URL]] [--json]";

/** serve's own options: a cluster node's (docs/cluster.md). */
const CLUSTER_OPTIONS: OptionSpec = {
  cluster: { type: "string" },
  node: { type: "string" },
  "advertise-url": { type: "string" },
};

/** --cluster/--node, else the configuration's CLUSTER_NATS_URL/CLUSTER_NODE; null when not a cluster node. */
function clusterSettings(parsed: Parsed, settings: ServeSettings): ClusterSettings | null {
  const natsUrl = (parsed.values["cluster"] as string | undefined) ?? settings.config.CLUSTER_NATS_URL;
  const node = (parsed.values["node"] as string | undefined) ?? settings.config.CLUSTER_NODE;
  if (natsUrl === undefined && node === undefined) return null;
  if (natsUrl === undefined || !/^nats:\/\/[^\s/]+$/.test(natsUrl))
    throw new Error("--cluster needs the NATS server's URL, nats://HOST:PORT (or CLUSTER_NATS_URL in the config)");
  if (node === undefined || !/^[A-Za-z0-9_-]{1,64}$/.test(node))
    throw new Error("--node needs this node's name: letters, digits, - and _ (or CLUSTER_NODE in the config)");
  if (settings.workers > 1)
    throw new Error(
      `--cluster runs a node as one process, and this start asks for ${settings.workers} workers ` +
        `(${parsed.values["workers"] !== undefined ? "--workers" : "WORKERS in the configuration"}): a node ` +
        "changes role by closing its store and opening it again as the leader's writer or a follower's replica, " +
        "which --workers' readers (following one writer's store for the server's lifetime) cannot follow. " +
        "Nothing was started: drop --workers (or set WORKERS to 1) and add nodes to the cluster to spread reads " +
        "(docs/cluster.md section 8)",
    );
  if (settings.compatPort !== null) throw new Error("--cluster does not take --compat-port yet");
  const advertiseUrl = parsed.values["advertise-url"] as string | undefined;
  return {
    natsUrl,
    node,
    maxLog: settings.config.CLUSTER_MAX_LOG,
    ...(advertiseUrl !== undefined ? { advertiseUrl } : {}),
  };
}

/** A node of a cluster: follows, leads when it takes the lease, until a signal (src/serve-cluster). */
async function runClusterNode(dir: string, json: boolean, settings: ServeSettings, cluster: ClusterSettings) {
  await checkPortFree(settings.host, settings.port);
  const images = externalImages(settings.config, dir);
  const node = new ClusterNode(settings, cluster, dir, images, (line) =>
    console.error(`parley ${cluster.node}: ${line}`),
  );
  await node.start();
  const stopped = new Promise<number>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      console.error(`parley ${cluster.node}: ${signal}: leaving the cluster`);
      void node.stop().finally(() => {
        setTimeout(() => process.exit(), 200).unref();
        resolve(0);
      });
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  const url = `http://${urlHost(settings.host)}:${node.port}`;
  if (json) console.log(JSON.stringify({ url, port: node.port, host: settings.host, data: dir, node: cluster.node }));
  else {
    console.log(`listening on ${url}`);
    console.log(`data: ${dir}`);
    console.log(`cluster: node ${cluster.node} of ${cluster.natsUrl}; GET /health says its role`);
  }
  return stopped;
}

/** A free port for --port 0 with workers: every worker must bind the same one. */
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

/** One process of a supervised server (src/serve-workers): its role came in the environment. */
async function runWorker(worker: WorkerEnv, dir: string, settings: ServeSettings): Promise<number> {
  const log = (line: string): void => console.error(`parley ${worker.name}: ${line}`);
  const images = externalImages(settings.config, dir);
  if (worker.name !== "writer") return runReader(worker, settings, dir, images, log);
  const store = openForCommand(dir, "serve (writer worker)", {
    noSync: settings.noSync,
    renderer: images.renderer,
    lockToken: worker.lockToken,
  });
  try {
    return await runWriter(worker, store, settings, dir, images, log);
  } catch (error) {
    store.close();
    throw error;
  }
}

/** A running `--workers` server, as its supervisor started it. */
export interface SupervisedServer {
  readonly url: string;
  readonly port: number;
  /** The writer's HTTP/1.0-capable listener (--compat-port), or null. */
  readonly compatUrl: string | null;
  readonly pids: Record<string, number | null>;
  /** Resolves with exit code 0 once a SIGINT or SIGTERM has stopped every worker. */
  readonly stopped: Promise<number>;
}

/**
 * The supervisor of --workers N (src/workers/supervisor), for serve and start: holds the
 * data directory's lock, fixes the ports (a restarted worker binds the same ones), starts
 * the workers (each runs `parley serve` with `argv`) and stops them at a signal.
 */
export async function startSupervisor(argv: string[], dir: string, settings: ServeSettings): Promise<SupervisedServer> {
  await checkPortFree(settings.host, settings.port);
  const port = settings.port === 0 ? await freePort(settings.host) : settings.port;
  let compatPort: number | null = null;
  if (settings.compatPort !== null) {
    await checkPortFree(settings.host, settings.compatPort, "--compat-port");
    compatPort = settings.compatPort === 0 ? await freePort(settings.host) : settings.compatPort;
  }
  // Held by the supervisor, joined by every worker: a restarting writer leaves no moment for another server to enter.
  let lock: DataDirLock;
  try {
    lock = lockDataDir(dir, { command: "parley serve --workers", durable: !settings.noSync });
  } catch (error) {
    if (error instanceof DataDirectoryLockedError)
      throw new Error(`${error.message}. Pass --data DIR to use another directory.`);
    throw error;
  }
  const supervisor = new Supervisor({
    lockToken: lock.holder.token,
    count: settings.workers,
    script: process.argv[1] ?? "",
    args: ["serve", ...argv],
    port,
    compatPort,
    log: (line) => console.error(`parley: ${line}`),
  });
  const stopped = new Promise<number>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      console.error(`parley: ${signal}: stopping ${settings.workers} workers`);
      void supervisor.stop().then(() => {
        lock.release();
        resolve(0);
      });
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  try {
    await supervisor.start();
  } catch (error) {
    lock.release();
    throw error;
  }
  const host = urlHost(settings.host);
  return {
    url: `http://${host}:${port}`,
    port,
    compatUrl: compatPort === null ? null : `http://${host}:${compatPort}`,
    pids: supervisor.pids,
    stopped,
  };
}

/** `serve --workers N`: greets once every worker listens. */
async function runSupervisor(argv: string[], dir: string, json: boolean, settings: ServeSettings): Promise<number> {
  const { url, port, compatUrl, pids, stopped } = await startSupervisor(argv, dir, settings);
  if (json) {
    const greeting = { url, port, host: settings.host, data: dir, compat_url: compatUrl, workers: settings.workers };
    console.log(JSON.stringify({ ...greeting, pids }));
  } else {
    console.log(`listening on ${url}`);
    console.log(`data: ${dir}`);
    if (compatUrl !== null) console.log(`HTTP/1.0-capable listener on ${compatUrl} (served by the writer)`);
    console.log(`workers: 1 writer and ${settings.workers - 1} reader(s), pids ${JSON.stringify(pids)}`);
    console.log("press Ctrl+C to stop");
  }
  return stopped;
}

export async function run(argv: string[]): Promise<number> {
  const options = parseOrUsage("serve", USAGE, () => {
    const parsed = parseOptions(argv, { ...SERVE_OPTIONS, ...CLUSTER_OPTIONS });
    if (parsed.positionals.length > 0) throw new Error(`unexpected argument '${parsed.positionals[0]}'`);
    const settings = readServeSettings(parsed);
    return { parsed, dir: parsed.values["data"] as string, settings, cluster: clusterSettings(parsed, settings) };
  });
  if (!options || !(await jwtKeysUsable("serve", options.settings))) return USAGE_EXIT;
  if (options.cluster !== null)
    return runClusterNode(options.dir, options.parsed.values["json"] === true, options.settings, options.cluster);
  const worker = workerEnv();
  if (worker !== null) return runWorker(worker, options.dir, options.settings);
  if (options.settings.workers > 1)
    return runSupervisor(argv, options.dir, options.parsed.values["json"] === true, options.settings);

  let store: Store | null = null;
  let parley: Parley;
  try {
    // A busy port is reported before the store is opened (which can take a moment).
    await checkPortFree(options.settings.host, options.settings.port);
    const images = externalImages(options.settings.config, options.dir);
    store = openForCommand(options.dir, "serve", { noSync: options.settings.noSync, renderer: images.renderer });
    parley = await startParley(store, options.settings, options.dir, images);
  } catch (error) {
    store?.close();
    throw error;
  }
  // Handlers go in before the greeting: whoever reads it may signal at once, and a
  // signal arriving before them would kill the process without closing the store.
  const { port, url, compatUrl } = parley;
  const stopped = untilSignal(parley);
  if (options.parsed.values["json"]) {
    // One line, so that a reader of the first line gets the whole event.
    console.log(
      JSON.stringify({
        url,
        port,
        host: options.settings.host,
        external_host: options.settings.externalHost ?? null,
        compat_url: compatUrl,
        data: options.dir,
      }),
    );
  } else {
    console.log(`listening on ${url}`);
    console.log(`data: ${options.dir}`);
    console.log(
      options.settings.configSource === null
        ? 'config: none (Zulip\'s defaults; see README "Configuration")'
        : `config: ${options.settings.configSource}`,
    );
    if (compatUrl !== null) console.log(`HTTP/1.0-capable listener on ${compatUrl}`);
    console.log(`mail: ${parley.mailDescription}`);
    for (const line of realmLines(store, url)) console.log(line);
    if (options.settings.externalHost !== undefined)
      console.log(`realm subdomains are served on SUBDOMAIN.${options.settings.externalHost}`);
    console.log("press Ctrl+C to stop");
  }
  return stopped;
}
