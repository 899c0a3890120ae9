/**
 * @module http/forward
 * What a reader worker of `parley serve --workers` (src/workers) must not answer itself
 * (writerOnly, carriesBody: sent on by http/frame-forward), and the HTTP hop of a cluster
 * follower (src/serve-cluster.ts) to its leader: the request goes on unchanged (method,
 * target, headers, body streamed as it arrives, with backpressure), plus the client's
 * address; the answer comes back unchanged (status, headers, body). A client that goes
 * away aborts the forwarded request, so a long-poll it left ends on the leader too.
 * The workers of one machine used this over Unix sockets until framing replaced it there
 * (Node's HTTP client and parser were a fifth of a reader's CPU); a socket path is still
 * accepted as a target.
 *
 * Answers are read whole before they are written: every forwarded route answers a
 * small JSON body (file downloads are reads, answered where they arrive).
 */
import { Agent, request as httpRequest, type ClientRequest, type IncomingMessage } from "node:http";
import type { HttpRequest, HttpResponse } from "uWebSockets.js";
import { ENDPOINTS } from "./endpoints/index.js";
import { errorReply, send, type Reply } from "./respond.js";
import { METRICS_PATH } from "./metrics.js";
import { matchPage } from "./pages/index.js";
import type { RequestHead } from "./request.js";
import { Router } from "./router.js";
import { CLIENT_ADDRESS_HEADER, WORKER_HEADER } from "./worker-headers.js";

/** Hop-by-hop headers, and those the uWS answer sets itself. */
const REQUEST_DROPPED = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", CLIENT_ADDRESS_HEADER]);
const ANSWER_DROPPED = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "date",
  WORKER_HEADER.toLowerCase(),
]);

/** How long a kept-alive connection stays unused before it is closed here; Node's agent applies it to no request. */
const IDLE_CONNECTION_MS = 60 * 1000;

const API_PREFIX = "/api/v1";
const apiRoutes = new Router(ENDPOINTS.filter((e) => !e.root));
// Few routes: a request that matches none of them pays no lookup in the whole table.
const writerRoutes = new Router(ENDPOINTS.filter((e) => !e.root && e.answeredByWriter !== undefined));

/** An API read whose endpoint says the writer answers it (Endpoint.answeredByWriter). */
function answeredByWriter(method: string, url: string): boolean {
  if (!url.startsWith(`${API_PREFIX}/`)) return false;
  const path = url.slice(API_PREFIX.length);
  if (writerRoutes.match(method, path).kind !== "found") return false;
  // The whole table decides: a literal route of another shape may take the path (/users/me/...).
  const match = apiRoutes.match(method, path);
  return match.kind === "found" && match.endpoint.answeredByWriter !== undefined;
}

/**
 * What only the writer answers: every write (any method but GET and HEAD), the event
 * queues (GET /events long-polls), tus uploads in progress (HEAD reports an offset the
 * writer holds), the reads whose endpoint says so (Endpoint.answeredByWriter: presence),
 * the pages followed from mail (some confirm something on GET), and /metrics (the writer
 * sums every worker's).
 */
export function writerOnly(head: RequestHead): boolean {
  if (head.method !== "GET" && head.method !== "HEAD") return true;
  const url = head.url;
  return (
    url === "/api/v1/events" ||
    url.startsWith("/api/v1/tus") ||
    url === METRICS_PATH ||
    answeredByWriter(head.method, url) ||
    (!url.startsWith("/api/") && matchPage(url) !== null)
  );
}

/** A request with a body (a length above 0, or chunked): read by the writer, against its body budget. */
export function carriesBody(head: RequestHead, req: HttpRequest): boolean {
  return (head.contentLength !== null && head.contentLength > 0) || req.getHeader("transfer-encoding") !== "";
}

/** Where a cluster follower forwards (src/cluster): the leader's base URL, null while none is known. */
export interface ForwardTarget {
  url(): string | null;
}

