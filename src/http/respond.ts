/**
 * @module http/respond
 * Writing Zulip's envelopes. Every write is corked and skipped if the client aborted.
 */
import { open, type FileHandle } from "node:fs/promises";
import type { HttpResponse } from "uWebSockets.js";
import { EngineError, RateLimitError } from "../engine/index.js";
import { ERROR_MAP } from "./error-map.js";
import { HttpError } from "./errors.js";
import { RawJson } from "../wire/raw-json.js";
import { responseHead, type HeaderList, type ResponseHead } from "./response-head.js";
import { bodyByteLength, JsonParts, type Reply } from "./reply.js";

export { bodyByteLength, JsonParts, type Reply };

export { RawJson };

const REASONS: Record<number, string> = {
  200: "OK",
  201: "Created",
  204: "No Content",
  206: "Partial Content",
  304: "Not Modified",
  409: "Conflict",
  410: "Gone",
  412: "Precondition Failed",
  416: "Range Not Satisfiable",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/** The default Content-Type of a reply that names none: API replies are JSON, files are bytes. */
export const JSON_TYPE = "application/json";
export const FILE_TYPE = "application/octet-stream";

/** Writes a checked head (http/response-head) through uWS; must run corked. */
function writeHead(res: HttpResponse, head: ResponseHead): void {
  res.writeStatus(`${head.status} ${REASONS[head.status] ?? ""}`);
  for (const [k, v] of head.fields) res.writeHeader(k, v);
}

/**
 * `headOnly`: the answer to a HEAD request, whose body must not be sent (its length is).
 * `closeConnection`: close once it is out (a refusal that sheds load, http/admission).
 * The head is built by responseHead(), which throws rather than write an unsafe field
 * (callers pass replies through guardReply() first, so that is a bug caught twice).
 */
export function send(
  res: HttpResponse,
  aborted: () => boolean,
  reply: Reply,
  extraHeaders: HeaderList = [],
  headOnly = false,
  closeConnection = false,
): void {
  if (aborted()) return;
  if (reply.file && !headOnly) {
    void sendFile(res, aborted, responseHead(reply, extraHeaders, FILE_TYPE), reply.file, extraHeaders);
    return;
  }
  const head = responseHead(reply, extraHeaders, JSON_TYPE);
  res.cork(() => {
    writeHead(res, head);
    // Without a reported length: uWS 20.30 closes the next request on a keep-alive
    // connection after endWithoutBody(length), and any argument (even undefined) is one.
    if (headOnly) res.endWithoutBody();
    else res.end(reply.body instanceof JsonParts ? reply.body.joinedTransiently() : reply.body, closeConnection);
  });
}

/** Read size for streamed files: large enough for few system calls, small enough to keep memory flat. */
const FILE_CHUNK = 512 * 1024;

/**
 * Streams a byte range of a file with uWS backpressure (tryEnd + onWritable): at most
 * one chunk is in memory per download, however large the file.
 */
async function sendFile(
  res: HttpResponse,
  aborted: () => boolean,
  head: ResponseHead,
  file: NonNullable<Reply["file"]>,
  extraHeaders: HeaderList,
): Promise<void> {
  let handle: FileHandle | null = null;
  try {
    handle = await open(file.path, "r");
  } catch {
    handle = null;
  }
  if (aborted()) {
    await handle?.close();
    return;
  }
  if (!handle) {
    // Deleted between the access check and now: as if it never existed.
    send(res, aborted, errorReply(404, "This file does not exist or has been deleted.", "BAD_REQUEST"), extraHeaders);
    return;
  }
  const total = file.length;
  try {
    if (total === 0) {
      res.cork(() => {
        writeHead(res, head);
        res.end();
      });
      return;
    }
    const buffer = Buffer.allocUnsafe(Math.min(FILE_CHUNK, total));
    let sent = 0;
    let first = true;
    while (sent < total && !aborted()) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, total - sent), file.start + sent);
      if (bytesRead === 0 || aborted()) break;
      const chunk = buffer.subarray(0, bytesRead);
      const startOffset = res.getWriteOffset();
      let ok = false;
      let done = false;
      res.cork(() => {
        if (first) writeHead(res, head);
        first = false;
        [ok, done] = res.tryEnd(chunk, total);
      });
      sent += bytesRead;
      if (done) break;
      if (!ok) {
        // Wait until uWS has room, then hand it the rest of this chunk (it keeps no copy).
        await new Promise<void>((resolve) => {
          res.onWritable((offset) => {
            if (aborted()) {
              resolve();
              return true;
            }
            const [retryOk, retryDone] = res.tryEnd(chunk.subarray(offset - startOffset), total);
            if (retryOk || retryDone) resolve();
            return retryOk;
          });
        });
      }
    }
  } finally {
    await handle.close();
  }
}

/**
 * A success answer already in bytes (a kept window). `headLength`: the bytes before
 * its raw fields, where success() puts ignored_parameters_unsupported, so an answer
 * to a request with ignored parameters is the same bytes success() would build. The
 * body is never mutated: writers may keep it.
 */
export class ReadyReply {
  constructor(
    readonly body: Buffer,
    readonly headLength: number,
  ) {}

  /** As success() answers, with the request's ignored parameters. */
  reply(ignored: readonly string[]): Reply {
    if (ignored.length === 0) return { status: 200, body: this.body };
    const named = Buffer.from(`,"ignored_parameters_unsupported":${JSON.stringify(ignored)}`);
    return {
      status: 200,
      body: new JsonParts([this.body.subarray(0, this.headLength), named, this.body.subarray(this.headLength)]),
    };
  }

  /** The bytes success() answers `data` with (no ignored parameters), ready to keep. */
  static of(data: Record<string, unknown>): ReadyReply {
    const { body } = success(data, []);
    if (body instanceof JsonParts) return new ReadyReply(body.joined(), body.parts[0]!.length);
    const bytes = Buffer.from(body as string);
    return new ReadyReply(bytes, bytes.length - 1);
  }
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
  return { status: 200, body: new JsonParts(parts) };
}

export function errorReply(
  status: number,
  msg: string,
  code: string | null,
  data: Record<string, unknown> = {},
  headers: readonly (readonly [string, string])[] = [],
): Reply & { readonly body: string } {
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
