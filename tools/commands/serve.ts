/**
 * @module tools/commands/serve
 * `parley serve [--data DIR] [--config FILE] [--port N] [--host H] [--external-host NAME] [--compat-port N] [--no-rate-limit] [--no-sync] [--log-level L] [--log-file PATH] [--slow-request-ms N]`:
 * opens the store (creating the directory), serves the Zulip API and prints
 * `listening on http://HOST:PORT` as its first line of output, so scripts and tests
 * can read the bound port even with --port 0. Settings come from the configuration
 * file (--config FILE, else DATA/parley.json when present; src/config), flags override. SIGINT or SIGTERM closes the server
 * and then the store, and the process exits 0. The listening and shutdown steps are
 * exported for `parley start`.
 */
import { createServer as createProbe } from "node:net";
import { checkJwtKeys, ConfigError, resolveConfig, type ServerConfig } from "../../src/config/index.js";
import type { Store } from "../../src/engine/index.js";
import { externalImages, type ExternalImages } from "../external-images.js";
import { createServer, type ParleyServer } from "../../src/http/server.js";
import { DEFAULT_SLOW_MS, LOG_LEVELS, type LogLevel } from "../../src/http/request-log.js";
import { DEFAULT_SAVE_DEADLINE_MS, loadSavedQueues, writeSavedQueues } from "../../src/realtime/index.js";
import { Scheduler } from "../../src/scheduler/scheduler.js";
import { PresenceFlusher } from "../../src/scheduler/presence-flusher.js";
import { BouncerClient } from "../../src/push/bouncer-client.js";
import { PushSender } from "../../src/push/sender.js";
import { MailSender } from "../../src/mail/sender.js";
import { fromHeader, transportFor } from "../../src/mail/transports.js";
import { UploadsCleanup } from "../../src/scheduler/uploads-cleanup.js";
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
};

export interface ServeSettings {
  /** The configuration file's settings (src/config), Zulip's defaults without one. */
  readonly config: ServerConfig;
  /** Which file they came from, or null for none. */
  readonly configSource: string | null;
  readonly port: number;
  readonly host: string;
  readonly externalHost: string | undefined;
  /** Port of the Node-parsed listener for HTTP/1.0 clients (http/compat-listener), or null for none. */
  readonly compatPort: number | null;
  readonly rateLimit: boolean;
  /** Skip fsync at commit: acknowledged writes survive a process crash, not a power loss. */
  readonly noSync: boolean;
  /** Request log: one JSON line per request (src/http/request-log.ts). */
  readonly logLevel: LogLevel;
  /** Where request lines go: a file path, or stdout when null. */
  readonly logFile: string | null;
  readonly slowRequestMs: number;
}

function logLevel(value: unknown): LogLevel {
  const level = LOG_LEVELS.find((l) => l === value);
  if (level === undefined) throw new Error(`--log-level must be one of ${LOG_LEVELS.join(", ")}, not '${String(value)}'`);
  return level;
}

/**
 * Flags win over the configuration file, so a one-off run can override it; the file
 * is read here, so a bad key stops the command before anything is opened.
 */
export function readServeSettings(parsed: Parsed): ServeSettings {
  const flagHost = parsed.values["external-host"];
  const explicit = parsed.values["config"];
  const { config, source } = resolveConfig(typeof explicit === "string" ? explicit : undefined, parsed.values["data"] as string);
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

/** The host part of a URL that reaches `host`: wildcard binds are reached on loopback. */
export function urlHost(host: string): string {
  if (host === "0.0.0.0" || host === "") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") ? `[${host}]` : host;
}

/**
 * Fails with an operator-readable message when the port is taken. uWebSockets.js
 * binds with SO_REUSEPORT on Linux, so a second server on a busy port would "succeed"
 * and share connections with the first; a plain exclusive bind detects that.
 */
export function checkPortFree(host: string, port: number, flag = "--port"): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createProbe();
    probe.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE") reject(new Error(`port ${port} on ${host} is already in use (another parley?); pass ${flag} N to choose another`));
      else if (error.code === "EACCES") reject(new Error(`no permission to listen on port ${port}; pass ${flag} N with a port above 1023`));
      else reject(new Error(`cannot listen on ${host}:${port} (${error.code ?? error.message}); check --host and ${flag}`));
    });
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}

export interface Listening {
  readonly server: ParleyServer;
  readonly port: number;
  /** Base URL that reaches the server from this machine. */
  readonly url: string;
  /** Base URL of the HTTP/1.0-capable listener, when --compat-port was given. */
  readonly compatUrl: string | null;
  /** Delivers scheduled messages; stopped by untilSignal before the store closes. */
  readonly scheduler: Scheduler;
  /** Writes presence every few seconds; stopped by untilSignal before the store closes (which flushes the rest). */
  readonly presenceFlusher: PresenceFlusher;
  /** Drains the push outbox to the bouncer (null without PUSH_NOTIFICATION_BOUNCER_URL); stopped by untilSignal. */
  readonly pushSender: PushSender | null;
  /** Drains the mail outbox (SMTP, or DATA/outbox/ files); stopped by untilSignal before the store closes. */
  readonly mailSender: MailSender;
  /** Removes old unclaimed uploads daily; stopped by untilSignal. */
  readonly uploadsCleanup: UploadsCleanup;
}

