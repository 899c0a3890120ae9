/**
 * @module http/endpoint
 * The shape of one endpoint file: method, path, auth, its parameter schema and a
 * handler that calls one engine operation and returns the success data fields.
 */
import type { Realm, Store, User } from "../engine/index.js";
import type { EventHub } from "../realtime/index.js";
import type { ParamShape, ParamValues } from "./params.js";
import type { UploadedFile } from "./request.js";
import type { MessageJsonCache } from "./views/message-cache.js";
import type { UserListCache } from "./views/user-list-cache.js";
import type { ServerConfig } from "../config/index.js";
import type { BouncerClient } from "../push/bouncer-client.js";
import type { ScryptCost } from "../engine/index.js";
import type { LoginGuard } from "./auth.js";

export type Method = "GET" | "POST" | "PATCH" | "DELETE" | "PUT";

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
  /** Ready-to-send user lists, shared by the server's requests. */
  readonly userJson: UserListCache;
  /** The server's event queues. */
  readonly events: EventHub;
  /** Aborted when the client goes away (long polls stop waiting). */
  readonly signal: AbortSignal;
  /** Files of a multipart body. */
  readonly files: readonly UploadedFile[];
}

export interface PublicContext {
  readonly store: Store;
  readonly realm: Realm | undefined;
  readonly pathParams: Readonly<Record<string, string>>;
  readonly server: ServerInfo;
  /** The client's address (login attempts are limited per address). */
  readonly remoteAddress: string;
}

export type SuccessData = Record<string, unknown>;

/** A handler answers with success data, at once or later (long polls). */
export type HandlerResult = SuccessData | Promise<SuccessData>;

interface EndpointBase<P extends ParamShape> {
  readonly method: Method;
  /** Relative to /api/v1; ":name" segments are path parameters. */
  readonly path: string;
  readonly params: P;
  /** Deprecated wire names accepted for a parameter: alias -> name. */
  readonly aliases?: Readonly<Record<string, string>>;
  /** Largest request body in bytes; default DEFAULT_MAX_BODY_BYTES. */
  readonly maxBodyBytes?: number;
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

export type Endpoint<P extends ParamShape = ParamShape> = AuthedEndpoint<P> | PublicEndpoint<P>;

/** Declares an endpoint; keeps the handler's input type tied to its schema. */
export function defineEndpoint<P extends ParamShape>(spec: AuthedEndpoint<P> | PublicEndpoint<P>): Endpoint {
  return spec as unknown as Endpoint;
}
