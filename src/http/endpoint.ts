/**
 * @module http/endpoint
 * The shape of one endpoint file: method, path, auth, its parameter schema and a
 * handler that calls one engine operation and returns the success data fields.
 */
import type { RealmExports } from "../exports/realm-exports.js";
import type { Realm, Store, User } from "../engine/index.js";
import type { EventHub } from "../realtime/index.js";
import type { ParamShape, ParamValues, RefKind } from "./params.js";
import type { EndpointTesting } from "./endpoint-testing.js";
import type { RequestHead } from "./request.js";
import type { BodySource } from "./body-source.js";
import type { Uploads } from "../uploads/index.js";
import type { MessageJsonCache } from "./views/message-cache.js";
import type { UserListCache } from "./views/user-list-cache.js";
import type { WindowReplyCache } from "./views/window-cache.js";
import type { ReadyReply } from "./respond.js";
import type { SuccessData } from "./reply.js";
import type { GroupListCache } from "./views/group-list-cache.js";
import type { ServerConfig } from "../config/index.js";
import type { BouncerClient } from "../push/bouncer-client.js";
import type { ScryptCost } from "../engine/index.js";
import type { LoginGuard } from "./auth.js";
import type { JoinGuard } from "./pages/join-limits.js";
import type { WindowLimiter } from "./rate-limit.js";
import type { ImageProxy } from "../external-content/index.js";

export type Method = "GET" | "POST" | "PATCH" | "DELETE" | "PUT" | "HEAD";

export interface ServerInfo {
  /** Public base URL clients use (for avatar and upload URLs). */
  readonly baseUrl: string;
  readonly externalHost: string;
  /** The server configuration (Zulip's setting names; src/config). */
  readonly config: ServerConfig;
  /** The push bouncer, when PUSH_NOTIFICATION_BOUNCER_URL (and the server's registration) are configured. */
  readonly bouncer: BouncerClient | null;
  /** The data directory (uploaded custom emoji live under it); null for a server without one. */
  readonly dataDir: string | null;
  /** Limits on password attempts, per account and per client address. */
  readonly logins: LoginGuard;
  /** scrypt parameters for new password hashes. */
  readonly passwordHashCost: ScryptCost;
  /** Limits on join-page submissions, per client address and per invitation link. */
  readonly joins: JoinGuard;
  /** Email changes per user (Zulip's email_change_by_user); null when rate limiting is off. */
  readonly emailChanges: WindowLimiter | null;
  /** The /external_content/ image proxy; null without a camo key. */
  readonly imageProxy: ImageProxy | null;
  /** Organization data exports: their background work and tarballs (src/exports). */
  readonly exports: RealmExports;
}

/** What a handler sees: the store, the caller and request facts, already authenticated. */
export interface AuthedContext {
  readonly store: Store;
  readonly realm: Realm;
  readonly user: User;
  /** Zulip's client name from the User-Agent ("ZulipMobile", "website", "API"). */
  readonly client: string;
  readonly pathParams: Readonly<Record<string, string>>;
  readonly server: ServerInfo;
  /** Ready-to-send message JSON, shared by the server's requests. */
  readonly messageJson: MessageJsonCache;
  /** Whole GET /messages answers, per user and parameters, until a change may alter them. */
  readonly windows: WindowReplyCache;
  /** Ready-to-send user lists, shared by the server's requests. */
  readonly userJson: UserListCache;
  /** Ready-to-send user group lists, shared by the server's requests. */
  readonly groupJson: GroupListCache;
  /** The server's event queues. */
  readonly events: EventHub;
  /** Aborted when the client goes away (long polls stop waiting). */
  readonly signal: AbortSignal;
  /** The request's head (headers the endpoint may need: Range, tus headers...). */
  readonly head: RequestHead;
  /** Endpoints with `body: "stream"`: the unread body; null for the others. */
  readonly body: BodySource | null;
  /** Uploaded files on disk, thumbnails, download tokens. */
  readonly uploads: Uploads;
}

/** What an endpoint with optional credentials sees: the caller, or null for a visitor without any. */
export interface OptionalContext {
  readonly store: Store;
  /** The realm the Host names (undefined: none). */
  readonly realm: Realm | undefined;
  readonly user: User | null;
  readonly pathParams: Readonly<Record<string, string>>;
  readonly server: ServerInfo;
  readonly head: RequestHead;
  readonly uploads: Uploads;
}

export interface PublicContext {
  readonly store: Store;
  readonly realm: Realm | undefined;
  readonly pathParams: Readonly<Record<string, string>>;
  readonly server: ServerInfo;
  /** The client's address (login attempts are limited per address). */
  readonly remoteAddress: string;
  readonly head: RequestHead;
  readonly uploads: Uploads;
  /** Endpoints with `body: "raw"`: the whole body as received; null for the others. */
  readonly rawBody: Buffer | null;
}

export type { SuccessData };