/** Starts the HTTP server over `store`, opened with `images.renderer`. */
export async function listen(store: Store, settings: ServeSettings, dataDir: string, images: ExternalImages): Promise<Listening> {
  await checkPortFree(settings.host, settings.port);
  // Before the first request: a fresh process renders a long message several times slower (src/engine/warm-up.ts).
  store.warmUp();
  const server = createServer(store, {
    config: settings.config,
    // Uploaded files live in DATA/uploads, next to the store.
    dataDir,
    camoKey: images.camoKey,
    ...(settings.externalHost !== undefined ? { externalHost: settings.externalHost } : {}),
    ...(settings.rateLimit ? {} : { rateLimit: false as const, authFailureLimit: false as const }),
    requestLog: { level: settings.logLevel, destination: settings.logFile ?? "stdout", slowMs: settings.slowRequestMs },
    // From the environment rather than a flag, which any local user could read in ps.
    ...(process.env["PARLEY_METRICS_TOKEN"] ? { metricsToken: process.env["PARLEY_METRICS_TOKEN"] } : {}),
  });
  // Queues saved by a graceful shutdown come back (each with a restart event).
  const saved = await loadSavedQueues(dataDir, (message) => console.error(`parley: ${message}`));
  const restored = server.events.restore(saved);
  if (restored > 0) console.error(`parley: restored ${restored} event queue(s) from the last shutdown`);
  const port = await server.listen(settings.port, settings.host);
  let compatUrl: string | null = null;
  if (settings.compatPort !== null) {
    try {
      await checkPortFree(settings.host, settings.compatPort, "--compat-port");
      compatUrl = `http://${urlHost(settings.host)}:${await server.listenCompat(settings.compatPort, settings.host)}`;
    } catch (error) {
      server.close();
      throw error;
    }
  }
  // Messages that came due while the server was down go out now, the rest on time.
  const scheduler = new Scheduler(store, { onError: (error) => console.error(`parley: scheduled delivery failed: ${error instanceof Error ? error.message : String(error)}`) });
  scheduler.start();
  // Presence pings change memory only; this makes them durable within a few seconds.
  const presenceFlusher = new PresenceFlusher(store, { onError: (error) => console.error(`parley: presence flush failed: ${error instanceof Error ? error.message : String(error)}`) });
  presenceFlusher.start();
  // Notifications left in the outbox by the last run go out first, then new ones as they are written.
  const { PUSH_NOTIFICATION_BOUNCER_URL: bouncerUrl, ZULIP_ORG_ID: orgId, ZULIP_ORG_KEY: orgKey } = settings.config;
  const pushSender =
    bouncerUrl !== undefined && orgId !== undefined && orgKey !== undefined
      ? new PushSender(store, new BouncerClient({ url: bouncerUrl, orgId, orgKey }), () => server.baseUrl, { onError: (message, error) => console.error(`parley: push: ${message}: ${error instanceof Error ? error.message : String(error)}`) })
      : null;
  pushSender?.start();
  // Mail left in the outbox by the last run goes out now; new mail within a second.
  const externalHost = settings.externalHost ?? "localhost";
  const mailSender = new MailSender(store, transportFor(settings.config, dataDir), {
    from: (name) => fromHeader(settings.config, externalHost, name),
    onFailure: (mail, error, gaveUp) =>
      console.error(`parley: mail ${mail.id} to ${mail.to.join(", ")} ${gaveUp ? "failed for good" : "will be retried"}: ${error instanceof Error ? error.message : String(error)}`),
  });
  mailSender.start();
  const uploadsCleanup = new UploadsCleanup(store, server.uploads, { onError: (error) => console.error(`parley: uploads cleanup failed: ${error instanceof Error ? error.message : String(error)}`) });
  await uploadsCleanup.start();
  return { server, port, url: `http://${urlHost(settings.host)}:${port}`, compatUrl, scheduler, presenceFlusher, pushSender, mailSender, uploadsCleanup };
}

/**
 * Writes the event queues for the next start, within DEFAULT_SAVE_DEADLINE_MS: what
 * does not fit is dropped and its clients register again. Says what it kept.
 */
