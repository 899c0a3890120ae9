/**
 * @module http/auth
 * Realm from the Host header, then HTTP Basic (API email + API key). Every failure
 * on this path is 401 UNAUTHORIZED with WWW-Authenticate, as Zulip's Basic-auth
 * decorator converts them; a non-Basic scheme is 400 like Zulip. (Zulip's
 * authenticated_rest_api_view re-raises InvalidAPIKeyError, UserDeactivatedError and
 * RealmDeactivatedError as UnauthorizedError with their message; the INVALID_API_KEY
 * code of its OpenAPI example is only sent where the key is an `api_key` parameter,
 * which parley does not take.)
 */
import { timingSafeEqual } from "node:crypto";
import {
  AuthError,
  BOT_TYPE,
  BadRequestError,
  EngineError,
  NoSuchRealmError,
  RateLimitError,
  type Store,
} from "../engine/index.js";
import { HashingBusyError } from "../engine/index.js";
import type { Realm, User } from "../engine/index.js";
import type { RateLimiter } from "./rate-limit.js";
import type { RequestHead } from "./request.js";
import { checkCsrf, sessionTokenOf } from "./session.js";

/**
 * The subdomain a Host header names, by Zulip's get_subdomain_from_hostname: the part
 * before ".EXTERNAL_HOST" (and, for local development, before ".localhost"); every
 * other host, the bare external host, localhost and IP addresses included, is the root
 * subdomain "". Ports are ignored on both sides.
 */
export function subdomainOf(hostHeader: string, externalHost: string): string {
  const host = hostHeader.trim().toLowerCase().replace(/:\d+$/, "");
  const base = externalHost.toLowerCase().replace(/:\d+$/, "");
  for (const suffix of [`.${base}`, ".localhost"]) {
    if (host.endsWith(suffix) && host.length > suffix.length) return host.slice(0, -suffix.length);
  }
  return "";
}

export function realmFor(store: Store, hostHeader: string, externalHost: string): Realm | undefined {
  return store.findRealmBySubdomain(subdomainOf(hostHeader, externalHost));
}

const NOT_LOGGED_IN = "Not logged in: API authentication or user session required";

function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Well-formed Basic headers seen recently, decoded: a client sends the same header on
 * every request, and decoding it (base64, splits, regexes) was a third of the cost of
 * authenticating. Only the parse is remembered; every check against the store below
 * runs on each request. Cleared when full, so a flood of distinct headers costs memory
 * bounded by the limit.
 */
const parsedHeaders = new Map<string, { readonly email: string; readonly apiKey: string }>();
const PARSED_HEADERS_MAX = 10_000;
/**
 * Real headers are ~100 characters (an email and a 32-character key); longer ones are parsed but not kept, so the memo
 * stays under a few MB.
 */
const PARSED_HEADER_MAX_LENGTH = 512;

function parseBasic(authorization: string): { readonly email: string; readonly apiKey: string } {
  const known = parsedHeaders.get(authorization);
  if (known !== undefined) return known;
  const parts = authorization.trim().split(/\s+/);
  if (parts[0]?.toLowerCase() !== "basic")
    throw new BadRequestError("This endpoint requires HTTP basic authentication.");
  if (parts.length !== 2) throw new AuthError("Invalid authorization header for basic auth");
  const decoded = Buffer.from(parts[1]!, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0 || decoded.indexOf(":", colon + 1) >= 0 || !/^[A-Za-z0-9+/=]+$/.test(parts[1]!))
    throw new AuthError("Invalid authorization header for basic auth");
  const parsed = { email: decoded.slice(0, colon).trim(), apiKey: decoded.slice(colon + 1).trim() };
  if (authorization.length > PARSED_HEADER_MAX_LENGTH) return parsed;
  if (parsedHeaders.size >= PARSED_HEADERS_MAX) parsedHeaders.clear();
  parsedHeaders.set(authorization, parsed);
  return parsed;
}

/** Authenticates a request; throws AuthError / BadRequestError / NoSuchRealmError. */
export function authenticate(
  store: Store,
  authorization: string,
  hostHeader: string,
  externalHost: string,
): { realm: Realm; user: User } {
  if (authorization === "") throw new AuthError(NOT_LOGGED_IN);
  const { email, apiKey } = parseBasic(authorization);
  const realm = realmFor(store, hostHeader, externalHost);
  if (!realm) throw new NoSuchRealmError();
  if (!/^[A-Za-z0-9]{32}$/.test(apiKey)) throw new AuthError("Malformed API key");
  const owner = store.findUserByApiKey(apiKey);
  if (!owner || owner.email.toLowerCase() !== email.toLowerCase() || !constantTimeEqual(owner.apiKey, apiKey))
    throw new AuthError("Invalid API key");
  if (owner.realmId !== realm.id) throw new AuthError("Account is not associated with this subdomain");
  if (realm.deactivated) throw new AuthError("This organization has been deactivated");
  if (!owner.isActive) throw new AuthError("Account is deactivated");
  // An incoming webhook bot's key is given to third-party services: it may only post to /external/ (no Basic auth).
  if (owner.botType === BOT_TYPE.INCOMING_WEBHOOK)
    throw new AuthError("This API is not available to incoming webhook bots.");
  return { realm, user: owner };
}

