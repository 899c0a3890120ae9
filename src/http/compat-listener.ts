/**
 * @module http/compat-listener
 * An optional second listener, on Node's own HTTP parser, that feeds the same
 * request pipeline as the uWebSockets.js listener. It exists for the clients that
 * the uWS build cannot answer (see below) and costs the main listener nothing: it
 * is a separate port, not a proxy in front of uWS.
 *
 * What the uWS build (@trufflesuite/uws-js-unofficial 20.30.0, the only one whose
 * binary loads on Node 20 with this glibc) does with such requests, measured and
 * read from its disassembly: the request-line parser accepts exactly
 * " HTTP/1.1\r\n" after the target and otherwise reports "head incomplete", so
 * an HTTP/1.0 request (or any other version, or garbage) is buffered and never
 * reaches a handler; the same silence follows an HTTP/1.1 head without Host or
 * with more than 48 header fields. The client gets no byte until uWS's idle timeout
 * closes the connection (FIN after about 10 s). A head that arrives in one read is
 * accepted whatever its size; one that spans reads and passes 4 KiB is closed at
 * once, without a response. No hook runs before that parser, so none of this can
 * be turned into a 400/431/505 on the uWS port.
 *
 * Here Node answers HTTP/1.0 with 1.0 semantics (closes after the response unless
 * the client asked for keep-alive), and malformed or oversized heads and HTTP/1.1
 * without Host get a JSON error instead of silence.
 */
import { createReadStream } from "node:fs";
import { createServer as createHttpServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { EngineError } from "../engine/index.js";
import { linger, sheds, type Admission, type Pipeline } from "./admission.js";
import { NodeBodySource, tooLarge, type BodySource } from "./body-source.js";
import type { BodyBudget } from "./load-limits.js";
import { extraHeaders, type RequestHead } from "./request.js";
import { engineErrorReply, errorReply, FILE_TYPE, JsonParts, JSON_TYPE, type Reply } from "./respond.js";
import { responseHead, type HeaderList } from "./response-head.js";

export interface CompatListener {
  readonly port: number;
  close(): void;
}

/** Node's default limit on the whole request head, made explicit since 431 is promised. */
const MAX_HEAD_BYTES = 16 * 1024;
export function listenCompat(pipeline: Pipeline, port: number, host: string): Promise<CompatListener> {
  return listenNode(pipeline, { port, host, exclusive: true });
}

function listenNode(
  pipeline: Pipeline,
  target: { port: number; host: string; exclusive: true },
): Promise<CompatListener> {
  // requireHostHeader is off so that the 400 for HTTP/1.1 without Host carries a
  // Zulip error body like every other rejection (Node's own 400 is empty).
  const server = createHttpServer({ requireHostHeader: false, maxHeaderSize: MAX_HEAD_BYTES }, (req, res) => {
    serve(pipeline, req, res);
  });
  // Node refuses connections past this at accept time (the uWS listener cannot: see http/load-limits).
  if (pipeline.maxConnections > 0) server.maxConnections = pipeline.maxConnections;
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => rejectHead(error, socket));
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(target, () => {
      server.off("error", reject);
      const address = server.address();
      resolve({
        port: typeof address === "object" && address !== null ? address.port : 0,
        close() {
          server.close();
          server.closeAllConnections();
        },
      });
    });
  });
}

function serve(pipeline: Pipeline, req: IncomingMessage, res: ServerResponse): void {
  const head = headOf(req);
  if (req.httpVersion === "1.1" && req.headers.host === undefined) {
    // RFC 9112 3.2: an HTTP/1.1 request without Host MUST get a 400.
    write(req, res, errorReply(400, "Missing Host header", "BAD_REQUEST"));
    return;
  }
  let admission: Admission;
  try {
    admission = pipeline.admit(head);
  } catch (error) {
    pipeline.logError(`${head.method} ${head.url}: unexpected error`, error);
    write(req, res, errorReply(500, "Internal server error", null));
    return;
  }
  // A client that goes away ends its long poll. Not once answered: an abort builds a DOMException with its stack
  // (3% of the writer worker's CPU when every forwarded request's close aborted). Made on first use, as on the
  // uWS listener: most endpoints never look (an AbortSignal each was 0.6% of the writer's CPU).
  let left = false;
  let gone: AbortController | null = null;
  const signal = (): AbortSignal => {
    if (gone === null) {
      gone = new AbortController();
      if (left) gone.abort();
    }
    return gone.signal;
  };
  res.on("close", () => {
    if (res.writableFinished) return;
    left = true;
    gone?.abort();
  });
  let buffered: BufferedBody | null = null;
  let streamed: NodeBodySource | null = null;
  const answer = (reply: Reply, headers: HeaderList = []): void => {
    buffered?.release();
    streamed?.discard();
    const out = pipeline.finish(admission, reply, headers, !left);
    write(req, res, out.reply, out.headers);
  };
  if (admission.refusal) {
    answer(admission.refusal);
    return;
  }
  let body: Promise<Buffer | BodySource>;
  if (admission.mode === "stream") body = Promise.resolve((streamed = new NodeBodySource(req)));
  else {
    buffered = new BufferedBody(req, admission.maxBodyBytes, pipeline.budget, head.contentLength);
    body = buffered.whole;
  }
  body
    .then((b) => pipeline.handle(admission, b, signal))
    .then(({ reply, headers }) => answer(reply, headers))
    .catch((error: unknown) => {
      if (error instanceof EngineError) answer(engineErrorReply(error));
      else {
        pipeline.logError(`${head.method} ${head.url}: unexpected error`, error);
        answer(errorReply(500, "Internal server error", null));
      }
    });
}

