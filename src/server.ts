/**
 * @module server
 * The composition root of a running parley: everything a server process is made of is
 * built here once and handed to what uses it. The message renderer (Markdown that
 * signs external images with the camo key) goes to the store; one push bouncer client
 * goes to both the HTTP server (the E2EE test notification) and the push sender; the
 * event hub, the scheduler, the presence flusher, the mail and push senders and the
 * uploads cleanup are started here and stopped here, in the order that loses
 * nothing. `parley serve` and `parley start` (tools/commands) parse flags, call this,
 * print, and wait for a signal.
 */
import { createServer as createProbe } from "node:net";
import { camoKeyFor, type ServerConfig } from "./config/index.js";
import { warmUpWrites, type MessageRenderer, type Store } from "./engine/index.js";
import { publicAddressesOnly, publicAndLoopbackAddresses, signedImageUrls } from "./external-content/index.js";
import { createServer, type ParleyServer, type WorkerHooks } from "./http/server.js";
import type { LogLevel } from "./http/request-log.js";
import { createMarkdownRenderer } from "./markdown/index.js";
import { fromHeader, transportFor } from "./mail/transports.js";
import { MailSender } from "./mail/sender.js";
import { WebhookSender } from "./outgoing-webhooks/sender.js";
import { BouncerClient } from "./push/bouncer-client.js";
import { realmUrl } from "./push/payload.js";
import { PushSender } from "./push/sender.js";
import { DEFAULT_SAVE_DEADLINE_MS, loadSavedQueues, writeSavedQueues } from "./realtime/index.js";
import { PresenceFlusher } from "./scheduler/presence-flusher.js";
import { Scheduler } from "./scheduler/scheduler.js";
import { FullMemberPromoter } from "./scheduler/full-member-promoter.js";
import { MessageRetention } from "./scheduler/message-retention.js";
import { MissedEmailBatcher } from "./scheduler/missed-email-batcher.js";
import { DigestMailer } from "./scheduler/digest-emails.js";
import { UploadsCleanup } from "./scheduler/uploads-cleanup.js";

/** How a server process runs: the configuration file's settings and the command line's. */
export interface ServerSettings {
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

/** Operator messages (stderr in the CLI). */
export type Log = (line: string) => void;
const stderrLog: Log = (line) => console.error(`parley: ${line}`);
const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));

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
      if (error.code === "EADDRINUSE")
        reject(
          new Error(`port ${port} on ${host} is already in use (another parley?); pass ${flag} N to choose another`),
        );
      else if (error.code === "EACCES")
        reject(new Error(`no permission to listen on port ${port}; pass ${flag} N with a port above 1023`));
      else
        reject(
          new Error(`cannot listen on ${host}:${port} (${error.code ?? error.message}); check --host and ${flag}`),
        );
    });
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}

export interface ExternalImages {
  readonly camoKey: string;
  readonly renderer: MessageRenderer;
}

/**
 * One key for the renderer (which signs image URLs into the stored HTML) and the
 * proxy (which verifies them): CAMO_KEY, else DATA/secrets.json's, generated on first
 * use. Every command that opens a store which renders messages uses this renderer.
 */
export function externalImages(config: ServerConfig, dataDir: string): ExternalImages {
  const camoKey = camoKeyFor(config, dataDir);
  return { camoKey, renderer: createMarkdownRenderer({ externalImageUrl: signedImageUrls(camoKey) }) };
}

/**
 * The engine's write warm-up, PARLEY_WRITE_WARM_UP_ROUNDS rounds of it (0 skips it: the test suite's servers,
 * which never move thousands of messages). A failure only leaves the process colder.
 */
async function warmUpMessageWrites(renderer: MessageRenderer, log: Log): Promise<void> {
  const asked = process.env["PARLEY_WRITE_WARM_UP_ROUNDS"];
  const rounds = asked === undefined || asked === "" ? undefined : Number(asked);
  if (rounds === 0) return;
  if (rounds !== undefined && !(Number.isInteger(rounds) && rounds > 0))
    log(`PARLEY_WRITE_WARM_UP_ROUNDS=${asked} is not a whole number of rounds: warming up with the default`);
  const valid = rounds !== undefined && Number.isInteger(rounds) && rounds > 0 ? rounds : undefined;
  const result = await warmUpWrites({ renderer, ...(valid !== undefined ? { rounds: valid } : {}) });
  if (result.error === null) log(`warmed up message writes: ${result.rounds} rounds in ${result.ms.toFixed(0)} ms`);
  else
    log(
      `write warm-up stopped after ${result.rounds} round(s), the first large moves run colder: ${reason(result.error)}`,
    );
}

