/**
 * @module tools/commands/serve
 * `parley serve [--data DIR] [--port N] [--host H] [--external-host NAME] [--no-rate-limit] [--no-sync]`:
 * opens the store (creating the directory), serves the Zulip API and prints
 * `listening on http://HOST:PORT` as its first line of output, so scripts and tests
 * can read the bound port even with --port 0. SIGINT or SIGTERM closes the server
 * and then the store, and the process exits 0. The listening and shutdown steps are
 * exported for `parley start`.
 */
import { createServer as createProbe } from "node:net";
import { openStore, type Store } from "../../src/engine/index.js";
import { createServer, type ParleyServer } from "../../src/http/server.js";
import { intOption, parseOptions, type OptionSpec, type Parsed } from "../args.js";
import { describeSubdomain, parseOrUsage, USAGE_EXIT } from "../demo/cli.js";
import { lockDataDir, type DataLock } from "../demo/lock.js";

/** Zulip's development server port, so Zulip clients' dev settings work unchanged. */
export const DEFAULT_PORT = 9991;

/** Options shared by serve and start. */
export const SERVE_OPTIONS: OptionSpec = {
  port: { type: "string" },
  host: { type: "string", default: "127.0.0.1" },
  "external-host": { type: "string" },
  "no-rate-limit": { type: "boolean" },
  "no-sync": { type: "boolean" },
};

export interface ServeSettings {
  readonly port: number;
  readonly host: string;
  readonly externalHost: string | undefined;
  readonly rateLimit: boolean;
  /** Skip fsync at commit: acknowledged writes survive a process crash, not a power loss. */
  readonly noSync: boolean;
}

export function readServeSettings(parsed: Parsed): ServeSettings {
  const externalHost = parsed.values["external-host"];
  return {
    port: intOption(parsed, "port", DEFAULT_PORT, 0, 65535),
    host: parsed.values["host"] as string,
    externalHost: typeof externalHost === "string" ? externalHost : undefined,
    rateLimit: parsed.values["no-rate-limit"] !== true,
    noSync: parsed.values["no-sync"] === true,
  };
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
export function checkPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createProbe();
    probe.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE") reject(new Error(`port ${port} on ${host} is already in use (another parley?); pass --port N to choose another`));
      else if (error.code === "EACCES") reject(new Error(`no permission to listen on port ${port}; pass --port N with a port above 1023`));
      else reject(new Error(`cannot listen on ${host}:${port} (${error.code ?? error.message}); check --host and --port`));
    });
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}

export interface Listening {
  readonly server: ParleyServer;
  readonly port: number;
  /** Base URL that reaches the server from this machine. */
  readonly url: string;
}

/** Starts the HTTP server over `store`. */
export async function listen(store: Store, settings: ServeSettings): Promise<Listening> {
  await checkPortFree(settings.host, settings.port);
  const server = createServer(store, {
    ...(settings.externalHost !== undefined ? { externalHost: settings.externalHost } : {}),
    ...(settings.rateLimit ? {} : { rateLimit: false as const, authFailureLimit: false as const }),
  });
  const port = await server.listen(settings.port, settings.host);
  return { server, port, url: `http://${urlHost(settings.host)}:${port}` };
}

/**
 * Resolves with exit code 0 after the first SIGINT or SIGTERM has closed the server,
 * then the store (in that order, so no request reaches a closed store), then freed
 * the data directory.
 */
export function untilSignal(server: ParleyServer, store: Store, lock: DataLock): Promise<number> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      console.error(`parley: ${signal}: shutting down`);
      server.close();
      store.close();
      lock.release();
      // Closing the listen socket leaves clients' idle keep-alive connections open in
      // uWebSockets.js (ParleyServer cannot drop them), and they would keep the process
      // alive for seconds. The timer does not itself hold the process: it only ends one
      // that lingers, after the dispatcher has set the exit code.
      setTimeout(() => process.exit(), 200).unref();
      resolve(0);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

/** One line per realm, for the human output of serve and start. */
export function realmLines(store: Store, url: string): string[] {
  const realms = [...store.state.realms.values()].sort((a, b) => a.id - b.id);
  if (realms.length === 0) return ["no realms yet: create one with parley realm create (or parley demo)"];
  return realms.map((r) => `realm ${describeSubdomain(r.subdomain)}: ${r.name}${r.subdomain === "" ? ` at ${url}` : ""}${r.deactivated ? " (deactivated)" : ""}`);
}

const USAGE = "parley serve [--data DIR] [--port N] [--host H] [--external-host NAME] [--no-rate-limit] [--no-sync] [--json]";

export async function run(argv: string[]): Promise<number> {
  const options = parseOrUsage("serve", USAGE, () => {
    const parsed = parseOptions(argv, SERVE_OPTIONS);
    if (parsed.positionals.length > 0) throw new Error(`unexpected argument '${parsed.positionals[0]}'`);
    return { parsed, dir: parsed.values["data"] as string, settings: readServeSettings(parsed) };
  });
  if (!options) return USAGE_EXIT;

  const lock = lockDataDir(options.dir, "serve");
  let store: Store | null = null;
  let listening: Listening;
  try {
    // A busy port is reported before the store is opened (which can take a moment).
    await checkPortFree(options.settings.host, options.settings.port);
    store = openStore(options.dir, { noSync: options.settings.noSync });
    listening = await listen(store, options.settings);
  } catch (error) {
    store?.close();
    lock.release();
    throw error;
  }
  const { server, port, url } = listening;
  // Handlers go in before the greeting: whoever reads it may signal at once, and a
  // signal arriving before them would kill the process without closing the store.
  const stopped = untilSignal(server, store, lock);
  if (options.parsed.values["json"]) {
    // One line, so that a reader of the first line gets the whole event.
    console.log(JSON.stringify({ url, port, host: options.settings.host, external_host: options.settings.externalHost ?? null, data: options.dir }));
  } else {
    console.log(`listening on ${url}`);
    console.log(`data: ${options.dir}`);
    for (const line of realmLines(store, url)) console.log(line);
    if (options.settings.externalHost !== undefined) console.log(`realm subdomains are served on SUBDOMAIN.${options.settings.externalHost}`);
    console.log("press Ctrl+C to stop");
  }
  return stopped;
}