async function saveQueues(server: ParleyServer, dataDir: string): Promise<void> {
  const started = Date.now();
  try {
    const queues = server.events.save();
    if (queues.length > 0) console.error(`parley: saving ${queues.length} event queue(s)`);
    const { saved, dropped, bytes } = await writeSavedQueues(dataDir, queues);
    const took = `${((Date.now() - started) / 1000).toFixed(1)} s`;
    if (dropped > 0) {
      const limit = `${DEFAULT_SAVE_DEADLINE_MS / 1000} s`;
      console.error(`parley: saved ${saved} event queue(s) (${bytes} bytes) in ${took}; dropped ${dropped} (${limit} limit)`);
      console.error("parley: the clients of dropped queues will register again");
    } else if (saved > 0) console.error(`parley: saved ${saved} event queue(s) (${bytes} bytes) in ${took}`);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    console.error(`parley: could not save event queues (their clients will register again): ${reason}`);
  }
}

/**
 * Resolves with exit code 0 after the first SIGINT or SIGTERM has closed the server,
 * saved the event queues to the data directory (bounded in time, see saveQueues),
 * then closed the store (in that order, so no request reaches a closed store), which
 * frees the data directory. A second signal during the save ends the process at once.
 */
export function untilSignal(server: ParleyServer, store: Store, dataDir: string, workers: Partial<Pick<Listening, "scheduler" | "presenceFlusher" | "pushSender" | "mailSender" | "uploadsCleanup">> = {}): Promise<number> {
  const { scheduler, presenceFlusher, pushSender, mailSender, uploadsCleanup } = workers;
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      console.error(`parley: ${signal}: shutting down`);
      scheduler?.stop();
      presenceFlusher?.stop();
      // A request in flight is abandoned; its item stays in the outbox for the next start.
      void pushSender?.stop();
      mailSender?.stop();
      uploadsCleanup?.stop();
      // Closed first: no event reaches a queue while it is written, and waiting polls are answered.
      server.close();
      // Event queues outlive a graceful restart, as Zulip's do.
      void saveQueues(server, dataDir).finally(() => {
        store.close();
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

/** One line per realm, for the human output of serve and start. */
export function realmLines(store: Store, url: string): string[] {
  const realms = store.listRealms();
  if (realms.length === 0) return ["no realms yet: create one with parley realm create (or parley demo)"];
  return realms.map((r) => `realm ${describeSubdomain(r.subdomain)}: ${r.name}${r.subdomain === "" ? ` at ${url}` : ""}${r.deactivated ? " (deactivated)" : ""}`);
}

const USAGE = "parley serve [--data DIR] [--config FILE] [--port N] [--host H] [--external-host NAME] [--compat-port N] [--no-rate-limit] [--no-sync] [--log-level L] [--log-file PATH] [--slow-request-ms N] [--json]";

export async function run(argv: string[]): Promise<number> {
  const options = parseOrUsage("serve", USAGE, () => {
    const parsed = parseOptions(argv, SERVE_OPTIONS);
    if (parsed.positionals.length > 0) throw new Error(`unexpected argument '${parsed.positionals[0]}'`);
    return { parsed, dir: parsed.values["data"] as string, settings: readServeSettings(parsed) };
  });
  if (!options || !(await jwtKeysUsable("serve", options.settings))) return USAGE_EXIT;

  let store: Store | null = null;
  let listening: Listening;
  try {
    // A busy port is reported before the store is opened (which can take a moment).
    await checkPortFree(options.settings.host, options.settings.port);
    const images = externalImages(options.settings.config, options.dir);
    store = openForCommand(options.dir, "serve", { noSync: options.settings.noSync, renderer: images.renderer });
    listening = await listen(store, options.settings, options.dir, images);
  } catch (error) {
    store?.close();
    throw error;
  }
  // Handlers go in before the greeting: whoever reads it may signal at once, and a
  // signal arriving before them would kill the process without closing the store.
  const { server, port, url, compatUrl, mailSender } = listening;
  const stopped = untilSignal(server, store, options.dir, listening);
  if (options.parsed.values["json"]) {
    // One line, so that a reader of the first line gets the whole event.
    console.log(JSON.stringify({ url, port, host: options.settings.host, external_host: options.settings.externalHost ?? null, compat_url: compatUrl, data: options.dir }));
  } else {
    console.log(`listening on ${url}`);
    console.log(`data: ${options.dir}`);
    console.log(options.settings.configSource === null ? "config: none (Zulip's defaults; see README \"Configuration\")" : `config: ${options.settings.configSource}`);
    if (compatUrl !== null) console.log(`HTTP/1.0-capable listener on ${compatUrl}`);
    console.log(`mail: ${mailSender.description}`);
    for (const line of realmLines(store, url)) console.log(line);
    if (options.settings.externalHost !== undefined) console.log(`realm subdomains are served on SUBDOMAIN.${options.settings.externalHost}`);
    console.log("press Ctrl+C to stop");
  }
  return stopped;
}
