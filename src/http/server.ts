/**
 * @module http/server
 * createServer(store, options): the uWebSockets.js app. One catch-all handler reads
 * the request head synchronously, registers onAborted, streams the body, then:
 * route -> authenticate -> rate limit -> parse parameters -> one engine call ->
 * envelope. No business rules here.
 */
import uWS from "uWebSockets.js";
import { EngineError, RateLimitError, SCRYPT_COST, type ScryptCost, type Store } from "../engine/index.js";
import { MethodNotAllowedError, UnknownRouteError } from "./errors.js";
import { emojiDataReply } from "./emoji-data.js";
import { isRealmEmojiPath, realmEmojiFileReply } from "./realm-emoji-files.js";
import { emojiFilePath } from "../emoji/images.js";
import { avatarFilePath } from "./avatar-images.js";
import { AuthFailureGuard, clientName, hasCredentials, LoginGuard, realmFor } from "./auth.js";
import { sessionChallenge } from "./session.js";
import { listenCompat, type CompatListener } from "./compat-listener.js";
import { listenFrames, type FrameListener } from "./frame-listener.js";
import { WORKER_HEADER } from "./worker-headers.js";
import {
  DEFAULT_MAX_BODY_BYTES,
  RawReply,
  type AuthedEndpoint,
  type Endpoint,
  type OptionalAuthEndpoint,
  type PublicEndpoint,
  type ServerInfo,
} from "./endpoint.js";
import { bufferSource, UwsBody, type BodySource } from "./body-source.js";
import { linger, sheds, type Admission, type Caller, type Pipeline } from "./admission.js";
import { BodyBudget, OpenRequests, type LoadLimitOptions } from "./load-limits.js";
import { guardReply, type HeaderList } from "./response-head.js";
import { Uploads } from "../uploads/index.js";
import { RealmExports } from "../exports/realm-exports.js";
import { ENDPOINTS } from "./endpoints/index.js";
import { parseParams, type ParamShape } from "./params.js";
import {
  DEFAULT_AUTH_FAILURE_LIMIT,
  DEFAULT_LOGIN_LIMIT,
  DEFAULT_RATE_LIMIT,
  RateLimiter,
  type RateLimitConfig,
} from "./rate-limit.js";
import { DEFAULT_EMAIL_CHANGE_LIMITS, WindowLimiter } from "./rate-limit.js";
import { DEFAULT_JOIN_LIMITS, JoinGuard, type JoinLimits } from "./pages/join-limits.js";
import { isFormBody, parseBody, parseQuery, readHead, type RequestHead } from "./request.js";
import { RequestLog, type RequestLogOptions } from "./request-log.js";
import type { ServerLimits, SharedAdmission, SharedLimits } from "./shared-limits.js";
import { mayReadMetrics, METRICS_PATH, ServerMetrics } from "./metrics.js";
import {
  bodyByteLength,
  engineErrorReply,
  errorReply,
  FILE_TYPE,
  JSON_TYPE,
  ReadyReply,
  send,
  success,
} from "./respond.js";
import type { Reply } from "./respond.js";
import type { ClusterHooks } from "./cluster-hooks.js";
import { matchPage, methodNotAllowedPage, type PageRoute } from "./pages/index.js";
import { escapeHtml, page } from "./pages/html.js";
import { ERROR_MAP } from "./error-map.js";
import { Router, type RouteMatch } from "./router.js";
import { defaultWebRoot, StaticFiles } from "./static-files.js";
import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from "../wire/version.js";
import { MessageJsonCache } from "./views/message-cache.js";
import { placeholderEmailDomain } from "./views/limited-guest-users.js";
import { UserListCache } from "./views/user-list-cache.js";
import { WindowReplyCache } from "./views/window-cache.js";
import { GroupListCache } from "./views/group-list-cache.js";
import { EventHub, type HubOptions } from "../realtime/index.js";
import { DEFAULT_CONFIG, type ServerConfig } from "../config/index.js";
import { BouncerClient } from "../push/bouncer-client.js";
import { ImageProxy, type FetchLimits } from "../external-content/index.js";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const API_PREFIX = "/api/v1";
/** What restored event queues hear after a graceful restart (Zulip's restart event). */
const RESTART_EVENT = {
  zulip_version: ZULIP_VERSION,
  zulip_merge_base: ZULIP_MERGE_BASE,
  zulip_feature_level: ZULIP_FEATURE_LEVEL,
  server_generation: Math.floor(Date.now() / 1000),
};
/** uSockets listen option (ListenOptions.LIBUS_LISTEN_EXCLUSIVE_PORT in the declarations). */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