export interface ForwarderOptions {
  /** Named in X-Parley-Worker after ">" (default "writer"). */
  readonly upstream?: string;
  /** Runs before an answer is passed on (a cluster follower waits until it applied the write's log entry). */
  readonly beforeAnswer?: (answer: IncomingMessage) => Promise<void>;
  /** How long a kept-alive connection may stay unused (tests shorten it). */
  readonly idleConnectionMs?: number;
}

/**
 * Answers `reply` once the request's body has arrived (uWS leaves a client that is
 * still sending without its answer otherwise): for a request refused without being
 * forwarded.
 */
export function refuseAfterBody(
  res: HttpResponse,
  hasBody: boolean,
  reply: Reply,
  headers: readonly (readonly [string, string])[],
): void {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  if (!hasBody) return send(res, () => aborted, reply, headers);
  res.onData((_chunk, isLast) => {
    if (isLast && !aborted) send(res, () => aborted, reply, headers);
  });
}

/** What a forwarded request carries on, read in the uWS handler (uWS's request is valid only there). */
export interface ForwardedHead {
  readonly method: string;
  /** Path and query. */
  readonly path: string;
  /** Name, value, name, value... */
  readonly headers: readonly string[];
  readonly hasBody: boolean;
  readonly closeAsked: boolean;
}

/** Reads what a forward needs from uWS's request: call synchronously in the handler. */
export function captureHead(req: HttpRequest, remoteAddress: string): ForwardedHead {
  const method = req.getMethod().toUpperCase();
  const query = req.getQuery();
  const path = query ? `${req.getUrl()}?${query}` : req.getUrl();
  const headers: string[] = [];
  let hasBody = false;
  let chunked = false;
  req.forEach((name, value) => {
    if (name === "content-length") hasBody = value !== "0";
    if (name === "transfer-encoding") chunked = hasBody = true;
    if (!REQUEST_DROPPED.has(name)) headers.push(name, value);
  });
  if (chunked) headers.push("transfer-encoding", "chunked");
  headers.push(CLIENT_ADDRESS_HEADER, remoteAddress);
  const closeAsked = /(^|,)\s*close\s*(,|$)/i.test(req.getHeader("connection"));
  return { method, path, headers, hasBody, closeAsked };
}

export class Forwarder {
  readonly #target: string | ForwardTarget;
  readonly #worker: string;
  readonly #upstream: string;
  readonly #beforeAnswer: ((answer: IncomingMessage) => Promise<void>) | null;
  readonly #agent: Agent;
  #inFlight = 0;
  #idle: (() => void)[] = [];

