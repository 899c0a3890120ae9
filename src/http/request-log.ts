/**
 * @module http/request-log
 * One structured JSON line per request (pino): method, route template, status,
 * duration, response bytes, user, realm and a request ID (also sent back as
 * X-Request-Id, so a client's report can be matched to the line). What is logged is
 * an allow-list of those fields: never the raw URL or query, headers, parameters or
 * bodies, so credentials, API keys and message content cannot appear. Paths are
 * logged as their route's template (/api/v1/messages/:message_id); a path no route
 * matches is logged as "unmatched", since a raw path could hold anything.
 *
 * Requests slower than `slowMs` are logged at warn with slow: true (so `--log-level
 * warn` keeps exactly the slow ones and the failures); 5xx responses at error. A
 * long-poll (GET /events) waits by design and is never flagged slow.
 */
import { randomUUID } from "node:crypto";
import pino, { type DestinationStream, type Logger } from "pino";

export const LOG_LEVELS = ["silent", "fatal", "error", "warn", "info", "debug", "trace"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Over a second is slow for every endpoint but the long-poll. */
export const DEFAULT_SLOW_MS = 1000;

export interface RequestLogOptions {
  /** Default "info". "silent" writes nothing (the default when a server has no log options). */
  readonly level?: LogLevel;
  /** A file path (appended to, created with its directory), "stdout", "stderr", or a stream. Default stdout. */
  readonly destination?: string | DestinationStream;
  /** Requests slower than this many milliseconds are flagged. Default DEFAULT_SLOW_MS. */
  readonly slowMs?: number;
}

/** What the pipeline learns about a request as it handles it. */
export interface RequestNote {
  readonly id: string;
  readonly method: string;
  /** performance.now() when the head was read. */
  readonly startedAt: number;
  /** The matched route's template under /api/v1, or null (unmatched, or not an API path). */
  route: string | null;
  /** A path served outside the API router (e.g. /metrics), logged as is. */
  fixedPath: string | null;
  userId: number | null;
  realmId: number | null;
}

/** Routes that hold requests open on purpose. */
const LONG_POLL = new Set(["GET /api/v1/events"]);

function destinationOf(destination: string | DestinationStream | undefined): DestinationStream {
  if (destination === undefined || destination === "stdout") return pino.destination({ dest: 1, sync: false });
  if (destination === "stderr") return pino.destination({ dest: 2, sync: false });
  if (typeof destination === "string")
    return pino.destination({ dest: destination, sync: false, mkdir: true, append: true });
  return destination;
}

export class RequestLog {
  readonly #logger: Logger;
  readonly #slowMs: number;
  readonly #destination: DestinationStream | null;

  constructor(options: RequestLogOptions = {}) {
    const level = options.level ?? "info";
    this.#slowMs = options.slowMs ?? DEFAULT_SLOW_MS;
    // A silent log opens no file and no stream.
    this.#destination = level === "silent" ? null : destinationOf(options.destination);
    this.#logger = pino(
      {
        level,
        base: null,
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
      },
      this.#destination ?? undefined,
    );
  }

  get enabled(): boolean {
    return this.#logger.level !== "silent";
  }

  start(method: string, startedAt: number): RequestNote {
    return { id: randomUUID(), method, startedAt, route: null, fixedPath: null, userId: null, realmId: null };
  }

  /** The logged path: the route template, the fixed path, or "unmatched". */
  static pathOf(note: RequestNote): string {
    return note.fixedPath ?? (note.route === null ? "unmatched" : `/api/v1${note.route}`);
  }

  /** Writes the request's line. `status` null: the client went away before the response. */
  finish(note: RequestNote, status: number | null, bytes: number, durationMs: number): void {
    if (!this.enabled) return;
    const path = RequestLog.pathOf(note);
    const line = {
      req_id: note.id,
      method: note.method,
      path,
      status,
      duration_ms: Math.round(durationMs * 1000) / 1000,
      bytes,
      user_id: note.userId,
      realm_id: note.realmId,
    };
    if (status !== null && status >= 500) this.#logger.error(line, "request failed");
    else if (durationMs > this.#slowMs && !LONG_POLL.has(`${note.method} ${path}`))
      this.#logger.warn({ ...line, slow: true }, "slow request");
    else this.#logger.info(line, status === null ? "request aborted by the client" : "request");
  }

  /** Writes out buffered lines (at shutdown). */
  flush(): void {
    const destination = this.#destination as (DestinationStream & { flushSync?: () => void }) | null;
    try {
      destination?.flushSync?.();
    } catch {
      // Not yet open (nothing written) or already closed: nothing to flush.
    }
  }
}