export interface ServerOptions {
  /** The configuration file's settings (Zulip's names); Zulip's defaults when absent. Options below override it. */
  readonly config?: ServerConfig;
  /** Host clients use; subdomains of it select realms. Default: the config's EXTERNAL_HOST, else "localhost". */
  readonly externalHost?: string;
  /** Public base URL; default http://<externalHost>:<port>. */
  readonly baseUrl?: string;
  /** Per-user limit, or false to disable (tests, benchmarks). */
  readonly rateLimit?: RateLimitConfig | false;
  /** Failed authentication attempts per client address, or false to disable. */
  readonly authFailureLimit?: RateLimitConfig | false;
  /**
   * Password attempts per account (Zulip's authenticate_by_username), or false to disable. Off with RATE_LIMITING
   * false, as in Zulip.
   */
  readonly loginLimit?: RateLimitConfig | false;
  /**
   * Join-page submissions per client address and complete forms per link
   * (pages/join-limits.ts), or false. Off with RATE_LIMITING false.
   */
  readonly joinLimit?: JoinLimits | false;
  /**
   * Email changes per user (Zulip's email_change_by_user: 2 an hour, 5 a day),
   * or false. Off with RATE_LIMITING false.
   */
  readonly emailChangeLimit?: readonly RateLimitConfig[] | false;
  /**
   * scrypt parameters for new password hashes (and the decoy compared when an account has none). Default SCRYPT_COST;
   * tests pass a cheap one.
   */
  readonly passwordHashCost?: ScryptCost;
  /** Ceiling on every endpoint's body limit, in bytes (endpoints default to DEFAULT_MAX_BODY_BYTES). */
  readonly maxBodyBytes?: number;
  /** Caps on requests in progress and on buffered bodies (http/load-limits); default the config's. */
  readonly loadLimits?: LoadLimitOptions;
  /** Budget for ready-to-send message JSON, in bytes. */
  readonly messageCacheBytes?: number;
  /** Budget for whole GET /messages answers kept per user and parameters, in bytes (0: none kept). */
  readonly windowCacheBytes?: number;
  /** Keep the realm's user and group lists as ready JSON (default true; false: built per request). */
  readonly listCaches?: boolean;
  /** Where unexpected errors are reported. */
  readonly logError?: (message: string, error: unknown) => void;
  /** Event queue settings (clock, heartbeat, backlog cap), or a hub the caller owns. */
  readonly events?: HubOptions | EventHub;
  /** Request log level, destination and slow threshold; silent when absent. */
  readonly requestLog?: RequestLogOptions;
  /** Bearer token that lets non-loopback clients read GET /metrics (loopback always may). */
  readonly metricsToken?: string;
  /**
   * The process's push bouncer client (src/server.ts builds one for the server and the
   * push sender); when absent, one is built from the config's bouncer settings.
   */
  readonly bouncer?: BouncerClient | null;
  /** How long a request the client waits on (the E2EE test notification) may wait for the push bouncer. */
  readonly bouncerTimeoutMs?: number;
  /**
   * The data directory: uploaded files go to DATA/uploads (custom emoji images to
   * DATA/uploads/avatars). Without it, uploads go to a fresh directory under the
   * system's temporary directory (tests, embedders that take no uploads), which does
   * not outlive the machine, and custom emoji uploads are refused.
   */
  readonly dataDir?: string;
  /** Milliseconds since the epoch, for temporary download URLs and the email change limit (tests move it). */
  readonly now?: () => number;
  /** The web client's built files, served at `/`; default this package's dist/web. */
  readonly webRoot?: string;
  /**
   * Key of the /external_content/ image proxy's signed URLs (the config's CAMO_KEY
   * when absent); the store's renderer must sign with the same key. Without either the
   * proxy answers 404.
   */
  readonly camoKey?: string;
  /** The proxy's limits; tests let it reach a loopback image server (publicAndLoopbackAddresses). */
  readonly externalContent?: Partial<FetchLimits>;
  /** One worker of `parley serve --workers` (src/workers); absent for a server alone in its process. */
  readonly worker?: WorkerHooks;
}