  /** `target`: the writer's Unix socket path, or a cluster's leader. */
  constructor(target: string | ForwardTarget, worker: string, options: ForwarderOptions = {}) {
    this.#target = target;
    this.#worker = worker;
    this.#upstream = options.upstream ?? "writer";
    this.#beforeAnswer = options.beforeAnswer ?? null;
    // Keep-alive: a forwarded request costs no connect; long-polls each hold one connection (no cap, so polls held
    // for minutes never queue other requests). An idle connection is closed here after IDLE_CONNECTION_MS; one the
    // other side closed as a request went out is retried for a GET (below).
    this.#agent = new Agent({
      keepAlive: true,
      maxSockets: Number.POSITIVE_INFINITY,
      scheduling: "lifo",
      timeout: options.idleConnectionMs ?? IDLE_CONNECTION_MS,
    });
  }

  /** Requests forwarded and not yet answered. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Resolves once every forwarded request has been answered (or its client left). */
  drained(): Promise<void> {
    return this.#inFlight === 0 ? Promise.resolve() : new Promise((resolve) => this.#idle.push(resolve));
  }

  close(): void {
    this.#agent.destroy();
  }

  /** Takes the request: call synchronously from the uWS handler (headers are read now). */
  forward(res: HttpResponse, req: HttpRequest, remoteAddress: string): void {
    this.#send(res, captureHead(req, remoteAddress), null);
  }

  /**
   * Passes on a request whose head was captured in the uWS handler and whose body was
   * read whole since (http/forward's callers that must look at it to choose the target).
   */
  forwardRead(res: HttpResponse, head: ForwardedHead, body: Buffer): void {
    this.#send(res, head, body);
  }

  #send(res: HttpResponse, head: ForwardedHead, readBody: Buffer | null): void {
    const { method, path, headers, hasBody, closeAsked } = head;
    const base = typeof this.#target === "string" ? null : this.#target.url();
    if (typeof this.#target !== "string" && base === null) {
      const reply = errorReply(503, "No leader is known yet; try again in a moment", null);
      refuseAfterBody(res, hasBody && readBody === null, reply, [
        [WORKER_HEADER, this.#worker],
        ["Retry-After", "1"],
      ]);
      return;
    }

    this.#inFlight++;
    let done = false;
    let aborted = false;
    const settle = (): void => {
      if (done) return;
      done = true;
      if (--this.#inFlight === 0) for (const resolve of this.#idle.splice(0)) resolve();
    };
    const where =
      base === null
        ? { socketPath: this.#target as string }
        : { host: new URL(base).hostname, port: Number(new URL(base).port) };
    // A kept-alive connection the other side closed as this request went out (it was being replaced, or stopped)
    // fails with ECONNRESET before any answer: a request without a body is sent again once, on a new connection,
    // as Node's documentation advises; a body may already have been acted on.
    const retriable = (method === "GET" || method === "HEAD") && !hasBody && readBody === null;
    const open = (retried: boolean): ClientRequest => {
      const upstream = httpRequest({ ...where, method, path, headers, agent: this.#agent });
      let answered = false;
      upstream.on("error", (error: NodeJS.ErrnoException) => {
        if (aborted || done) return;
        if (retriable && !retried && !answered && upstream.reusedSocket && error.code === "ECONNRESET") {
          current = open(true);
          current.end();
          return;
        }
        // The writer is restarting (or gone): clients retry a 502, as they do behind nginx.
        send(res, () => aborted, errorReply(502, "The server is restarting; try again in a moment", null), [
          [WORKER_HEADER, this.#worker],
          ["Retry-After", "1"],
        ]);
        settle();
      });
      upstream.on("response", (answer) => {
        answered = true;
        this.#answer(res, answer, method, closeAsked, () => aborted, settle);
      });
      return upstream;
    };
    let current = open(false);
    const upstream = current;
    res.onAborted(() => {
      aborted = true;
      // Destroyed, not returned to the pool: the other side sees its client leave (a long-poll ends there).
      current.destroy();
      settle();
    });
    if (readBody !== null) {
      upstream.end(readBody);
      return;
    }
    if (!hasBody) {
      upstream.end();
      return;
    }
    res.onData((chunk, isLast) => {
      if (aborted) return;
      // uWS reuses the chunk's memory after this callback: copy.
      const more = upstream.write(Buffer.from(new Uint8Array(chunk)));
      if (isLast) upstream.end();
      else if (!more) {
        res.pause();
        upstream.once("drain", () => {
          if (!aborted) res.resume();
        });
      }
    });
  }

  #answer(
    res: HttpResponse,
    answer: IncomingMessage,
    method: string,
    closeAsked: boolean,
    aborted: () => boolean,
    settle: () => void,
  ): void {
    const chunks: Buffer[] = [];
    answer.on("data", (chunk: Buffer) => chunks.push(chunk));
    answer.on("error", () => settle());
    answer.on("end", () => {
      if (this.#beforeAnswer === null) return pass();
      this.#beforeAnswer(answer).then(pass, pass);
    });
    const pass = (): void => {
      if (aborted()) return settle();
      const raw = answer.rawHeaders;
      res.cork(() => {
        res.writeStatus(`${answer.statusCode ?? 502} ${answer.statusMessage ?? ""}`);
        for (let i = 0; i + 1 < raw.length; i += 2) {
          const name = raw[i] as string;
          if (!ANSWER_DROPPED.has(name.toLowerCase())) res.writeHeader(name, raw[i + 1] as string);
        }
        res.writeHeader(WORKER_HEADER, `${this.#worker}>${this.#upstream}`);
        // See http/respond's send: uWS 20.30 mishandles a reported length here.
        if (method === "HEAD") res.endWithoutBody();
        else res.end(Buffer.concat(chunks), closeAsked);
      });
      settle();
    };
  }
}
