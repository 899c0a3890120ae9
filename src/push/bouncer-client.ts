/**
 * @module push/bouncer-client
 * HTTP requests to the push notification bouncer, as Zulip's send_to_push_bouncer
 * makes them: POST JSON to BOUNCER_URL/api/v1/remotes/<endpoint>, HTTP Basic auth
 * with the server's registration (ZULIP_ORG_ID:ZULIP_ORG_KEY), a ZulipServer
 * User-Agent, a timeout. Failures are sorted the way Zulip sorts them, because the
 * caller's reaction differs: the bouncer unreachable (network, timeout) or failing
 * (5xx) is worth retrying; a 4xx names a problem by its code.
 */
import { ZULIP_VERSION } from "../wire/version.js";

/** Zulip's PushBouncerSession timeout is 30 s; a notification that late is of little use. */
export const DEFAULT_BOUNCER_TIMEOUT_MS = 15_000;

export interface BouncerClientOptions {
  /** PUSH_NOTIFICATION_BOUNCER_URL. */
  readonly url: string;
  readonly orgId: string;
  readonly orgKey: string;
  readonly timeoutMs?: number;
}

/** Network error or timeout: the bouncer was not reached (Zulip's PushNotificationBouncerRetryLaterError). */
export class BouncerUnreachableError extends Error {}

/** The bouncer answered 5xx (Zulip's PushNotificationBouncerServerError). */
export class BouncerServerError extends Error {
  constructor(readonly status: number) {
    super(`Received ${status} from push notification bouncer`);
  }
}

/** The bouncer refused the request (4xx with Zulip's code, or an unexpected status). */
export class BouncerRefusedError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | null,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Codes that say this server's own registration is at fault (credentials, plan,
 * realm not uploaded): every request would fail alike, so they are the operator's to
 * fix (Zulip reports them as ADMIN_ACTION_REQUIRED) and worth retrying, not a verdict
 * on one request.
 */
export const SERVER_LEVEL_CODES: ReadonlySet<string> = new Set([
  "INVALID_ZULIP_SERVER",
  "PUSH_NOTIFICATIONS_DISALLOWED",
  "MISSING_REMOTE_REALM",
  "UNAUTHORIZED",
]);

export class BouncerClient {
  readonly #url: string;
  readonly #auth: string;
  readonly #timeoutMs: number;

  constructor(options: BouncerClientOptions) {
    this.#url = options.url;
    this.#auth = `Basic ${Buffer.from(`${options.orgId}:${options.orgKey}`).toString("base64")}`;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_BOUNCER_TIMEOUT_MS;
  }

  /** POSTs `body` as JSON to remotes/<endpoint>; resolves with the bouncer's JSON answer. */
  async post(endpoint: string, body: unknown): Promise<Record<string, unknown>> {
    // Like Python's urljoin with an absolute path: the bouncer URL's own path is replaced.
    const url = new URL(`/api/v1/remotes/${endpoint}`, this.#url);
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: {
          Authorization: this.#auth,
          "Content-Type": "application/json",
          "User-Agent": `ZulipServer/${ZULIP_VERSION}`,
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      throw new BouncerUnreachableError(
        `${error instanceof Error ? error.name : "Error"} while trying to connect to push notification bouncer`,
        { cause: error },
      );
    }
    if (response.status >= 500) throw new BouncerServerError(response.status);
    const parsed = parseObject(text);
    if (response.status >= 400) {
      const code =
        typeof parsed?.["code"] === "string" ? parsed["code"] : response.status === 401 ? "UNAUTHORIZED" : null;
      const msg =
        typeof parsed?.["msg"] === "string" ? parsed["msg"] : `Push notification bouncer returned ${response.status}`;
      throw new BouncerRefusedError(response.status, code, msg);
    }
    if (response.status !== 200 || parsed === null)
      throw new BouncerRefusedError(
        response.status,
        null,
        `Push notification bouncer returned unexpected status code ${response.status}`,
      );
    return parsed;
  }
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}