/** The one push bouncer client of a process, when the server is registered with a bouncer. */
function bouncerFor(config: ServerConfig): BouncerClient | null {
  const { PUSH_NOTIFICATION_BOUNCER_URL: url, ZULIP_ORG_ID: orgId, ZULIP_ORG_KEY: orgKey } = config;
  return url !== undefined && orgId !== undefined && orgKey !== undefined
    ? new BouncerClient({ url, orgId, orgKey })
    : null;
}

/** A running server: its listeners, its background workers, and the one way to stop it all. */
export interface Parley {
  readonly store: Store;
  readonly http: ParleyServer;
  readonly port: number;
  /** Base URL that reaches the server from this machine. */
  readonly url: string;
  /** Base URL of the HTTP/1.0-capable listener, when a compat port was given. */
  readonly compatUrl: string | null;
  /** How mail leaves (SMTP, or DATA/outbox/ files), for the greeting. */
  readonly mailDescription: string;
  /**
   * Stops the workers and the listeners, saves the event queues for the next start
   * (bounded in time: what does not fit is dropped and its clients register again),
   * then closes the store, in that order, so no request or worker reaches a closed
   * store. The data directory is free when it resolves.
   */
  stop(): Promise<void>;
}

/**
 * Starts serving `store` (opened with `images.renderer`) from `dataDir`: restores the
 * event queues saved by the last graceful stop, listens, and starts delivering what
 * waited while the server was down (scheduled messages, mail, push notifications).
 * On failure everything started is stopped again; the store stays open (the caller's).
 */
