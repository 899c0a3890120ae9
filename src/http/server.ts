/**
 * @module http/server
 * createServer(store, options): the uWebSockets.js app. One catch-all handler reads
 * the request head synchronously, registers onAborted, streams the body, then:
 * route -> authenticate -> rate limit -> parse parameters -> one engine call ->
 * envelope. No business rules here.
 */
import uWS from "uWebSockets.js";
import { EngineError, type Store } from "../engine/index.js";
import { authenticate, clientName, realmFor } from "./auth.js";
import { DEFAULT_MAX_BODY_BYTES, type AuthedEndpoint, type Endpoint, type PublicEndpoint, type ServerInfo } from "./endpoint.js";
import { ENDPOINTS } from "./endpoints/index.js";
import { parseParams, type ParamShape } from "./params.js";
import { DEFAULT_RATE_LIMIT, RateLimiter, type RateLimitConfig } from "./rate-limit.js";
import { BodyError, parseBody, parseQuery, readBody, readHead, type RequestHead } from "./request.js";
import { engineErrorReply, errorReply, send, success, type Reply } from "./respond.js";
import { Router } from "./router.js";
import { MessageJsonCache } from "./views/message-cache.js";

const API_PREFIX = "/api/v1";
/** uSockets listen option (ListenOptions.LIBUS_LISTEN_EXCLUSIVE_PORT in the declarations). */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

export interface ServerOptions {
  /** Host clients use; subdomains of it select realms. Default "localhost". */
  readonly externalHost?: string;
  /** Public base URL; default http://<externalHost>:<port>. */
  readonly baseUrl?: string;
  /** Per-user limit, or false to disable (tests, benchmarks). */
  readonly rateLimit?: RateLimitConfig | false;
  /** Ceiling on every endpoint's body limit, in bytes (endpoints default to DEFAULT_MAX_BODY_BYTES). */
  readonly maxBodyBytes?: number;
  /** Budget for ready-to-send message JSON, in bytes. */
  readonly messageCacheBytes?: number;
  /** Where unexpected errors are reported. */
  readonly logError?: (message: string, error: unknown) => void;
}

export interface ParleyServer {
  /** Starts listening; resolves with the bound port (pass 0 for a free one). */
  listen(port: number, host?: string): Promise<number>;
  close(): void;
}