/** How a worker shares one port and the writer's state with the other workers (src/workers). */
export interface WorkerHooks {
  /** Sent in X-Parley-Worker on every answer. */
  readonly name: string;
  /** A reader: its store is a follower, which never writes (repairs at start are the writer's). */
  readonly reader?: boolean;
  /** The key every worker signs temporary download URLs with (a URL one hands out opens on any). */
  readonly downloadKey?: Buffer;
  /**
   * A reader's: takes the request away (forwards it to the writer) when it returns true;
   * called synchronously with uWS's request. `unauthorized`: the head's credentials were
   * refused here, and the writer, which keeps the failed-authentication counts, should answer.
   */
  readonly divert?: (res: uWS.HttpResponse, req: uWS.HttpRequest, head: RequestHead, unauthorized: boolean) => boolean;
  /**
   * Runs before a request is answered here, and again after the shared limits' admission
   * (a lease, or a round trip), right before the endpoint: a reader's store catches up with the writer.
   */
  readonly beforeLocal?: () => void;
  /** The per-address, failed-authentication and per-user limits all workers share (http/shared-limits). */
  readonly limits?: SharedLimits;
  /**
   * A reader's, for POST /api/v1/register answered here: the writer sends its events'
   * audiences narrowed to the users with queues here (realtime/writer-stream), so the
   * user is named to it before the snapshot (`ready`), and `release` once answered.
   */
  readonly watchUser?: (userId: number) => { readonly ready: Promise<void>; release(): void };
  /** The other workers' metrics (prom-client JSON), for a /metrics answer covering the whole server. */
  readonly peerMetrics?: () => Promise<readonly unknown[]>;
  /** A cluster node's (src/cluster): GET /health, its /metrics gauges, and the replication gate on writes. */
  readonly cluster?: ClusterHooks;
}

const HEALTH_PATH = "/health";

export interface ParleyServer {
  /** Starts listening; resolves with the bound port (pass 0 for a free one). */
  listen(port: number, host?: string): Promise<number>;
  /** The event queues (to save them on a graceful shutdown). */
  readonly events: EventHub;
  /** The public base URL (known once listening: it carries the bound port unless configured). */
  readonly baseUrl: string;
  /** Uploaded files (the periodic cleanup runs on it; tests wait for thumbnails). */
  readonly uploads: Uploads;
  /** Organization data exports (tests wait for them). */
  readonly exports: RealmExports;
  /**
   * Also serves the API on Node's HTTP parser, for clients the uWS listener leaves
   * unanswered (HTTP/1.0, malformed heads): see http/compat-listener. Resolves with
   * the bound port.
   */
  listenCompat(port: number, host?: string): Promise<number>;
  /** Whole GET /messages answers kept (tests look at what it holds). */
  readonly windows: WindowReplyCache;
  /** Requests in progress and bytes of request bodies held, on both listeners (http/load-limits). */
  readonly load: { readonly openRequests: number; readonly bodyBytes: number };
  /** Open requests, failed-authentication blocks and the per-user limit: the writer worker serves them to readers. */
  readonly limits: ServerLimits;
  /** This process's metrics as prom-client JSON (a reader worker's, for the writer's /metrics). */
  metricsJson(): Promise<unknown[]>;
  /** A worker's listener for what other workers forward (http/frame-listener). */
  listenInternal(socketPath: string): Promise<void>;
  close(): void;
  /**
   * Closes every connection still open after close() (keep-alive ones would otherwise be
   * answered by this closed server): a cluster node hands its port to the server of its
   * new role (src/serve-cluster.ts).
   */
  dropConnections(): void;
}

/** A handler's answer as a reply: Zulip's envelope, or the endpoint's own raw reply. */
function replyOf(data: Record<string, unknown> | RawReply | ReadyReply, ignored: readonly string[]): Reply {
  if (data instanceof ReadyReply) return data.reply(ignored);
  if (!(data instanceof RawReply)) return success(data, ignored);
  const c = data.content;
  if (c.kind === "empty") return { status: data.status, body: "", headers: data.headers, contentType: "" };
  if (c.kind === "body")
    return { status: data.status, body: c.body, headers: data.headers, contentType: c.contentType };
  return {
    status: data.status,
    body: "",
    headers: data.headers,
    contentType: c.contentType,
    file: { path: c.path, start: c.start, length: c.length },
  };
}

