/**
 * @module http/errors
 * Failures the HTTP layer itself detects, in the engine's one error hierarchy (so
 * src/http/error-map.ts maps them like every other error). Each may add response
 * headers (Allow, Retry-After).
 */
import { clip, EngineError, type ErrorCode, type ErrorData } from "../engine/index.js";

export class HttpError extends EngineError {
  readonly headers: readonly (readonly [string, string])[];
  constructor(
    code: ErrorCode,
    message: string,
    data: ErrorData = {},
    headers: readonly (readonly [string, string])[] = [],
  ) {
    super(code, message, data);
    this.headers = headers;
  }
}

/** No endpoint at this path. */
export class UnknownRouteError extends HttpError {
  constructor() {
    super("UNKNOWN_ROUTE", "Not Found");
  }
}

/** The path exists with other methods (Zulip: 405 with the allowed list, no code). */
export class MethodNotAllowedError extends HttpError {
  constructor(allowed: readonly string[]) {
    super("METHOD_NOT_ALLOWED", "Method Not Allowed", { allowed_methods: allowed }, [["Allow", allowed.join(", ")]]);
  }
}

/** A request body that cannot be read: too large, malformed, or of a type we do not parse. */
export class BodyError extends HttpError {
  constructor(code: "BODY_TOO_LARGE" | "MALFORMED_BODY" | "UNSUPPORTED_MEDIA_TYPE", message: string) {
    super(code, message);
  }
}

/** The image proxy could not get an image from its host (unreachable, too slow, failing). */
export class UpstreamImageError extends HttpError {
  constructor(message: string) {
    super("EXTERNAL_IMAGE_UNAVAILABLE", message);
  }
}

/** Seconds a client refused for load is told to wait: load passes quickly. */
const BUSY_RETRY_AFTER_SECONDS = 1;

/** The server cannot take this request now (http/load-limits: a cap or the body budget): 503 with Retry-After. */
export class ServerBusyError extends HttpError {
  constructor(message: string) {
    super("SERVER_BUSY", message, {}, [["Retry-After", String(BUSY_RETRY_AFTER_SECONDS)]]);
  }
}

/** A webhook's `api_key` parameter names no account (Zulip's InvalidAPIKeyError and InvalidAPIKeyFormatError). */
export class InvalidApiKeyError extends HttpError {
  constructor(malformed: boolean) {
    super("INVALID_API_KEY", malformed ? "Malformed API key" : "Invalid API key");
  }
}

/**
 * An event a webhook integration knows but does not post (Zulip's
 * UnsupportedWebhookEventTypeError): status 200, so that the service keeps the hook.
 */
export class UnsupportedWebhookEventError extends HttpError {
  constructor(webhookName: string, eventType: string) {
    super(
      "UNSUPPORTED_WEBHOOK_EVENT_TYPE",
      `The '${clip(eventType)}' event isn't currently supported by the ${webhookName} webhook; ignoring`,
      { webhook_name: webhookName, event_type: clip(eventType) },
    );
  }
}

/** The header a webhook integration reads its event type from is missing (Zulip's MissingHTTPEventHeaderError). */
export class MissingEventHeaderError extends HttpError {
  constructor(header: string) {
    super("MISSING_HTTP_EVENT_HEADER", `Missing the HTTP event header '${header}'`, { header });
  }
}

/** A webhook payload that is not JSON (Zulip's InvalidJSONError); the endpoint also tells the bot's owner. */
export class InvalidJsonError extends HttpError {
  constructor() {
    super("BAD_REQUEST", "Malformed JSON");
  }
}

/**
 * A write with the session cookie but without the page's CSRF token, or from another
 * site's page (Zulip's CsrfFailureError: 403 CSRF_FAILED, with Django's reason).
 */
export class CsrfError extends HttpError {
  constructor(reason: string) {
    super("CSRF_FAILED", `CSRF error: ${reason}`, { reason });
  }
}
