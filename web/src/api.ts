/**
 * The public Zulip API, same origin, form-encoded like every Zulip client: strings as
 * they are, everything else as JSON text. The browser's session cookie (HttpOnly, set
 * by POST /accounts/login/) is the credential, as in Zulip's web app: the page never
 * holds an API key. Every request that may write carries the CSRF token from the
 * `csrftoken` cookie in X-CSRFToken.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    /** Zulip's error code (BAD_EVENT_QUEUE_ID, ...); "NETWORK" when no reply came. */
    readonly code: string,
    message: string,
    /** Seconds, from Retry-After on a 429. */
    readonly retryAfter: number | null,
  ) {
    super(message);
  }
}

export type Params = Record<
  string,
  string | number | boolean | readonly unknown[] | Record<string, unknown> | undefined
>;

/** A JSON object from the server (the API only answers with objects). */
export type Json = Record<string, unknown>;

function encode(params: Params): URLSearchParams {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== undefined) form.set(k, typeof v === "string" ? v : JSON.stringify(v));
  return form;
}

/** The session's CSRF token (Django's `csrftoken` cookie, readable by the page by design); "" without one. */
export function csrfToken(): string {
  // Through globalThis: the unit tests type-check this module without the DOM library.
  const cookies = (globalThis as { document?: { cookie?: string } }).document?.cookie ?? "";
  for (const part of cookies.split(";")) {
    const [name, value] = part.trim().split("=");
    if (name === "csrftoken" && value) return value;
  }
  return "";
}

/** Headers of a request: the CSRF token on everything but reads. */
function headersFor(method: string): Record<string, string> {
  return method === "GET" || method === "HEAD" ? {} : { "X-CSRFToken": csrfToken() };
}

/** `path` under /api/v1, or a full path from the server's root ("/accounts/login/"). */
async function request(
  method: string,
  path: string,
  params: Params,
  signal?: AbortSignal,
  files?: FormData,
): Promise<Json> {
  const form = encode(params);
  const inQuery = method === "GET" || method === "DELETE";
  const prefix = path.startsWith("/accounts/") ? "" : "/api/v1";
  const url = `${prefix}${path}${inQuery && form.size > 0 ? `?${form}` : ""}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: headersFor(method),
      body: inQuery ? null : (files ?? form),
      signal: signal ?? null,
      credentials: "same-origin",
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new ApiError(0, "NETWORK", "The server could not be reached", null);
  }
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  const obj: Json = typeof body === "object" && body !== null ? (body as Json) : {};
  if (!response.ok || obj["result"] !== "success") {
    const retry = Number(response.headers.get("Retry-After"));
    const code = typeof obj["code"] === "string" ? obj["code"] : response.status === 404 ? "NOT_FOUND" : "BAD_REQUEST";
    const msg = typeof obj["msg"] === "string" ? obj["msg"] : `HTTP ${response.status}`;
    throw new ApiError(response.status, code, msg, Number.isFinite(retry) && retry > 0 ? retry : null);
  }
  return obj;
}

/** The API as the logged-in browser: `email` is whose session it is. */
export class Api {
  constructor(readonly email: string) {}
  get(path: string, params: Params = {}, signal?: AbortSignal): Promise<Json> {
    return request("GET", path, params, signal);
  }
  post(path: string, params: Params = {}): Promise<Json> {
    return request("POST", path, params);
  }
  patch(path: string, params: Params = {}): Promise<Json> {
    return request("PATCH", path, params);
  }
  delete(path: string, params: Params = {}): Promise<Json> {
    return request("DELETE", path, params);
  }
  /** A multipart POST (files), e.g. POST /users/me/avatar. */
  postFiles(path: string, files: FormData): Promise<Json> {
    return request("POST", path, {}, undefined, files);
  }
}

/** POST /accounts/login/: a session for the password or API key; the email it belongs to. */
export async function logIn(username: string, secret: { password: string } | { api_key: string }): Promise<string> {
  const reply = await request("POST", "/accounts/login/", { username, ...secret });
  const email = reply["email"];
  if (typeof email !== "string") throw new ApiError(200, "BAD_REPLY", "The server sent no email", null);
  return email;
}

/** POST /accounts/logout/: ends the session on the server (for every tab) and clears its cookies. */
export async function logOut(): Promise<void> {
  await request("POST", "/accounts/logout/", {});
}

/** The session's owner, when this browser has one (a reload, a new tab); null when it must log in. */
export async function currentSession(): Promise<string | null> {
  // Without the CSRF cookie there is no session: no request, which would count as a failed login.
  if (csrfToken() === "") return null;
  try {
    const me = await request("GET", "/users/me", {});
    return typeof me["email"] === "string" ? me["email"] : null;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return null;
    throw error;
  }
}
