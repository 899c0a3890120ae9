/**
 * @module http/frame-forward
 * How a worker of `parley serve --workers` hands a request to another (a reader to the
 * writer: writes, uploads, presence...; any worker to a queue's owner: http/queue-routing):
 * in frames (http/frames) on a few persistent connections to the other worker's internal
 * listener (http/frame-listener), requests multiplexed on them by ID. The head goes as
 * this worker parsed it, the client's address in it (the other side's per-address limits
 * and request log); a body is streamed as it arrives, with backpressure from the socket
 * and from the other side's consumption (FRAME_WINDOW per request, so one slow upload
 * holds up no other request); the answer comes back whole and is passed on unchanged but
 * for X-Parley-Worker, which names both workers. A client that leaves sends a CANCEL, so
 * a long-poll it left ends on the other side.
 *
 * A connection that drops (the other worker was replaced, or stopped) fails only the
 * requests in flight on it: a body-less GET or HEAD not yet answered is sent again once
 * (on a new connection), anything else is answered 502 with Retry-After, as clients
 * retry behind nginx.
 */
import { STATUS_CODES } from "node:http";
import { connect, type Socket } from "node:net";
import type { HttpRequest, HttpResponse } from "uWebSockets.js";
import {
  ANSWER_COMPLETE,
  decodeStrings,
  encodeHead,
  FRAME,
  FrameDecoder,
  FrameError,
  FRAME_WINDOW,
  MAX_DATA_BYTES,
  readCredit,
  TurnBatchedSink,
  writeFrame,
  type FrameType,
} from "./frames.js";
import type { RequestHead } from "./request.js";
import { errorReply, send } from "./respond.js";
import { WORKER_HEADER } from "./worker-headers.js";

/** Hop-by-hop headers, and those the uWS answer sets itself. */
const ANSWER_DROPPED = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "date"]);
const WORKER_HEADER_LOWER = WORKER_HEADER.toLowerCase();

/** Connections kept to the other worker: requests are spread over them (a large body's frames hold up only its own). */
const DEFAULT_CONNECTIONS = 2;

export interface FrameForwarderOptions {
  /** Named in X-Parley-Worker after ">" (default "writer"). */
  readonly upstream?: string;
  /** How many connections to keep (default 2). */
  readonly connections?: number;
  /** Where a malformed frame from the other side is reported (default console.error). */
  readonly log?: (line: string) => void;
}

export class FrameForwarder {
  readonly #socketPath: string;
  readonly #worker: string;
  readonly #upstream: string;
  readonly #log: (line: string) => void;
  readonly #slots: (FrameConnection | null)[];
  #next = 0;
  #inFlight = 0;
  #idle: (() => void)[] = [];
  #closed = false;

  /** `socketPath`: the other worker's internal listener; `worker`: this worker's name. */
  constructor(socketPath: string, worker: string, options: FrameForwarderOptions = {}) {
    this.#socketPath = socketPath;
    this.#worker = worker;
    this.#upstream = options.upstream ?? "writer";
    this.#log = options.log ?? ((line) => console.error(line));
    this.#slots = Array.from({ length: Math.max(1, options.connections ?? DEFAULT_CONNECTIONS) }, () => null);
  }