/**
 * A reply other than Zulip's success envelope: a file (streamed from disk, maybe a
 * byte range), an empty tus answer, or a body of the endpoint's own.
 */
export class RawReply {
  constructor(
    readonly status: number,
    readonly headers: readonly (readonly [string, string])[],
    readonly content:
      | { readonly kind: "empty" }
      | { readonly kind: "body"; readonly body: string | Buffer; readonly contentType: string }
      | {
          readonly kind: "file";
          readonly path: string;
          readonly start: number;
          readonly length: number;
          readonly contentType: string;
        },
  ) {}
}

/** A handler answers with success data, at once or later (long polls), or with a raw reply. */
export type HandlerResult = SuccessData | RawReply | ReadyReply | Promise<SuccessData | RawReply | ReadyReply>;

interface EndpointBase<P extends ParamShape> {
  readonly method: Method;
  /** Relative to /api/v1; ":name" segments are path parameters. */
  readonly path: string;
  readonly params: P;
  /** Deprecated wire names accepted for a parameter: alias -> name. */
  readonly aliases?: Readonly<Record<string, string>>;
  /**
   * Largest request body in bytes; default DEFAULT_MAX_BODY_BYTES (not for "stream" bodies, whose handler bounds them).
   */
  readonly maxBodyBytes?: number;
  /**
   * "stream": the body is not read before the handler runs; the handler gets it as
   * ctx.body, after authentication, and parameters come from the query string only.
   * "raw" (incoming webhooks, whose body is a service's payload of any type): read whole
   * under the body limit like the others, parameters from the query string and from a
   * form body, and the body itself handed over as ctx.rawBody (a public endpoint's).
   */
  readonly body?: "stream" | "raw";
  /** The path is outside /api/v1 (file downloads at /user_uploads/...). */
  readonly root?: true;
  /** What the ":name" path segments name; one that names nothing is in testing.notRefs. */
  readonly pathRefs?: Readonly<Record<string, RefKind>>;
  /**
   * Why a reader worker of `parley serve --workers` forwards this read to the writer
   * (http/forward's writerOnly) instead of answering it from its follower store: the
   * answer is held in the writer's memory only, or the read writes. Checked by
   * test/workers/reader-gets.test.ts, which asks every GET route through a reader.
   */
  readonly answeredByWriter?: string;
  /** What the route-table tests need to know about this endpoint (src/http/endpoint-testing.ts). */
  readonly testing?: EndpointTesting;
}

/** The ":name" segments of a route path, in order. */
export function pathParamNames(path: string): string[] {
  return [...path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
}

/**
 * The body limit of an endpoint that sets none: room for a maximal message (10,000
 * characters, up to 40 KB of UTF-8 and three times that percent-encoded) or a
 * 5000-ID list several times over, and small enough that decoding and validating a
 * full body of junk stays a few milliseconds of the event loop (bench:worst measured
 * 30-90 ms for 1 MiB bodies on a loaded 2-core machine).
 * Deviation: Zulip accepts larger messages and cuts them to 10,000 characters; here a
 * message whose body is over this limit is refused with 413.
 */
export const DEFAULT_MAX_BODY_BYTES = 256 * 1024;

export interface AuthedEndpoint<P extends ParamShape> extends EndpointBase<P> {
  readonly auth: "user";
  handler(ctx: AuthedContext, input: ParamValues<P>): HandlerResult;
}

export interface PublicEndpoint<P extends ParamShape> extends EndpointBase<P> {
  readonly auth: "none";
  handler(ctx: PublicContext, input: ParamValues<P>): HandlerResult;
}

/** Credentials are checked when present (401 when wrong); without any the caller is a visitor (user null). */
export interface OptionalAuthEndpoint<P extends ParamShape> extends EndpointBase<P> {
  readonly auth: "optional";
  handler(ctx: OptionalContext, input: ParamValues<P>): HandlerResult;
}

export type Endpoint<P extends ParamShape = ParamShape> =
  AuthedEndpoint<P> | PublicEndpoint<P> | OptionalAuthEndpoint<P>;

/** Declares an endpoint; keeps the handler's input type tied to its schema. */
export function defineEndpoint<P extends ParamShape>(
  spec: AuthedEndpoint<P> | PublicEndpoint<P> | OptionalAuthEndpoint<P>,
): Endpoint {
  // A misspelt name in the metadata would leave the parameter it meant unmarked.
  const segments = pathParamNames(spec.path);
  const names = new Set([...Object.keys(spec.params), ...segments]);
  const stray = [
    ...Object.keys(spec.pathRefs ?? {}).filter((name) => !segments.includes(name)),
    ...Object.keys(spec.testing?.notRefs ?? {}).filter((name) => !names.has(name)),
  ];
  if (stray.length > 0) throw new Error(`${spec.method} ${spec.path}: no parameter ${stray.join(", ")}`);
  return spec as unknown as Endpoint;
}
