/**
 * @module http/session
 * The web client's browser session, as Zulip's web app has it: an HttpOnly `sessionid`
 * cookie (SameSite=Lax) set at login, accepted wherever API credentials are (the
 * client's own API requests, /user_uploads and thumbnails), and a `csrftoken` cookie the
 * page's script reads and sends back as X-CSRFToken on every request that may write
 * (Django's double submit). API clients keep HTTP Basic with their key; a request with
 * an Authorization header is never read as a session request.
 *
 * The CSRF token is derived from the session token (SHA-256 under a fixed label), so it
 * needs no storage and changes with each login; a page of another site can neither
 * read it nor, under SameSite=Lax, even send the session cookie with a POST.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { CsrfError } from "./errors.js";
import type { Reply } from "./respond.js";

export const SESSION_COOKIE = "sessionid";
export const CSRF_COOKIE = "csrftoken";
/** Methods that do not write (RFC 9110 safe methods): no CSRF token needed, as in Django. */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS", "TRACE"]);
/** A cookie header longer than this is not read (sessions are ~60 characters). */
const MAX_COOKIE_HEADER = 8192;

/** One cookie's value from a Cookie header, or null; the first of repeated names wins (RFC 6265 order). */
export function cookieValue(header: string, name: string): string | null {
  if (header === "" || header.length > MAX_COOKIE_HEADER) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    return value === "" ? null : value;
  }
  return null;
}

/** The session token a request carries, or null. */
export function sessionTokenOf(head: { readonly extra: { readonly cookie: string } }): string | null {
  return cookieValue(head.extra.cookie, SESSION_COOKIE);
}

export function csrfTokenFor(sessionToken: string): string {
  return createHash("sha256").update(`parley-csrf\0${sessionToken}`).digest("base64url");
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** host[:port] of an Origin header, or null when it is none ("null", malformed). */
function originHost(origin: string): string | null {
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return null;
  }
}

/**
 * Django's CSRF check, for a session request: a write must come from a page of this
 * host (Origin, when the browser sends one) and carry the session's token in
 * X-CSRFToken. Throws CsrfError (403 CSRF_FAILED) with Django's reasons.
 */
export function checkCsrf(
  head: {
    readonly method: string;
    readonly host: string;
    readonly extra: { readonly origin: string; readonly "x-csrftoken": string };
  },
  sessionToken: string,
): void {
  if (SAFE_METHODS.has(head.method)) return;
  checkOrigin(head);
  const sent = head.extra["x-csrftoken"].trim();
  if (sent === "") throw new CsrfError("CSRF token missing.");
  if (!sameText(sent, csrfTokenFor(sessionToken))) throw new CsrfError("CSRF token incorrect.");
}

/** A browser's Origin, when sent, must name this host (login uses it alone: there is no session yet). */
export function checkOrigin(head: { readonly host: string; readonly extra: { readonly origin: string } }): void {
  const origin = head.extra.origin.trim();
  if (origin === "") return;
  if (originHost(origin) !== head.host.trim().toLowerCase())
    throw new CsrfError(`Origin checking failed - ${origin.slice(0, 100)} does not match any trusted origins.`);
}

function cookie(name: string, value: string, maxAge: number, httpOnly: boolean, secure: boolean): string {
  const attributes = [`${name}=${value}`, "Path=/", `Max-Age=${maxAge}`, "SameSite=Lax"];
  if (httpOnly) attributes.push("HttpOnly");
  if (secure) attributes.push("Secure");
  return attributes.join("; ");
}

/** Set-Cookie headers for a new session; Secure when the server's public URL is https. */
export function sessionCookies(token: string, maxAge: number, secure: boolean): [string, string][] {
  return [
    ["Set-Cookie", cookie(SESSION_COOKIE, token, maxAge, true, secure)],
    ["Set-Cookie", cookie(CSRF_COOKIE, csrfTokenFor(token), maxAge, false, secure)],
  ];
}

/** Set-Cookie headers that remove both cookies (logout, or a session that no longer exists). */
export function clearedCookies(secure: boolean): [string, string][] {
  return [
    ["Set-Cookie", cookie(SESSION_COOKIE, "", 0, true, secure)],
    ["Set-Cookie", cookie(CSRF_COOKIE, "", 0, false, secure)],
  ];
}

/**
 * A 401 to a page's script says `WWW-Authenticate: Session`, as Zulip's answers to its
 * web app do: a Basic challenge makes the browser ask for a password itself (or, headless,
 * fail the request) instead of handing the 401 to the script. A page's script request
 * is a same-origin one (Sec-Fetch-Site, sent by browsers only) that is no navigation and
 * has no Authorization header; every other client keeps the Basic challenge.
 */
export function sessionChallenge(
  head: {
    readonly authorization: string;
    readonly extra: { readonly "sec-fetch-mode": string; readonly "sec-fetch-site": string };
  },
  reply: Reply,
): Reply {
  const { "sec-fetch-mode": mode, "sec-fetch-site": site } = head.extra;
  if (reply.status !== 401 || head.authorization !== "" || site !== "same-origin" || mode === "navigate") return reply;
  const headers = (reply.headers ?? []).map(([name, value]): readonly [string, string] =>
    name.toLowerCase() === "www-authenticate" && value.startsWith("Basic ")
      ? [name, 'Session realm="zulip"']
      : [name, value],
  );
  return { ...reply, headers };
}