  /** Requests forwarded and not yet answered. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Resolves once every forwarded request has been answered (or its client left). */
  drained(): Promise<void> {
    return this.#inFlight === 0 ? Promise.resolve() : new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Closes the connections: what is still in flight is answered 502. */
  close(): void {
    this.#closed = true;
    for (const connection of this.#slots) connection?.destroy();
  }

  /** Takes the request: call synchronously from the uWS handler (its body is read from now on). */
  forward(res: HttpResponse, req: HttpRequest, head: RequestHead): void {
    const hasBody =
      (head.contentLength !== null && head.contentLength > 0) || req.getHeader("transfer-encoding") !== "";
    new Exchange(this, res, head, closeAsked(req), hasBody ? "stream" : null).start();
  }

  /** Passes on a request whose body was read whole since its handler ran (http/queue-routing). */
  forwardRead(res: HttpResponse, head: RequestHead, closeAsked: boolean, body: Buffer): void {
    new Exchange(this, res, head, closeAsked, body).start();
  }

  get worker(): string {
    return this.#worker;
  }

  get upstream(): string {
    return this.#upstream;
  }

  /** A connection for the next request (round robin), opened if its slot is empty. */
  connection(): FrameConnection {
    const slot = this.#next;
    this.#next = (slot + 1) % this.#slots.length;
    const open = this.#slots[slot];
    if (open != null && !open.lost) return open;
    const made = new FrameConnection(this.#socketPath, this.#log, () => {
      if (this.#slots[slot] === made) this.#slots[slot] = null;
    });
    if (this.#closed) made.destroy();
    else this.#slots[slot] = made;
    return made;
  }

  began(): void {
    this.#inFlight++;
  }

  settled(): void {
    if (--this.#inFlight === 0) for (const resolve of this.#idle.splice(0)) resolve();
  }
}

function closeAsked(req: HttpRequest): boolean {
  return /(^|,)\s*close\s*(,|$)/i.test(req.getHeader("connection"));
}

/** What the other side answered. */
interface Answer {
  readonly status: number;
  /** Name, value, name, value... */
  readonly headers: readonly string[];
  readonly chunks: Buffer[];
}

/** One forwarded request, from its head to the answer passed on (or its client gone). */
class Exchange {
  readonly #forwarder: FrameForwarder;
  readonly #res: HttpResponse;
  readonly #head: RequestHead;
  readonly #closeAsked: boolean;
  /** "stream": read from the client as it arrives; a Buffer: read whole already; null: none. */
  readonly #body: "stream" | Buffer | null;
  #connection: FrameConnection | null = null;
  #id = 0;
  #retried = false;
  #aborted = false;
  #done = false;
  /** Counted out of the forwarder's requests in flight (once). */
  #settled = false;
  #answer: Answer | null = null;
  /** Body bytes sent and not yet credited by the other side. */
  #unacked = 0;
  #paused = false;

  constructor(
    forwarder: FrameForwarder,
    res: HttpResponse,
    head: RequestHead,
    closeAsked: boolean,
    body: "stream" | Buffer | null,
  ) {
    this.#forwarder = forwarder;
    this.#res = res;
    this.#head = head;
    this.#closeAsked = closeAsked;
    this.#body = body;
  }

  start(): void {
    this.#forwarder.began();
    this.#res.onAborted(() => {
      this.#aborted = true;
      // The other side ends the request (a long-poll is dropped from its queue's wait).
      this.#connection?.cancel(this.#id);
      this.#settle();
    });
    this.#send();
    if (this.#body !== "stream") return;
    this.#res.onData((chunk, isLast) => {
      if (this.#done || this.#connection === null) return;
      // uWS reuses the chunk's memory after this callback: copy.
      const bytes = Buffer.from(new Uint8Array(chunk));
      this.#unacked += bytes.length;
      const flowing = this.#connection.data(this.#id, bytes);
      if (isLast) this.#connection.end(this.#id);
      else if (!flowing || this.#unacked > FRAME_WINDOW) this.#pause();
    });
  }

  /** The head (and a body read whole) on a connection. */
  #send(): void {
    const connection = this.#forwarder.connection();
    this.#connection = connection;
    this.#id = connection.open(this);
    const body = this.#body;
    connection.head(this.#id, encodeHead(this.#head, body !== null));
    if (Buffer.isBuffer(body)) {
      connection.data(this.#id, body);
      connection.end(this.#id);
    }
  }

  #pause(): void {
    if (this.#paused) return;
    this.#paused = true;
    this.#res.pause();
    this.#connection?.waitDrain(this);
  }

  /** The socket drained, or credit came: the client's body flows again when both allow. */
  mayResume(): void {
    if (!this.#paused || this.#done || this.#aborted) return;
    if (this.#unacked > FRAME_WINDOW || this.#connection?.congested === true) return;
    this.#paused = false;
    this.#res.resume();
  }

  credit(bytes: number): void {
    this.#unacked = Math.max(0, this.#unacked - bytes);
    this.mayResume();
  }

  answered(status: number, headers: string[], body: Buffer | null): void {
    this.#answer = { status, headers, chunks: body === null ? [] : [body] };
    if (body !== null) this.#pass();
  }

  answerData(chunk: Buffer): void {
    this.#answer?.chunks.push(chunk);
  }

  answerEnd(): void {
    if (this.#answer !== null) this.#pass();
  }

  /** The connection dropped before the answer was complete. */
  lost(): void {
    if (this.#done || this.#aborted) return;
    // Sent again only what cannot have changed anything: a body may already have been acted on.
    const idempotent = this.#head.method === "GET" || this.#head.method === "HEAD";
    if (!this.#retried && this.#answer === null && this.#body === null && idempotent) {
      this.#retried = true;
      this.#send();
      return;
    }
    this.#done = true;
    // The other worker is restarting (or gone): clients retry a 502, as they do behind nginx.
    send(this.#res, () => this.#aborted, errorReply(502, "The server is restarting; try again in a moment", null), [
      [WORKER_HEADER, this.#forwarder.worker],
      ["Retry-After", "1"],
    ]);
    this.#settle();
  }

  #pass(): void {
    const answer = this.#answer!;
    this.#done = true;
    this.#connection?.forget(this.#id);
    if (this.#aborted) return;
    const res = this.#res;
    // A body the answer came before (a refusal) is read on and dropped by uWS: not while paused.
    if (this.#paused) res.resume();
    res.cork(() => {
      res.writeStatus(`${answer.status} ${STATUS_CODES[answer.status] ?? ""}`);
      const headers = answer.headers;
      for (let i = 0; i + 1 < headers.length; i += 2) {
        const name = headers[i]!;
        const lower = name.toLowerCase();
        if (!ANSWER_DROPPED.has(lower) && lower !== WORKER_HEADER_LOWER) res.writeHeader(name, headers[i + 1]!);
      }
      res.writeHeader(WORKER_HEADER, `${this.#forwarder.worker}>${this.#forwarder.upstream}`);
      // See http/respond's send: uWS 20.30 mishandles a reported length here.
      if (this.#head.method === "HEAD") res.endWithoutBody();
      else {
        const chunks = answer.chunks;
        res.end(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), this.#closeAsked);
      }
    });
    this.#settle();
  }

  #settle(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#done = true;
    this.#connection?.forget(this.#id);
    this.#forwarder.settled();
  }
}

const FRAME_NAMES: Partial<Record<FrameType, string>> = { [FRAME.head]: "HEAD", [FRAME.cancel]: "CANCEL" };

/** One connection to the other worker's internal listener, and the requests in flight on it. */
class FrameConnection {
  readonly #socket: Socket;
  readonly #out: TurnBatchedSink;
  readonly #exchanges = new Map<number, Exchange>();
  readonly #drainWaiters = new Set<Exchange>();
  #nextId = 1;
  #lost = false;

  constructor(socketPath: string, log: (line: string) => void, onLost: () => void) {
    const socket = connect(socketPath);
    this.#socket = socket;
    this.#out = new TurnBatchedSink(socket);
    const decoder = new FrameDecoder((type, id, payload) => this.#onFrame(type, id, payload));
    socket.on("data", (chunk: Buffer) => {
      try {
        decoder.push(chunk);
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        log(`forward to ${socketPath}: malformed frame (${why}); connection closed, its requests fail`);
        socket.destroy();
      }
    });
    socket.on("drain", () => {
      for (const exchange of this.#drainWaiters) exchange.mayResume();
      this.#drainWaiters.clear();
    });
    socket.on("error", () => undefined);
    socket.on("close", () => {
      this.#lost = true;
      onLost();
      const failed = [...this.#exchanges.values()];
      this.#exchanges.clear();
      this.#drainWaiters.clear();
      for (const exchange of failed) exchange.lost();
    });
  }

  get lost(): boolean {
    return this.#lost;
  }

  /** The socket holds more than it should: bodies wait for its drain. */
  get congested(): boolean {
    return this.#socket.writableNeedDrain;
  }

  destroy(): void {
    this.#socket.destroy();
  }

  /** A new request's ID on this connection. */
  open(exchange: Exchange): number {
    const id = this.#nextId;
    // IDs are never reused on a connection; one that sent 4 billion requests is replaced.
    this.#nextId = id === 0xffffffff ? 1 : id + 1;
    this.#exchanges.set(id, exchange);
    return id;
  }

  /** The request is answered or left: frames the other side still sends for it are dropped. */
  forget(id: number): void {
    const exchange = this.#exchanges.get(id);
    if (exchange === undefined) return;
    this.#exchanges.delete(id);
    this.#drainWaiters.delete(exchange);
  }

  waitDrain(exchange: Exchange): void {
    this.#drainWaiters.add(exchange);
  }

  head(id: number, payload: Buffer): void {
    writeFrame(this.#out, FRAME.head, id, payload);
  }

  /** Sends a body chunk (cut to MAX_DATA_BYTES frames); false when the socket asks to wait for its drain. */
  data(id: number, bytes: Buffer): boolean {
    let flowing = true;
    for (let at = 0; at < bytes.length; at += MAX_DATA_BYTES)
      flowing = writeFrame(this.#out, FRAME.data, id, bytes.subarray(at, at + MAX_DATA_BYTES));
    return flowing;
  }

  end(id: number): void {
    writeFrame(this.#out, FRAME.end, id);
  }

  cancel(id: number): void {
    if (!this.#exchanges.has(id) || this.#lost) return;
    this.forget(id);
    writeFrame(this.#out, FRAME.cancel, id);
  }

  #onFrame(type: FrameType, id: number, payload: Buffer): void {
    if (type === FRAME.head || type === FRAME.cancel)
      throw new FrameError(`a ${FRAME_NAMES[type]} frame from a listener`);
    const exchange = this.#exchanges.get(id);
    // Validated even for a request gone meanwhile: a malformed frame is the other side's bug either way.
    switch (type) {
      case FRAME.credit:
        return exchange?.credit(readCredit(payload));
      case FRAME.answer: {
        if (payload.length < 3) throw new FrameError("an ANSWER frame too short for its status");
        const status = payload.readUInt16BE(0);
        if (status < 100 || status > 599) throw new FrameError(`an ANSWER frame with status ${status}`);
        const { strings, end } = decodeStrings(payload, 3);
        const complete = (payload[2]! & ANSWER_COMPLETE) !== 0;
        return exchange?.answered(status, strings, complete ? payload.subarray(end) : null);
      }
      case FRAME.data:
        return exchange?.answerData(payload);
      case FRAME.end:
        return exchange?.answerEnd();
    }
  }
}