/** The head fields authentication reads. */
export type AuthHead = Pick<RequestHead, "method" | "authorization" | "host" | "remoteAddress"> & {
  readonly extra: Pick<RequestHead["extra"], "cookie" | "origin" | "x-csrftoken">;
};

/** Whether the head carries credentials of either kind: an Authorization header or the web client's session cookie. */
export function hasCredentials(head: Pick<AuthHead, "authorization" | "extra">): boolean {
  return head.authorization !== "" || sessionTokenOf(head) !== null;
}

/**
 * HTTP Basic when the request has an Authorization header; otherwise the web client's
 * session cookie (http/session), whose writes must also pass the CSRF check. An
 * unknown, expired or outdated session is "not logged in", as Zulip answers a request
 * without a session.
 */
export function authenticateRequest(store: Store, head: AuthHead, externalHost: string): { realm: Realm; user: User } {
  if (head.authorization !== "") return authenticate(store, head.authorization, head.host, externalHost);
  const token = sessionTokenOf(head);
  if (token === null) throw new AuthError(NOT_LOGGED_IN);
  const realm = realmFor(store, head.host, externalHost);
  if (!realm) throw new NoSuchRealmError();
  const user = store.webSessionUser(token);
  if (user === null || user.realmId !== realm.id) throw new AuthError(NOT_LOGGED_IN);
  if (realm.deactivated) throw new AuthError("This organization has been deactivated");
  if (!user.isActive) throw new AuthError("Account is deactivated");
  checkCsrf(head, token);
  return { realm, user };
}

/**
 * authenticateRequest(), with failed attempts limited per client address: each failure takes
 * a token from the address's bucket, and an address with none left gets 429
 * RATE_LIMIT_HIT before its credentials are even looked at, so keys cannot be probed
 * faster than the limit. Successful requests take nothing here (the per-user limit
 * applies to them).
 */
export class AuthFailureGuard {
  readonly #limiter: RateLimiter | null;

  constructor(limiter: RateLimiter | null) {
    this.#limiter = limiter;
  }

  authenticate(store: Store, head: AuthHead, externalHost: string): { realm: Realm; user: User } {
    const limiter = this.#limiter;
    if (limiter === null) return authenticateRequest(store, head, externalHost);
    const wait = limiter.wait(head.remoteAddress);
    if (wait > 0) throw new RateLimitError(wait);
    try {
      return authenticateRequest(store, head, externalHost);
    } catch (error) {
      if (error instanceof EngineError) limiter.take(head.remoteAddress);
      throw error;
    }
  }
}

/**
 * Password attempts (POST /fetch_api_key, and the old password of a password change),
 * limited as Zulip's rate_limit_auth does: every attempt takes a token from the
 * account's bucket (Zulip's "authenticate_by_username", keyed here by realm and email)
 * and a success refills it; failed attempts also take one from the client address's
 * bucket, the same one failed Basic auth uses. An account or address with none left
 * is refused before its password is even hashed.
 */
export class LoginGuard {
  readonly #byAccount: RateLimiter | null;
  readonly #byAddress: RateLimiter | null;

  constructor(byAccount: RateLimiter | null, byAddress: RateLimiter | null) {
    this.#byAccount = byAccount;
    this.#byAddress = byAddress;
  }

  /** The account key: emails are case-insensitive, and each realm has its own accounts. */
  static account(realmId: number, email: string): string {
    return `${realmId}:${email.trim().toLowerCase()}`;
  }

  /**
   * Runs one attempt under the limits: seconds to wait when refused (nothing run),
   * else the attempt's result. `isFailure` tells which thrown errors are wrong
   * credentials; `run` must check the credentials before anything else it may refuse.
   */
  async attempt<T>(
    account: string,
    address: string | null,
    run: () => Promise<T>,
    isFailure: (error: unknown) => boolean,
  ): Promise<{ readonly waitSeconds: number } | { readonly value: T }> {
    const addressWait = address === null ? 0 : (this.#byAddress?.wait(address) ?? 0);
    if (addressWait > 0) return { waitSeconds: addressWait };
    if (this.#byAccount) {
      const decision = this.#byAccount.take(account);
      if (!decision.allowed) return { waitSeconds: decision.retryAfter };
    }
    try {
      const value = await run();
      this.#byAccount?.reset(account);
      return { value };
    } catch (error) {
      // Refused before the password was looked at (hashing at capacity): no attempt was
      // made, so the account neither loses a try nor has its earlier failures forgotten.
      if (error instanceof HashingBusyError) {
        this.#byAccount?.refund(account);
        throw error;
      }
      // Any other refusal (deactivated account, weak new password) came after the
      // password matched: that counts as a success for the limits.
      if (!isFailure(error)) this.#byAccount?.reset(account);
      else if (address !== null) this.#byAddress?.take(address);
      throw error;
    }
  }

  /** A password changed: earlier attempts no longer count (Zulip's do_change_password clears them). */
  forget(account: string): void {
    this.#byAccount?.reset(account);
  }
}

/**
 * Zulip's get_client_name: a non-empty `client` request parameter wins; otherwise the
 * User-Agent's product token ("ZulipMobile/27.2 (...)" -> "ZulipMobile").
 */
export function clientName(userAgent: string, requested?: string): string {
  if (requested !== undefined && requested !== "") return requested.slice(0, 30);
  const token = userAgent.trim().split(/[\s/]/)[0] ?? "";
  return token === "" ? "Unspecified" : token.slice(0, 30);
}
