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

export interface Reply {
  readonly status: number;
  readonly body: string | Buffer | JsonParts;
  readonly headers?: readonly (readonly [string, string])[];
  /** Default application/json (every API reply); /metrics sends Prometheus text. */
  readonly contentType?: string;
  /** A byte range of a file to stream as the body (downloads); `body` is then ignored. */
  readonly file?: { readonly path: string; readonly start: number; readonly length: number };
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

/** Pre-serialized JSON for one field of a success response (spliced, not re-encoded). */
/**
 * A JSON body still in pieces (envelope plus cached message JSON). uWS copies a body
 * out during end(), so the pieces are joined into one buffer reused by every answer
 * just before it: a fresh Buffer.concat per answer cost ~3x the copy itself in
 * allocation and GC (100-message window, 55 KB: 26 us against 9 us).
 */
export class JsonParts {
  readonly byteLength: number;
  constructor(readonly parts: readonly Buffer[]) {
    let n = 0;
    for (const p of parts) n += p.length;
    this.byteLength = n;
  }

  /**
   * The whole body in the shared buffer: valid only until the next call, so it must be
   * handed at once to a writer that copies (uWS's end does). Bodies over the shared
   * buffer's ceiling get their own buffer.
   */
  joinedTransiently(): Buffer {
    if (this.byteLength > SHARED_BODY_MAX_BYTES) return this.joined();
    if (this.byteLength > sharedBody.length)
      sharedBody = Buffer.allocUnsafeSlow(Math.min(SHARED_BODY_MAX_BYTES, 2 ** Math.ceil(Math.log2(this.byteLength))));
    let offset = 0;
    for (const p of this.parts) {
      sharedBody.set(p, offset);
      offset += p.length;
    }
    return sharedBody.subarray(0, offset);
  }

  /** An owned copy, for writers that may keep the buffer after returning (Node's). */
  joined(): Buffer {
    return Buffer.concat(this.parts, this.byteLength);
  }
}

/** How many bytes a reply body is on the wire. */
export function bodyByteLength(body: Reply["body"]): number {
  return typeof body === "string" ? Buffer.byteLength(body) : body instanceof JsonParts ? body.byteLength : body.length;
}

/** The shared buffer's ceiling: larger bodies (a full register at 10,000 users) are rare. */
const SHARED_BODY_MAX_BYTES = 8 * 1024 * 1024;
let sharedBody = Buffer.allocUnsafeSlow(256 * 1024);

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
