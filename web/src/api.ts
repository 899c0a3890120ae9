/**
 * The public Zulip API, same origin, form-encoded like every Zulip client: strings as
 * they are, everything else as JSON text. Credentials travel in the Authorization
 * header only, never in a URL.
 */

export interface Credentials {
  readonly email: string;
  readonly apiKey: string;
}

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

function basic(creds: Credentials): string {
  // btoa takes Latin-1 only; emails may not be.
  const bytes = new TextEncoder().encode(`${creds.email}:${creds.apiKey}`);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return `Basic ${btoa(binary)}`;
}

async function request(
  method: string,
  path: string,
  params: Params,
  headers: Record<string, string>,
  signal?: AbortSignal,
): Promise<Json> {
  const form = encode(params);
  const inQuery = method === "GET" || method === "DELETE";
  const url = `/api/v1${path}${inQuery && form.size > 0 ? `?${form}` : ""}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: inQuery ? null : form,
      signal: signal ?? null,
      credentials: "omit",
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

export class Api {
  readonly #auth: string;
  constructor(readonly creds: Credentials) {
    this.#auth = basic(creds);
  }
  get(path: string, params: Params = {}, signal?: AbortSignal): Promise<Json> {
    return request("GET", path, params, { Authorization: this.#auth }, signal);
  }
  post(path: string, params: Params = {}): Promise<Json> {
    return request("POST", path, params, { Authorization: this.#auth });
  }
  patch(path: string, params: Params = {}): Promise<Json> {
    return request("PATCH", path, params, { Authorization: this.#auth });
  }
  delete(path: string, params: Params = {}): Promise<Json> {
    return request("DELETE", path, params, { Authorization: this.#auth });
  }
}

/** POST /fetch_api_key (Zulip's password login): the user's API key. */
export async function fetchApiKey(username: string, password: string): Promise<Credentials> {
  const reply = await request("POST", "/fetch_api_key", { username, password }, {});
  const apiKey = reply["api_key"];
  const email = reply["email"];
  if (typeof apiKey !== "string" || typeof email !== "string")
    throw new ApiError(200, "BAD_REPLY", "The server sent no API key", null);
  return { email, apiKey };
}