/**
 * A body read whole, under the endpoint's limit and the server's budget; past either
 * it is read on and dropped (so the client can read the refusal), not buffered.
 */
class BufferedBody {
  readonly whole: Promise<Buffer>;
  readonly #budget: BodyBudget;
  #held = 0;
  #dropping = false;

  constructor(req: IncomingMessage, maxBytes: number, budget: BodyBudget, declared: number | null) {
    this.#budget = budget;
    this.whole = new Promise((resolve, reject) => {
      if (declared !== null && declared > maxBytes) {
        this.#dropping = true;
        reject(tooLarge());
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      req.on("data", (chunk: Buffer) => {
        if (this.#dropping) return;
        size += chunk.length;
        try {
          if (size > maxBytes) throw tooLarge();
          budget.take(chunk.length);
          this.#held += chunk.length;
          chunks.push(chunk);
        } catch (error) {
          this.#dropping = true;
          chunks.length = 0;
          this.release();
          reject(error);
        }
      });
      req.on("end", () => resolve(Buffer.concat(chunks, size)));
      req.on("error", reject);
    });
  }

  /** Gives the budget back; what arrives from now on is dropped. */
  release(): void {
    this.#dropping = true;
    this.#budget.give(this.#held);
    this.#held = 0;
  }
}

function headOf(req: IncomingMessage): RequestHead {
  const target = req.url ?? "/";
  const q = target.indexOf("?");
  const length = req.headers["content-length"];
  const one = (value: string | string[] | undefined): string =>
    Array.isArray(value) ? (value[0] ?? "") : (value ?? "");
  return {
    method: (req.method ?? "GET").toUpperCase(),
    url: q < 0 ? target : target.slice(0, q),
    query: q < 0 ? "" : target.slice(q + 1),
    host: one(req.headers.host),
    authorization: one(req.headers.authorization),
    contentType: one(req.headers["content-type"]),
    contentLength: length === undefined ? null : Number(length),
    userAgent: one(req.headers["user-agent"]),
    ifNoneMatch: one(req.headers["if-none-match"]),
    remoteAddress: req.socket.remoteAddress ?? "",
    extra: extraHeaders((name) => one(req.headers[name])),
  };
}

/**
 * Writes a reply whose head http/response-head checked. When the request's body has
 * not been read whole (a refusal), the reply goes out at once, complete with its
 * length, but the response is ended (and the connection closed, since the rest of
 * the body cannot be parsed as a next request) only once the client has sent the
 * rest, or after LINGER_MS: a close while it still sends would reset the connection.
 * Refusals that shed load close at once (http/admission's sheds()).
 */
function write(req: IncomingMessage, res: ServerResponse, reply: Reply, extraHeaders: HeaderList = []): void {
  if (res.destroyed || res.headersSent) return;
  const file = reply.file;
  const head = responseHead(reply, extraHeaders, file ? FILE_TYPE : JSON_TYPE);
  const fields: string[] = [];
  for (const [k, v] of head.fields) fields.push(k, v);
  // Node may keep a written buffer until it is flushed: JSON pieces get their own copy.
  const body = reply.body instanceof JsonParts ? reply.body.joined() : reply.body;
  fields.push("Content-Length", String(file ? file.length : Buffer.byteLength(body)));
  const unread = !req.complete;
  if (unread) res.shouldKeepAlive = false;
  res.writeHead(head.status, fields);
  if (!file) {
    if (!unread || sheds(head.status)) {
      res.end(body);
      return;
    }
    res.write(body);
    req.resume();
    void linger(
      new Promise<void>((resolve) => {
        req.once("end", resolve);
        req.once("close", resolve);
      }),
    ).then(() => res.end());
    return;
  }
  if (file.length === 0) {
    res.end();
    return;
  }
  const stream = createReadStream(file.path, { start: file.start, end: file.start + file.length - 1 });
  stream.on("error", () => res.destroy());
  stream.pipe(res);
}

/** A head Node's parser refused: answer in JSON and close, as the connection is unusable. */
function rejectHead(error: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable || error.code === "ECONNRESET") {
    socket.destroy();
    return;
  }
  const [status, msg] =
    error.code === "HPE_HEADER_OVERFLOW"
      ? [431, "Request header fields too large"]
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [408, "Request timeout"]
        : [400, "Malformed request"];
  const body = errorReply(status, msg, "BAD_REQUEST").body;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
