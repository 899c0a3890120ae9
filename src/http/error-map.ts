/**
 * @module http/error-map
 * The one registry from error codes to the wire: every EngineError — the engine's and
 * the HTTP layer's own (src/http/errors.ts: unknown route, wrong method, bad bodies,
 * rate limits) — gets its HTTP status and Zulip's `code` here, and nowhere else.
 * Record<ErrorCode, ...> is exhaustive: a new code that is not mapped does not
 * compile; test/http/error-map.test.ts checks that every code is raised somewhere.
 */
import type { ErrorCode } from "../engine/index.js";

export interface WireError {
  readonly status: number;
  /** Zulip's `code` field; null: none (405); absent: the engine code itself. */
  readonly wire?: string | null;
}

export const ERROR_MAP: Readonly<Record<ErrorCode, WireError>> = {
  BAD_REQUEST: { status: 400 },
  REQUEST_VARIABLE_MISSING: { status: 400 },
  REQUEST_CONFUSING_VAR: { status: 400 },
  BAD_NARROW: { status: 400 },
  STREAM_DOES_NOT_EXIST: { status: 400 },
  UNAUTHORIZED_PRINCIPAL: { status: 400 },
  // Basic-auth failures are all UNAUTHORIZED (Zulip's decorator converts them); the
  // login endpoints (fetch_api_key, jwt/fetch_api_key) keep the specific codes.
  UNAUTHORIZED: { status: 401 },
  USER_DEACTIVATED: { status: 401 },
  REALM_DEACTIVATED: { status: 401 },
  AUTHENTICATION_FAILED: { status: 401 },
  NONEXISTENT_SUBDOMAIN: { status: 404 },
  RATE_LIMIT_HIT: { status: 429 },
  BAD_EVENT_QUEUE_ID: { status: 400 },
  REACTION_ALREADY_EXISTS: { status: 400 },
  REACTION_DOES_NOT_EXIST: { status: 400 },
  MOVE_MESSAGES_TIME_LIMIT_EXCEEDED: { status: 400 },
  NOT_FOUND: { status: 404, wire: "BAD_REQUEST" },
  ACCESS_DENIED: { status: 403, wire: "BAD_REQUEST" },
  INTERNAL_SERVER_ERROR: { status: 500 },
  // Only openStore raises it, before any server exists.
  DATA_DIRECTORY_LOCKED: { status: 500 },
  CANNOT_DEACTIVATE_GROUP_IN_USE: { status: 400 },
  CANNOT_DEACTIVATE_LAST_USER: { status: 400 },
  PUSH_SERVICE_NOT_CONFIGURED: { status: 400 },
  NO_ACTIVE_PUSH_DEVICE: { status: 400 },
  INVALID_PUSH_DEVICE_TOKEN: { status: 400 },
  INVALID_REMOTE_PUSH_DEVICE_TOKEN: { status: 400 },
  // Zulip's statuses for bouncer trouble (the E2EE test notification): the server's
  // configuration is 403, the bouncer unreachable or failing is 502 Bad Gateway.
  ADMIN_ACTION_REQUIRED: { status: 403 },
  FAILED_TO_CONNECT_BOUNCER: { status: 502 },
  INTERNAL_SERVER_ERROR_ON_BOUNCER: { status: 502 },
  BAD_IMAGE: { status: 400 },
  INVITATION_FAILED: { status: 400 },
  REALM_UPLOAD_QUOTA: { status: 400 },
  EXPECTATION_MISMATCH: { status: 400 },
  CANNOT_ADMINISTER_CHANNEL: { status: 400 },
  // Zulip's OpenAPI: 409 Conflict for a name already in use.
  CHANNEL_ALREADY_EXISTS: { status: 409 },
  STREAM_WILDCARD_MENTION_NOT_ALLOWED: { status: 400 },
  TOPIC_WILDCARD_MENTION_NOT_ALLOWED: { status: 400 },
  // Zulip answers unknown /api/v1 paths with 404; this server answers JSON there.
  UNKNOWN_ROUTE: { status: 404, wire: "BAD_REQUEST" },
  METHOD_NOT_ALLOWED: { status: 405, wire: null },
  BODY_TOO_LARGE: { status: 413, wire: "BAD_REQUEST" },
  MALFORMED_BODY: { status: 400, wire: "BAD_REQUEST" },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, wire: "BAD_REQUEST" },
  // The image's host failed or was too slow: Bad Gateway, as go-camo answers.
  EXTERNAL_IMAGE_UNAVAILABLE: { status: 502, wire: "BAD_REQUEST" },
  // Load shedding (http/load-limits): Zulip's nginx answers 503 too; no code of its own.
  SERVER_BUSY: { status: 503, wire: "BAD_REQUEST" },
  // A webhook's `api_key` parameter: Zulip's InvalidAPIKeyError keeps its code there (no Basic-auth conversion).
  INVALID_API_KEY: { status: 401 },
  // Zulip answers 200 so that the service does not retry (or disable the hook) for an event it will never post.
  UNSUPPORTED_WEBHOOK_EVENT_TYPE: { status: 200 },
  MISSING_HTTP_EVENT_HEADER: { status: 400 },
  CSRF_FAILED: { status: 403 },
  // A JsonableError in Zulip: 400 (its OpenAPI description shows this code for /bot_storage).
  PERMISSION_DENIED: { status: 400 },
};
