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
  // Every 401 is UNAUTHORIZED on the wire, as Zulip's Basic-auth decorator reports it.
  UNAUTHORIZED: { status: 401 },
  USER_DEACTIVATED: { status: 401, wire: "UNAUTHORIZED" },
  REALM_DEACTIVATED: { status: 401, wire: "UNAUTHORIZED" },
  NONEXISTENT_SUBDOMAIN: { status: 404 },
  RATE_LIMIT_HIT: { status: 429 },
  BAD_EVENT_QUEUE_ID: { status: 400 },
  REACTION_ALREADY_EXISTS: { status: 400 },
  REACTION_DOES_NOT_EXIST: { status: 400 },
  NOT_FOUND: { status: 404, wire: "BAD_REQUEST" },
  ACCESS_DENIED: { status: 403, wire: "BAD_REQUEST" },
  INTERNAL_SERVER_ERROR: { status: 500 },
  // Only openStore raises it, before any server exists.
  DATA_DIRECTORY_LOCKED: { status: 500 },
  CANNOT_DEACTIVATE_GROUP_IN_USE: { status: 400 },
  REALM_UPLOAD_QUOTA: { status: 400 },
  // Zulip answers unknown /api/v1 paths with 404; this server answers JSON there.
  UNKNOWN_ROUTE: { status: 404, wire: "BAD_REQUEST" },
  METHOD_NOT_ALLOWED: { status: 405, wire: null },
  BODY_TOO_LARGE: { status: 413, wire: "BAD_REQUEST" },
  MALFORMED_BODY: { status: 400, wire: "BAD_REQUEST" },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, wire: "BAD_REQUEST" },
};