export function createServer(store: Store, options: ServerOptions = {}): ParleyServer {
  const config = options.config ?? DEFAULT_CONFIG;
  const externalHost = options.externalHost ?? config.EXTERNAL_HOST ?? "localhost";
  const router = new Router(ENDPOINTS.filter((e) => !e.root));
  const rootRouter = new Router(ENDPOINTS.filter((e) => e.root));
  const logErrorForUploads = (message: string, error: unknown) =>
    (options.logError ?? ((m, e) => console.error(m, e)))(message, error);
  const uploads = new Uploads({
    root:
      options.dataDir !== undefined ? join(options.dataDir, "uploads") : mkdtempSync(join(tmpdir(), "parley-uploads-")),
    maxFileMib: config.MAX_FILE_UPLOAD_SIZE,
    realmQuotaMib: config.REALM_UPLOAD_QUOTA_MIB,
    now: options.now ?? (() => Date.now()),
    onError: logErrorForUploads,
    // A reader worker's would delete the writer's uploads in progress.
    ...(options.worker?.reader ? { recover: false } : {}),
    ...(options.worker?.downloadKey ? { tokenKey: options.worker.downloadKey } : {}),
    ...(options.worker?.cluster?.uploads ? { replica: options.worker.cluster.uploads } : {}),
  });
  /** The endpoint a request names: /api/v1 paths, or the few routes outside it (file downloads). */
  const matchRoute = (method: string, url: string): RouteMatch =>
    url.startsWith(`${API_PREFIX}/`)
      ? router.match(method, url.slice(API_PREFIX.length))
      : rootRouter.match(method, url);
  const limiter =
    options.rateLimit === false || (options.rateLimit === undefined && !config.RATE_LIMITING)
      ? null
      : new RateLimiter(options.rateLimit ?? DEFAULT_RATE_LIMIT);
  const authFailures =
    options.authFailureLimit === false ? null : new RateLimiter(options.authFailureLimit ?? DEFAULT_AUTH_FAILURE_LIMIT);
  const authGuard = new AuthFailureGuard(authFailures);
  const loginLimited = options.loginLimit !== false && (options.loginLimit !== undefined || config.RATE_LIMITING);
  const logins = new LoginGuard(
    loginLimited ? new RateLimiter(options.loginLimit || DEFAULT_LOGIN_LIMIT) : null,
    authFailures,
  );
  const joinLimit = options.joinLimit ?? (config.RATE_LIMITING ? DEFAULT_JOIN_LIMITS : false);
  const joins = joinLimit === false ? new JoinGuard(null, null) : JoinGuard.limited(joinLimit);
  const emailChangeLimit = options.emailChangeLimit ?? (config.RATE_LIMITING ? DEFAULT_EMAIL_CHANGE_LIMITS : false);
  const emailChanges = emailChangeLimit === false ? null : new WindowLimiter(emailChangeLimit, options.now);
  const maxBody = options.maxBodyBytes ?? Number.POSITIVE_INFINITY;
  // Chosen before the body is read, so an oversized body is refused while it streams.
  const bodyLimit = (match: RouteMatch): number => {
    const own = match.kind === "found" ? match.endpoint.maxBodyBytes : undefined;
    return Math.min(own ?? DEFAULT_MAX_BODY_BYTES, maxBody);
  };
  const logError = options.logError ?? ((message, error) => console.error(message, error));
  const bouncer =
    options.bouncer !== undefined
      ? options.bouncer
      : config.PUSH_NOTIFICATION_BOUNCER_URL !== undefined &&
          config.ZULIP_ORG_ID !== undefined &&
          config.ZULIP_ORG_KEY !== undefined
        ? new BouncerClient({
            url: config.PUSH_NOTIFICATION_BOUNCER_URL,
            orgId: config.ZULIP_ORG_ID,
            orgKey: config.ZULIP_ORG_KEY,
            ...(options.bouncerTimeoutMs !== undefined ? { timeoutMs: options.bouncerTimeoutMs } : {}),
          })
        : null;
  const camoKey = options.camoKey ?? config.CAMO_KEY;
  const imageProxyRoot = options.dataDir === undefined ? null : join(options.dataDir, "external_content");
  const imageProxy =
    camoKey === undefined ? null : new ImageProxy({ key: camoKey, root: imageProxyRoot, ...options.externalContent });
  const realmExports = new RealmExports(store, {
    root:
      options.dataDir !== undefined ? join(options.dataDir, "exports") : mkdtempSync(join(tmpdir(), "parley-exports-")),
    uploads: uploads.files,
    emojiFile: (realmId, fileName, still) =>
      options.dataDir === undefined ? null : emojiFilePath(options.dataDir, realmId, fileName, still),
    avatarFile: (realmId, fileName) =>
      options.dataDir === undefined ? null : avatarFilePath(options.dataDir, realmId, fileName),
    logError: logErrorForUploads,
  });
  if (!options.worker?.reader) realmExports.failInterrupted();
  let info: ServerInfo = {
    baseUrl: options.baseUrl ?? `http://${externalHost}`,
    externalHost,
    config,
    bouncer,
    dataDir: options.dataDir ?? null,
    logins,
    passwordHashCost: options.passwordHashCost ?? SCRYPT_COST,
    joins,
    emailChanges,
    imageProxy,
    exports: realmExports,
  };
  const messageJson = new MessageJsonCache(store, options.messageCacheBytes);
  const windows = new WindowReplyCache(store, options.windowCacheBytes);
  const userJson = new UserListCache(store, options.listCaches ?? true);
  const groupJson = new GroupListCache(store, options.listCaches ?? true);
  const ownsHub = !(options.events instanceof EventHub);
  const maxQueuesPerRealm = config.MAX_EVENT_QUEUES_PER_REALM;
  const emailDomainOf = (realmId: number): string => {
    const realm = store.findRealm(realmId);
    return realm === undefined ? new URL(info.baseUrl).host : placeholderEmailDomain(info, realm);
  };
  const hubOptions = { restartEvent: RESTART_EVENT, maxQueuesPerRealm, emailDomainOf, ...options.events };
  const events = options.events instanceof EventHub ? options.events : new EventHub(store, hubOptions);
  const app = uWS.App();
  let listenSocket: uWS.us_listen_socket | null = null;
  let compat: CompatListener | null = null;
  let internal: FrameListener | null = null;
  const worker = options.worker;
  const workerHeader: HeaderList = worker ? [[WORKER_HEADER, worker.name]] : [];
  const requestLog = new RequestLog(options.requestLog ?? { level: "silent" });
  const metrics = new ServerMetrics(store, events, worker?.cluster?.status, worker?.reader !== true);
  const stopRenderFailureLog = store.onRenderFailure(({ messageId, failure }) =>
    logError(`message ${messageId}: Markdown rendering failed; stored as plain text without mentions`, failure),
  );
  const webFiles = new StaticFiles(options.webRoot ?? defaultWebRoot());
  const openRequests = new OpenRequests({
    perAddress: config.MAX_REQUESTS_PER_ADDRESS,
    total: config.MAX_OPEN_REQUESTS,
    ...options.loadLimits,
  });
  const budget = new BodyBudget(options.loadLimits?.bodyBudgetBytes ?? config.BODY_MEMORY_MIB * 1024 * 1024);

  /** Counts, routes and authenticates a request from its head alone (http/admission). */
  function admit(head: RequestHead): Admission {
    const note = requestLog.start(head.method, performance.now());
    const refused = (reply: Reply, counted: boolean): Admission => ({
      head,
      note,
      counted,
      refusal: reply,
      mode: "discard",
      maxBodyBytes: 0,
      caller: null,
    });
    const busy = openRequests.enter(head.remoteAddress);
    if (busy !== null) return refused(engineErrorReply(busy), false);
    try {
      const match = matchRoute(head.method, head.url);
      const admitted = { head, note, counted: true, refusal: null, maxBodyBytes: bodyLimit(match) };
      if (match.kind !== "found") return { ...admitted, mode: "buffer", caller: null };
      const endpoint = match.endpoint;
      note.route = endpoint.path;
      let caller: Caller | null = null;
      // Credentials in the head are checked before the body is read: a client without
      // valid ones gets its 401 without the server holding a byte of its body.
      if (endpoint.auth === "user" || (endpoint.auth === "optional" && hasCredentials(head))) {
        caller = authGuard.authenticate(store, head, externalHost);
        note.realmId = caller.realm.id;
        note.userId = caller.user.id;
      }
      return { ...admitted, mode: endpoint.body === "stream" ? "stream" : "buffer", caller };
    } catch (error) {
      const known = error instanceof EngineError && error.code !== "INTERNAL_SERVER_ERROR";
      if (known) return refused(engineErrorReply(error), true);
      logError(`${head.method} ${head.url}: unexpected error`, error);
      return refused(errorReply(500, "Internal server error", null), true);
    }
  }

  /** A reader's requests as the writer counted them (http/shared-limits), freed by finish. */
  const sharedAdmissions = new WeakMap<Admission, SharedAdmission>();
  /** A reader's registrations whose users were named to the writer (WorkerHooks.watchUser), released by finish. */
  const watchedRegistrations = new WeakMap<Admission, { release(): void }>();

  /** The reply as it will be written (head checked, request ID added), logged and counted; the request's slot freed. */
  function finish(
    admission: Admission,
    reply: Reply,
    headers: HeaderList,
    delivered: boolean,
  ): { reply: Reply; headers: HeaderList } {
    // Nothing is written for a client that went away (thousands may go at once when uWS's idle timeout sweeps).
    const extra: HeaderList = [...headers, ...workerHeader, ["X-Request-Id", admission.note.id]];
    const answer = sessionChallenge(admission.head, reply);
    const type = answer.file ? FILE_TYPE : JSON_TYPE;
    const safe = delivered ? guardReply(answer, extra, type, logError) : { reply: answer, headers: extra };
    const ms = performance.now() - admission.note.startedAt;
    const status = delivered ? safe.reply.status : null;
    const bytes = safe.reply.file ? safe.reply.file.length : bodyByteLength(safe.reply.body);
    requestLog.finish(admission.note, status, delivered ? bytes : 0, ms);
    metrics.observe(admission.head.method, RequestLog.pathOf(admission.note), status, ms / 1000);
    if (admission.counted) openRequests.leave(admission.head.remoteAddress);
    sharedAdmissions.get(admission)?.release();
    watchedRegistrations.get(admission)?.release();
    return safe;
  }

  const pipeline: Pipeline = {
    admit,
    handle,
    finish,
    budget,
    maxConnections: options.loadLimits?.total ?? config.MAX_OPEN_REQUESTS,
    logError,
  };

  app.any("/*", (res, req) => {
    const head = readHead(req, res);
    // uWS closes a "Connection: close" request's socket as soon as its answer ends.
    const closeAsked = /(^|,)\s*close\s*(,|$)/i.test(req.getHeader("connection"));
    if (worker?.divert?.(res, req, head, false)) return;
    worker?.beforeLocal?.();
    const admission = admit(head);
    if (admission.refusal?.status === 401 && worker?.divert?.(res, req, head, true)) {
      if (admission.counted) openRequests.leave(head.remoteAddress);
      return;
    }
    const bodiless = head.method === "GET" || head.method === "HEAD";
    const empty = head.contentLength === 0 || (bodiless && head.contentLength === null);
    const body = new UwsBody(res, empty, admission.mode, admission.maxBodyBytes, budget, head.contentLength);
    let aborted = false;
    let answered = false;
    // Made on first use: most endpoints never look, and a burst of thousands of
    // requests dropped at once (uWS's idle timeout) should not dispatch as many aborts.
    let abort: AbortController | null = null;
    const signal = (): AbortSignal => {
      if (abort === null) {
        abort = new AbortController();
        if (aborted) abort.abort();
      }
      return abort.signal;
    };
    res.onAborted(() => {
      aborted = true;
      body.abort();
      abort?.abort();
    });
    const isAborted = () => aborted;
    const reply = (r: Reply, headers: HeaderList = []): void => {
      if (answered) return;
      answered = true;
      body.discard();
      const shed = !body.complete && sheds(r.status);
      const out = (): void => {
        const safe = finish(admission, r, headers, !aborted);
        send(res, isAborted, safe.reply, safe.headers, head.method === "HEAD", shed);
      };
      // On a keep-alive connection uWS reads (and drops) the rest of the body after the
      // answer by itself; a "close" one it would close at once, resetting a client
      // still sending, which then often loses the answer: wait for the body first.
      if (body.complete || aborted || shed || !closeAsked) out();
      else void linger(body.whenComplete()).then(out);
    };
    if (admission.refusal) {
      reply(admission.refusal);
      return;
    }
    (admission.mode === "stream" ? Promise.resolve<BodySource | Buffer | null>(body) : body.whole())
      .then(async (input) => {
        if (input === null) {
          answered = true;
          finish(admission, errorReply(400, "", null), [], false);
          return;
        }
        const out = await handle(admission, input, signal);
        const gate = worker?.cluster?.beforeReply;
        if (gate === undefined || bodiless) return reply(out.reply, out.headers);
        const replicated = await gate();
        reply(replicated.refusal ?? out.reply, [...out.headers, ...replicated.headers]);
      })
      .catch((error: unknown) => {
        if (error instanceof EngineError) reply(engineErrorReply(error));
        else {
          logError(`${head.method} ${head.url}: unexpected error`, error);
          reply(errorReply(500, "Internal server error", null));
        }
      });
  });

  /** A page for people following a link from mail (src/http/pages): HTML answers, also for every failure. */
  async function servePage(route: PageRoute, head: RequestHead, body: Buffer): Promise<Reply> {
    if (!route.methods.includes(head.method)) return methodNotAllowedPage(route.methods);
    try {
      const { fields } = await parseBody(head, body);
      const realm = realmFor(store, head.host, externalHost);
      const { remoteAddress } = head;
      return await route.handle({ method: head.method, store, realm, server: info, fields, remoteAddress });
    } catch (error) {
      if (error instanceof EngineError && error.code !== "INTERNAL_SERVER_ERROR") {
        const status = ERROR_MAP[error.code].status;
        return page(
          status >= 400 && status < 500 ? status : 400,
          "This request could not be handled",
          `<p>${escapeHtml(error.message)}</p>`,
        );
      }
      logError(`${head.method} ${head.url}: unexpected error`, error);
      return page(
        500,
        "Something went wrong",
        "<p>The server could not complete this request. Please try again later.</p>",
      );
    }
  }

  /** `signal`: made on first use (Node builds an AbortSignal lazily, and most endpoints never look). */
  async function handle(
    admission: Admission,
    body: Buffer | BodySource,
    signal: () => AbortSignal,
  ): Promise<{ reply: Reply; headers: HeaderList }> {
    const { head, note } = admission;
    const none: HeaderList = [];
    let shared: SharedAdmission | null = null;
    const userId = admission.caller?.user.id;
    const watch =
      worker?.watchUser && userId !== undefined && head.method === "POST" && head.url === "/api/v1/register"
        ? worker.watchUser(userId)
        : null;
    if (watch) watchedRegistrations.set(admission, watch);
    if (worker?.limits) {
      // A reader: the writer counts the request for the whole server (per address, blocked addresses, per user).
      const decided = worker.limits.admit(head.remoteAddress, admission.caller?.user.id ?? null);
      shared = decided instanceof Promise ? await decided : decided;
      sharedAdmissions.set(admission, shared);
      if (shared.refusal) return { reply: engineErrorReply(shared.refusal), headers: shared.rate?.headers ?? none };
      // A round trip to the writer crossed turns of the event loop, and lmdb-js renews the read snapshot between
      // turns: catch up again, or the endpoint would read records newer than the memory it caught up
      // (engine/follower). Also after a lease's admission: requests forwarded here (frame-listener) come this way
      // without catching up first.
      worker.beforeLocal?.();
    }
    if (watch) {
      // Named to the writer in parallel with the limits' round trip; the snapshot is taken after (catching up again).
      await watch.ready;
      worker?.beforeLocal?.();
    }
    const emojiData = emojiDataReply(head.method, head.url, head.ifNoneMatch);
    if (emojiData) return { reply: emojiData, headers: none };
    if (isRealmEmojiPath(head.url))
      return { reply: await realmEmojiFileReply(head.method, head.url, info.dataDir), headers: none };
    if (head.url === METRICS_PATH) {
      note.fixedPath = METRICS_PATH;
      const refused = ServerMetrics.refusal(
        head.method,
        mayReadMetrics(head.remoteAddress, head.authorization, options.metricsToken),
        options.metricsToken !== undefined,
      );
      return { reply: refused ?? (await metrics.scrape(worker?.peerMetrics)), headers: none };
    }
    const cluster = worker?.cluster;
    if (head.url === HEALTH_PATH && cluster !== undefined) {
      note.fixedPath = HEALTH_PATH;
      const status = cluster.status();
      const body = {
        role: status.role,
        applied: status.applied,
        leader: status.leader,
        ...(status.serving ? {} : { reason: status.reason }),
      };
      return { reply: { status: status.serving ? 200 : 503, body: JSON.stringify(body) }, headers: none };
    }
    const pageRoute = matchPage(head.url);
    if (pageRoute) {
      note.fixedPath = pageRoute.template;
      return { reply: await servePage(pageRoute, head, Buffer.isBuffer(body) ? body : Buffer.alloc(0)), headers: none };
    }
    if (!head.url.startsWith(`${API_PREFIX}/`)) {
      // The web client's files; other paths outside the API (file downloads) are routes.
      const file = webFiles.reply(head.method, head.url, head.ifNoneMatch);
      if (file) {
        note.fixedPath = `/${file.name}`;
        return { reply: file.reply, headers: none };
      }
    }
    const match = matchRoute(head.method, head.url);
    if (match.kind === "not-found") return { reply: engineErrorReply(new UnknownRouteError()), headers: none };
    if (match.kind === "found") note.route = match.endpoint.path;
    if (match.kind === "method-not-allowed") {
      return { reply: engineErrorReply(new MethodNotAllowedError(match.allowed)), headers: none };
    }
    let rateHeaders: readonly (readonly [string, string])[] = none;
    try {
      const endpoint: Endpoint = match.endpoint;
      const input = parseQuery(head.query);
      // A streamed body is the endpoint's to read; parameters come from the query string then.
      const source = endpoint.body === "stream" ? (Buffer.isBuffer(body) ? bufferSource(body) : body) : null;
      const raw = endpoint.body === "raw" && Buffer.isBuffer(body) ? body : null;
      // A raw body is parsed only when it is a form (a webhook's parameters may be in it).
      if (source === null && (raw === null || isFormBody(head.contentType))) {
        const { fields } = await parseBody(head, Buffer.isBuffer(body) ? body : Buffer.alloc(0));
        for (const [k, v] of fields) input.set(k, v);
      }
      if (endpoint.auth === "none") {
        const parsed = parseParams(endpoint.params as ParamShape, input, endpoint.aliases);
        const realm = realmFor(store, head.host, externalHost);
        note.realmId = realm?.id ?? null;
        const data = await (endpoint as PublicEndpoint<ParamShape>).handler(
          {
            store,
            realm,
            pathParams: match.pathParams,
            server: info,
            remoteAddress: head.remoteAddress,
            head,
            uploads,
            rawBody: raw,
          },
          parsed.values,
        );
        return { reply: replyOf(data, parsed.ignored), headers: none };
      }
      if (endpoint.auth === "optional" && !hasCredentials(head)) {
        const parsed = parseParams(endpoint.params as ParamShape, input, endpoint.aliases);
        const realm = realmFor(store, head.host, externalHost);
        note.realmId = realm?.id ?? null;
        const data = await (endpoint as OptionalAuthEndpoint<ParamShape>).handler(
          { store, realm, user: null, pathParams: match.pathParams, server: info, head, uploads },
          parsed.values,
        );
        return { reply: replyOf(data, parsed.ignored), headers: none };
      }
      const { realm, user } = admission.caller ?? authGuard.authenticate(store, head, externalHost);
      note.realmId = realm.id;
      note.userId = user.id;
      // A reader has the writer's decision (none while the writer restarts: let through).
      const decision = limiter === null ? null : shared !== null ? shared.rate : limiter.take(user.id);
      if (decision !== null) {
        rateHeaders = decision.headers;
        if (!decision.allowed) {
          return {
            reply: engineErrorReply(new RateLimitError(decision.retryAfter)),
            headers: rateHeaders,
          };
        }
      }
      const parsed = parseParams(endpoint.params as ParamShape, input, endpoint.aliases);
      if (endpoint.auth === "optional") {
        const data = await (endpoint as OptionalAuthEndpoint<ParamShape>).handler(
          { store, realm, user, pathParams: match.pathParams, server: info, head, uploads },
          parsed.values,
        );
        return { reply: replyOf(data, parsed.ignored), headers: rateHeaders };
      }
      const ctx = {
        store,
        realm,
        user,
        client: clientName(head.userAgent, input.get("client")),
        pathParams: match.pathParams,
        server: info,
        messageJson,
        windows,
        userJson,
        groupJson,
        events,
        head,
        body: source,
        uploads,
        get signal() {
          return signal();
        },
      };
      const data = await (endpoint as AuthedEndpoint<ParamShape>).handler(ctx, parsed.values);
      return { reply: replyOf(data, parsed.ignored), headers: rateHeaders };
    } catch (error) {
      if (error instanceof EngineError && error.code !== "INTERNAL_SERVER_ERROR")
        return { reply: engineErrorReply(error), headers: rateHeaders };
      logError(`${head.method} ${head.url}: unexpected error`, error);
      return { reply: errorReply(500, "Internal server error", null), headers: rateHeaders };
    }
  }

  return {
    events,
    get baseUrl() {
      return info.baseUrl;
    },
    listen(port, host = "127.0.0.1") {
      return new Promise((resolve, reject) => {
        // Exclusive: uWS otherwise binds with SO_REUSEPORT, and a second server on a busy
        // port would silently share its traffic. The 4-argument form is missing from the
        // bundled type declarations but present in the binary.
        const listenExclusive = app.listen as unknown as (
          h: string,
          p: number,
          options: number,
          cb: (socket: uWS.us_listen_socket | false) => void,
        ) => void;
        // Workers of one server all bind the port (the supervisor checked it was free).
        const exclusivity = worker ? 0 : LIBUS_LISTEN_EXCLUSIVE_PORT;
        listenExclusive.call(app, host, port, exclusivity, (socket) => {
          if (!socket) {
            reject(new Error(`cannot listen on ${host}:${port}: is the port in use? Pass --port N to choose another`));
            return;
          }
          listenSocket = socket;
          const bound = uWS.us_socket_local_port(socket);
          // An EXTERNAL_HOST with its own port (behind a proxy, say) is the public address as it stands.
          if (!options.baseUrl)
            info = {
              ...info,
              baseUrl: externalHost.includes(":") ? `http://${externalHost}` : `http://${externalHost}:${bound}`,
            };
          resolve(bound);
        });
      });
    },
    uploads,
    exports: realmExports,
    windows,
    load: {
      get openRequests() {
        return openRequests.open;
      },
      get bodyBytes() {
        return budget.held;
      },
    },
    limits: { open: openRequests, authFailures, rate: limiter },
    metricsJson: () => metrics.json(),
    async listenInternal(socketPath) {
      internal?.close();
      internal = await listenFrames(pipeline, socketPath);
    },
    async listenCompat(port, host = "127.0.0.1") {
      compat?.close();
      compat = await listenCompat(pipeline, port, host);
      return compat.port;
    },
    close() {
      if (listenSocket) uWS.us_listen_socket_close(listenSocket);
      listenSocket = null;
      if (ownsHub) events.close();
      for (const cache of [messageJson, windows, userJson, groupJson]) cache.dispose();
      metrics.close();
      stopRenderFailureLog();
      compat?.close();
      compat = null;
      internal?.close();
      internal = null;
      realmExports.close();
      requestLog.flush();
    },
    dropConnections() {
      // In the binary (uWS 20.30), absent from the bundled type declarations.
      (app as unknown as { close(): void }).close();
    },
  };
}