export async function startParley(
  store: Store,
  settings: ServerSettings,
  dataDir: string,
  images: ExternalImages,
  log: Log = stderrLog,
  worker?: WorkerHooks,
): Promise<Parley> {
  // The writer of `parley serve --workers` shares the port its supervisor checked (src/workers).
  if (worker === undefined) await checkPortFree(settings.host, settings.port);
  // Before the first request: a fresh process renders a long message several times slower (src/engine/warm-up.ts).
  store.warmUp();
  // And the first large moves (src/engine/warm-up-writes.ts), on a scratch store; a reader never writes.
  if (worker?.reader !== true) await warmUpMessageWrites(images.renderer, log);
  const bouncer = bouncerFor(settings.config);
  const http = createServer(store, {
    config: settings.config,
    // Uploaded files live in DATA/uploads, next to the store.
    dataDir,
    camoKey: images.camoKey,
    bouncer,
    ...(settings.externalHost !== undefined ? { externalHost: settings.externalHost } : {}),
    ...(settings.rateLimit ? {} : { rateLimit: false as const, authFailureLimit: false as const }),
    requestLog: { level: settings.logLevel, destination: settings.logFile ?? "stdout", slowMs: settings.slowRequestMs },
    // From the environment rather than a flag, which any local user could read in ps.
    ...(process.env["PARLEY_METRICS_TOKEN"] ? { metricsToken: process.env["PARLEY_METRICS_TOKEN"] } : {}),
    ...(worker !== undefined ? { worker } : {}),
  });
  // Queues saved by a graceful shutdown come back (each with a restart event).
  const restored = http.events.restore(await loadSavedQueues(dataDir, log));
  if (restored > 0) log(`restored ${restored} event queue(s) from the last shutdown`);
  let port: number;
  let compatUrl: string | null = null;
  try {
    port = await http.listen(settings.port, settings.host);
    if (settings.compatPort !== null) {
      await checkPortFree(settings.host, settings.compatPort, "--compat-port");
      compatUrl = `http://${urlHost(settings.host)}:${await http.listenCompat(settings.compatPort, settings.host)}`;
    }
  } catch (error) {
    http.close();
    throw error;
  }
  // Messages that came due while the server was down go out now, the rest on time.
  const scheduler = new Scheduler(store, { onError: (error) => log(`scheduled delivery failed: ${reason(error)}`) });
  scheduler.start();
  // Presence pings change memory only; this makes them durable within a few seconds.
  const presenceFlusher = new PresenceFlusher(store, {
    onError: (error) => log(`presence flush failed: ${reason(error)}`),
  });
  presenceFlusher.start();
  // Notifications left in the outbox by the last run go out first, then new ones as they are written.
  const pushSender = bouncer
    ? new PushSender(store, bouncer, () => http.baseUrl, {
        onError: (message, error) => log(`push: ${message}: ${reason(error)}`),
      })
    : null;
  pushSender?.start();
  // Mail left in the outbox by the last run goes out now; new mail within a second.
  const externalHost = settings.externalHost ?? "localhost";
  const mailSender = new MailSender(store, transportFor(settings.config, dataDir), {
    from: (name) => fromHeader(settings.config, externalHost, name),
    onFailure: (mail, error, gaveUp) =>
      log(
        `mail ${mail.id} to ${mail.to.join(", ")} ${gaveUp ? "failed for good" : "will be retried"}: ${reason(error)}`,
      ),
  });
  mailSender.start();
  // Calls to outgoing webhook bots left by the last run are made now; new ones within a second.
  const webhookSender = new WebhookSender(store, {
    baseUrl: () => http.baseUrl,
    timeoutMs: settings.config.OUTGOING_WEBHOOK_TIMEOUT_SECONDS * 1000,
    isAllowedAddress: settings.config.OUTGOING_WEBHOOK_ALLOW_LOOPBACK
      ? publicAndLoopbackAddresses
      : publicAddressesOnly,
    onError: (error) => log(`outgoing webhooks: ${reason(error)}`),
  });
  webhookSender.start();
  // Missed-message batches due while the server was down become mail now, the rest when due.
  const missedEmailBatcher = new MissedEmailBatcher(store, (realm) => realmUrl(http.baseUrl, realm), {
    onError: (error) => log(`missed-message email failed: ${reason(error)}`),
  });
  missedEmailBatcher.start();
  // On a realm's digest day: its weekly digests, or what a restart left of them.
  const digestMailer = new DigestMailer(store, (realm) => realmUrl(http.baseUrl, realm), {
    onError: (error) => log(`digest email failed: ${reason(error)}`),
    onSent: (count) => log(`digest: ${count} email(s) queued`),
  });
  digestMailer.start();
  const uploadsCleanup = new UploadsCleanup(store, http.uploads, {
    onError: (error) => log(`uploads cleanup failed: ${reason(error)}`),
  });
  await uploadsCleanup.start();
  const fullMemberPromoter = new FullMemberPromoter(store, {
    onError: (error) => log(`full-member pass failed: ${reason(error)}`),
  });
  fullMemberPromoter.start();
  // Messages past their retention policy while the server was down go now, then hourly.
  const messageRetention = new MessageRetention(store, {
    onError: (error) => log(`retention pass failed: ${reason(error)}`),
    onDeleted: (count) => log(`retention: deleted ${count} message(s) past their retention period`),
  });
  messageRetention.start();

  let stopping: Promise<void> | null = null;
  return {
    store,
    http,
    port,
    url: `http://${urlHost(settings.host)}:${port}`,
    compatUrl,
    mailDescription: mailSender.description,
    stop() {
      stopping ??= (async () => {
        scheduler.stop();
        presenceFlusher.stop();
        // A request in flight is abandoned; its item stays in the outbox for the next start.
        void pushSender?.stop();
        missedEmailBatcher.stop();
        digestMailer.stop();
        mailSender.stop();
        webhookSender.stop();
        uploadsCleanup.stop();
        fullMemberPromoter.stop();
        // Ends between two of its writes, before the store closes.
        await messageRetention.stop();
        // Closed first: no event reaches a queue while it is written, and waiting polls are answered.
        http.close();
        // Event queues outlive a graceful restart, as Zulip's do.
        await saveQueues(http, dataDir, log);
        store.close();
      })();
      return stopping;
    },
  };
}

/**
 * Writes the event queues for the next start, within DEFAULT_SAVE_DEADLINE_MS: what
 * does not fit is dropped and its clients register again. Says what it kept.
 */
async function saveQueues(http: ParleyServer, dataDir: string, log: Log): Promise<void> {
  const started = Date.now();
  try {
    const queues = http.events.save();
    if (queues.length > 0) log(`saving ${queues.length} event queue(s)`);
    const { saved, dropped, bytes } = await writeSavedQueues(dataDir, queues);
    const took = `${((Date.now() - started) / 1000).toFixed(1)} s`;
    if (dropped > 0) {
      log(
        `saved ${saved} event queue(s) (${bytes} bytes) in ${took}; dropped ${dropped} (${DEFAULT_SAVE_DEADLINE_MS / 1000} s limit)`,
      );
      log("the clients of dropped queues will register again");
    } else if (saved > 0) log(`saved ${saved} event queue(s) (${bytes} bytes) in ${took}`);
  } catch (error) {
    log(`could not save event queues (their clients will register again): ${reason(error)}`);
  }
}