export function createServer(store: Store, options: ServerOptions = {}): ParleyServer {
  const externalHost = options.externalHost ?? "localhost";
  const router = new Router(ENDPOINTS);
  const limiter = options.rateLimit === false ? null : new RateLimiter(options.rateLimit ?? DEFAULT_RATE_LIMIT);
  const maxBody = options.maxBodyBytes ?? Number.POSITIVE_INFINITY;
  // Chosen before the body is read, so an oversized body is refused while it streams.
  const bodyLimit = (head: RequestHead): number => {
    const match = head.url.startsWith(`${API_PREFIX}/`) ? router.match(head.method, head.url.slice(API_PREFIX.length)) : null;
    const own = match?.kind === "found" ? match.endpoint.maxBodyBytes : undefined;
    return Math.min(own ?? DEFAULT_MAX_BODY_BYTES, maxBody);
  };
  const logError = options.logError ?? ((message, error) => console.error(message, error));
  let info: ServerInfo = { baseUrl: options.baseUrl ?? `http://${externalHost}`, externalHost };
  const messageJson = new MessageJsonCache(store, options.messageCacheBytes);
  const app = uWS.App();
  let listenSocket: uWS.us_listen_socket | null = null;

  app.any("/*", (res, req) => {
    const head = readHead(req);
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    const isAborted = () => aborted;
    readBody(res, head, bodyLimit(head), isAborted)
      .then(async (body) => {
        if (body === null) return;
        const reply = await handle(head, body);
        send(res, isAborted, reply.reply, reply.headers);
      })
      .catch((error: unknown) => {
        if (error instanceof BodyError) send(res, isAborted, errorReply(error.status, error.message, "BAD_REQUEST"));
        else {
          logError(`${head.method} ${head.url}: unexpected error`, error);
          send(res, isAborted, errorReply(500, "Internal server error", null));
        }
      });
  });

  async function handle(head: RequestHead, body: Buffer): Promise<{ reply: Reply; headers: readonly (readonly [string, string])[] }> {
    const none: readonly (readonly [string, string])[] = [];
    if (!head.url.startsWith(`${API_PREFIX}/`)) return { reply: errorReply(404, "Not Found", "BAD_REQUEST"), headers: none };
    const match = router.match(head.method, head.url.slice(API_PREFIX.length));
    if (match.kind === "not-found") return { reply: errorReply(404, "Not Found", "BAD_REQUEST"), headers: none };
    if (match.kind === "method-not-allowed") {
      return { reply: errorReply(405, "Method Not Allowed", null, { allowed_methods: match.allowed }, [["Allow", match.allowed.join(", ")]]), headers: none };
    }
    let rateHeaders: readonly (readonly [string, string])[] = none;
    try {
      const { fields } = await parseBody(head, body);
      const input = parseQuery(head.query);
      for (const [k, v] of fields) input.set(k, v);
      const endpoint: Endpoint = match.endpoint;
      if (endpoint.auth === "none") {
        const parsed = parseParams(endpoint.params as ParamShape, input, endpoint.aliases);
        const realm = realmFor(store, head.host, externalHost);
        const data = (endpoint as PublicEndpoint<ParamShape>).handler({ store, realm, pathParams: match.pathParams, server: info }, parsed.values);
        return { reply: success(data, parsed.ignored), headers: none };
      }
      const { realm, user } = authenticate(store, head.authorization, head.host, externalHost);
      if (limiter) {
        const decision = limiter.take(user.id);
        rateHeaders = decision.headers;
        if (!decision.allowed) {
          return {
            reply: errorReply(429, "API usage exceeded rate limit", "RATE_LIMIT_HIT", { "retry-after": decision.retryAfter }, [["Retry-After", decision.retryAfter.toFixed(3)]]),
            headers: rateHeaders,
          };
        }
      }
      const parsed = parseParams(endpoint.params as ParamShape, input, endpoint.aliases);
      const ctx = { store, realm, user, client: clientName(head.userAgent), pathParams: match.pathParams, server: info, messageJson };
      const data = (endpoint as AuthedEndpoint<ParamShape>).handler(ctx, parsed.values);
      return { reply: success(data, parsed.ignored), headers: rateHeaders };
    } catch (error) {
      if (error instanceof EngineError && error.code !== "INTERNAL_SERVER_ERROR") return { reply: engineErrorReply(error), headers: rateHeaders };
      if (error instanceof BodyError) return { reply: errorReply(error.status, error.message, "BAD_REQUEST"), headers: rateHeaders };
      logError(`${head.method} ${head.url}: unexpected error`, error);
      return { reply: errorReply(500, "Internal server error", null), headers: rateHeaders };
    }
  }

  return {
    listen(port, host = "127.0.0.1") {
      return new Promise((resolve, reject) => {
        // Exclusive: uWS otherwise binds with SO_REUSEPORT, and a second server on a busy
        // port would silently share its traffic. The 4-argument form is missing from the
        // bundled type declarations but present in the binary.
        const listenExclusive = app.listen as unknown as (h: string, p: number, options: number, cb: (socket: uWS.us_listen_socket | false) => void) => void;
        listenExclusive.call(app, host, port, LIBUS_LISTEN_EXCLUSIVE_PORT, (socket) => {
          if (!socket) {
            reject(new Error(`cannot listen on ${host}:${port}: is the port in use? Pass --port N to choose another`));
            return;
          }
          listenSocket = socket;
          const bound = uWS.us_socket_local_port(socket);
          if (!options.baseUrl) info = { ...info, baseUrl: `http://${externalHost}:${bound}` };
          resolve(bound);
        });
      });
    },
    close() {
      if (listenSocket) uWS.us_listen_socket_close(listenSocket);
      listenSocket = null;

    },
  };
}
