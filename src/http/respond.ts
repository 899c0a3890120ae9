/**
 * @module http/respond
 * Writing Zulip's envelopes. Every write is corked and skipped if the client aborted.
 */
import type { HttpResponse } from "uWebSockets.js";
import { EngineError, RateLimitError } from "../engine/index.js";
import { ERROR_MAP } from "./error-map.js";
import { HttpError } from "./errors.js";

const REASONS: Record<number, string> = {
  200: "OK", 304: "Not Modified", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
  410: "Gone", 413: "Payload Too Large", 415: "Unsupported Media Type", 429: "Too Many Requests", 500: "Internal Server Error",
};

export interface Reply {
  readonly status: number;
  readonly body: string | Buffer;
  readonly headers?: readonly (readonly [string, string])[];
  /** Default application/json (every API reply); /metrics sends Prometheus text. */
  readonly contentType?: string;
}

export function send(res: HttpResponse, aborted: () => boolean, reply: Reply, extraHeaders: readonly (readonly [string, string])[] = []): void {
  if (aborted()) return;
  res.cork(() => {
    res.writeStatus(`${reply.status} ${REASONS[reply.status] ?? ""}`);
    res.writeHeader("Content-Type", reply.contentType ?? "application/json");
    for (const [k, v] of reply.headers ?? []) res.writeHeader(k, v);
    for (const [k, v] of extraHeaders) res.writeHeader(k, v);
    res.end(reply.body);
  });
}

/** Pre-serialized JSON for one field of a success response (spliced, not re-encoded). */
export class RawJson {
  constructor(readonly parts: readonly Buffer[]) {}
}

export function success(data: Record<string, unknown>, ignored: readonly string[]): Reply {
  const body: Record<string, unknown> = { result: "success", msg: "" };
  const raw: [string, RawJson][] = [];
  for (const [k, v] of Object.entries(data)) {
    if (v instanceof RawJson) raw.push([k, v]);
    else body[k] = v;
  }
  if (ignored.length > 0) body["ignored_parameters_unsupported"] = ignored;
  const json = JSON.stringify(body);
  if (raw.length === 0) return { status: 200, body: json };
  const parts: Buffer[] = [Buffer.from(json.slice(0, -1))];
  for (const [k, v] of raw) parts.push(Buffer.from(`,${JSON.stringify(k)}:`), ...v.parts);
  parts.push(Buffer.from("}"));
  return { status: 200, body: Buffer.concat(parts) };
}

export function errorReply(status: number, msg: string, code: string | null, data: Record<string, unknown> = {}, headers: readonly (readonly [string, string])[] = []): Reply {
  const body: Record<string, unknown> = { result: "error", msg, ...(code === null ? {} : { code }), ...data };
  return { status, body: JSON.stringify(body), headers };
}

/** The one place engine errors become wire errors. */
export function engineErrorReply(error: EngineError): Reply {
  const { status, wire } = ERROR_MAP[error.code];
  if (status === 500) return errorReply(500, "Internal server error", null);
  const headers: (readonly [string, string])[] = [];
  if (status === 401) headers.push(["WWW-Authenticate", 'Basic realm="zulip"']);
  if (error instanceof RateLimitError) headers.push(["Retry-After", error.retryAfter.toFixed(3)]);
  if (error instanceof HttpError) headers.push(...error.headers);
  return errorReply(status, error.message, wire === undefined ? error.code : wire, { ...error.data }, headers);
}
