/**
 * @module http/error-map
 * Engine error codes -> HTTP statuses, once. Record<ErrorCode, number> is exhaustive:
 * a new code that is not mapped does not compile.
 */
import type { ErrorCode } from "../engine/index.js";

export const HTTP_STATUS: Readonly<Record<ErrorCode, number>> = {
  BAD_REQUEST: 400,
  REQUEST_VARIABLE_MISSING: 400,
  REQUEST_CONFUSING_VAR: 400,
  INVALID_JSON: 400,
  BAD_NARROW: 400,
  STREAM_DOES_NOT_EXIST: 400,
  UNAUTHORIZED_PRINCIPAL: 400,
  UNAUTHORIZED: 401,
  USER_DEACTIVATED: 401,
  REALM_DEACTIVATED: 401,
  NONEXISTENT_SUBDOMAIN: 404,
  RATE_LIMIT_HIT: 429,
  BAD_EVENT_QUEUE_ID: 400,
  TOPIC_WILDCARD_MENTION_NOT_ALLOWED: 400,
  STREAM_WILDCARD_MENTION_NOT_ALLOWED: 400,
  REACTION_ALREADY_EXISTS: 400,
  REACTION_DOES_NOT_EXIST: 400,
  NOT_FOUND: 404,
  ACCESS_DENIED: 403,
  INTERNAL_SERVER_ERROR: 500,
  // Only openStore raises it, before any server exists; mapped for exhaustiveness.
  DATA_DIRECTORY_LOCKED: 500,
};

/** Codes that Zulip reports under BAD_REQUEST on the wire although the engine is more specific. */
export const WIRE_CODE: Partial<Record<ErrorCode, string>> = {
  NOT_FOUND: "BAD_REQUEST",
  ACCESS_DENIED: "BAD_REQUEST",
};
