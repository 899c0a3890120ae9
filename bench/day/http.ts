/**
 * @module bench/day/http
 * bench:day's HTTP client: a pool of kept-alive HTTP/1.1 connections to `parley serve`
 * shared by every simulated client, one request at a time on each (no pipelining, as a
 * browser's connection), written for what this generator needs and nothing more: a
 * request is one string written to the socket, an answer's head is split once and its
 * body framed by Content-Length (or chunks). The generator's own CPU is part of what it
 * measures against: through node:http (an Agent) it spent about 1.6 ms per answered
 * request at 1,000 clients, most of it HTTP machinery for the 10-17 long-poll answers that
 * come with each request (ClientRequest and IncomingMessage streams, listeners, the
 * agent's socket lists). On a bare uWS server answering a poll-sized JSON answer, a
 * request costs about 17 µs of client CPU here against 62 µs with node:http and 41 µs
 * with undici's Pool (dispatch API), 200 in flight and 1,000 connections parked.
 *
 * Which connection a request takes is the pool's choice (the most recently freed idle
 * one, else a new one, as the Agent did), not the simulated client's: a long-poll's
 * connection is unrelated to the one its queue was registered on, so with N workers
 * about (N-1)/N of the polls reach a worker other than their queue's owner (README
 * "Workers"; the phase line counts them).
 */
import net from "node:net";

export interface DayAnswer {
  readonly status: number;
  readonly body: string;
  /** X-Parley-Worker: the worker that answered ("a>b" when a forwarded it to b); "" when absent. */
  readonly worker: string;
}

/** An idle connection is closed after this long, before uWS closes it at 10 s (reusing one it is closing fails). */
const IDLE_MS = 5000;
const HEAD_END = Buffer.from("\r\n\r\n");
/**
 * Every connection reads into this one buffer (net's `onread`: no stream, no Buffer per read). A read is
 * handled before the next one lands, so what an answer keeps past its read is copied out of it.
 */
const READ_BUFFER = Buffer.allocUnsafe(256 * 1024);

interface Pending {
  readonly resolve: (answer: DayAnswer) => void;
  readonly reject: (error: Error) => void;
}

/** The head of an answer, as far as this client reads it. */
interface Head {
  readonly status: number;
  /** null: chunked. */
  readonly length: number | null;
  readonly close: boolean;
  readonly worker: string;
}

export function parseHead(text: string): Head {
  const lines = text.split("\r\n");
  const statusLine = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? "");
  if (!statusLine) throw new Error(`not an HTTP/1.1 answer: ${JSON.stringify(text.slice(0, 80))}`);
  let length: number | null = null;
  let chunked = false;
  let close = false;
  let worker = "";
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === "content-length") length = Number(value);
    else if (name === "transfer-encoding") chunked = value.toLowerCase().includes("chunked");
    else if (name === "connection") close = value.toLowerCase() === "close";
    else if (name === "x-parley-worker") worker = value;
  }
  const status = Number(statusLine[1]);
  // Answers without a body by definition; any other answer must say how long its body is.
  if (status === 204 || status === 304) length = 0;
  else if (chunked) length = null;
  else if (length === null || !Number.isSafeInteger(length) || length < 0)
    throw new Error(`answer ${status} without a usable Content-Length or chunked encoding`);
  return { status, length, close, worker };
}

/** A chunked body complete in `data` from `from`: its bytes and where it ends; null while incomplete. */
export function dechunk(data: Buffer, from: number): { body: Buffer; end: number } | null {
  const parts: Buffer[] = [];
  let at = from;
  for (;;) {
    const lineEnd = data.indexOf("\r\n", at, "latin1");
    if (lineEnd < 0) return null;
    const size = parseInt(data.toString("latin1", at, lineEnd), 16);
    if (!Number.isSafeInteger(size) || size < 0) throw new Error("malformed chunk size in a chunked answer");
    if (size === 0) {
      // No trailers are sent by parley: the last chunk is followed by an empty line.
      if (data.length < lineEnd + 4) return null;
      return { body: Buffer.concat(parts), end: lineEnd + 4 };
    }
    if (data.length < lineEnd + 2 + size + 2) return null;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

class Connection {
  readonly socket: net.Socket;
  pending: Pending | null = null;
  idleSince = 0;
  #data: Buffer | null = null;
  #head: Head | null = null;
  #bodyAt = 0;
  /** Body chunks of a Content-Length answer, gathered without copying until the last one. */
  #parts: Buffer[] = [];
  #got = 0;

  constructor(
    port: number,
    private readonly pool: DayHttp,
  ) {
    this.socket = net.connect({
      host: "127.0.0.1",
      port,
      noDelay: true,
      onread: { buffer: READ_BUFFER, callback: (length: number, buffer: Uint8Array) => this.#onRead(length, buffer) },
    });
    this.socket.on("error", (error: Error) => this.#fail(error));
    this.socket.on("close", () => this.#fail(new Error("connection closed before the answer (socket hang up)")));
  }

  send(request: string, pending: Pending): void {
    this.pending = pending;
    this.socket.write(request);
  }

  #fail(error: Error): void {
    const pending = this.pending;
    this.pending = null;
    this.socket.destroy();
    this.pool.dropped(this);
    pending?.reject(error);
  }

  #onRead(length: number, buffer: Uint8Array): boolean {
    try {
      this.#take(Buffer.from(buffer.buffer, buffer.byteOffset, length));
    } catch (error) {
      this.#fail(error instanceof Error ? error : new Error(String(error)));
    }
    return true;
  }

  /** `chunk` lies in READ_BUFFER: whatever outlives this call is copied. */
  #take(chunk: Buffer): void {
    if (!this.pending) throw new Error("the server sent bytes no request asked for");
    if (this.#head && this.#head.length !== null) {
      this.#got += chunk.length;
      if (this.#parts.length === 0 && this.#got === this.#head.length) return this.#finish(chunk.toString("utf8"));
      this.#parts.push(Buffer.from(chunk));
      return this.#lengthBodyDone();
    }
    this.#data = this.#data ? Buffer.concat([this.#data, chunk]) : chunk;
    if (!this.#head) {
      const end = this.#data.indexOf(HEAD_END);
      if (end < 0) return this.#keepData();
      this.#head = parseHead(this.#data.toString("latin1", 0, end));
      this.#bodyAt = end + 4;
      if (this.#head.length !== null) {
        const data = this.#data;
        this.#data = null;
        this.#got = data.length - this.#bodyAt;
        // The usual answer: head and whole body in one read, decoded straight from the read buffer.
        if (this.#got === this.#head.length) return this.#finish(data.toString("utf8", this.#bodyAt));
        if (this.#got > 0) this.#parts.push(Buffer.from(data.subarray(this.#bodyAt)));
        return this.#lengthBodyDone();
      }
    }
    const chunked = dechunk(this.#data, this.#bodyAt);
    if (!chunked) return this.#keepData();
    if (chunked.end !== this.#data.length) throw new Error("the server sent bytes past the end of its answer");
    this.#finish(chunked.body.toString("utf8"));
  }

  /** An incomplete head or chunked body waits for the next read: out of the read buffer with it. */
  #keepData(): void {
    if (this.#data && this.#data.buffer === READ_BUFFER.buffer) this.#data = Buffer.from(this.#data);
  }

  #lengthBodyDone(): void {
    const length = this.#head!.length!;
    if (this.#got < length) return;
    if (this.#got > length) throw new Error("the server sent bytes past the end of its answer");
    const parts = this.#parts;
    this.#finish(
      parts.length === 0 ? "" : parts.length === 1 ? parts[0]!.toString("utf8") : Buffer.concat(parts).toString("utf8"),
    );
  }

  #finish(body: string): void {
    const head = this.#head!;
    const pending = this.pending!;
    this.#data = null;
    this.#head = null;
    this.#parts = [];
    this.#got = 0;
    this.pending = null;
    if (head.close) {
      this.socket.removeAllListeners("close");
      this.socket.on("close", () => this.pool.dropped(this));
      this.socket.end();
    } else this.pool.released(this);
    pending.resolve({ status: head.status, body, worker: head.worker });
  }
}

export class DayHttp {
  /** Idle connections, the most recently freed last (taken first). */
  readonly #idle: Connection[] = [];
  readonly #open = new Set<Connection>();
  readonly #sweep: NodeJS.Timeout;
  #closed = false;

  constructor(private readonly port: number) {
    this.#sweep = setInterval(() => this.#closeStale(performance.now()), 1000).unref();
  }

  request(method: "GET" | "POST" | "DELETE", path: string, auth: string, body?: string): Promise<DayAnswer> {
    if (this.#closed) return Promise.reject(new Error("the client is closed"));
    let text = `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth}\r\n`;
    text +=
      body === undefined
        ? "\r\n"
        : `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    this.#closeStale(performance.now());
    let connection = this.#idle.pop();
    if (!connection) {
      connection = new Connection(this.port, this);
      this.#open.add(connection);
    }
    return new Promise((resolve, reject) => connection.send(text, { resolve, reject }));
  }

  /** Connections open, idle ones included. */
  get connections(): number {
    return this.#open.size;
  }

  released(connection: Connection): void {
    if (this.#closed) return;
    connection.idleSince = performance.now();
    this.#idle.push(connection);
  }

  dropped(connection: Connection): void {
    this.#open.delete(connection);
    const at = this.#idle.indexOf(connection);
    if (at >= 0) this.#idle.splice(at, 1);
  }

  #closeStale(now: number): void {
    let stale = 0;
    while (stale < this.#idle.length && now - this.#idle[stale]!.idleSince > IDLE_MS) stale++;
    if (stale === 0) return;
    for (const connection of this.#idle.splice(0, stale)) {
      connection.socket.removeAllListeners("close");
      connection.socket.destroy();
      this.#open.delete(connection);
    }
  }

  /** Closes every connection; requests in flight end with an error. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#sweep);
    this.#idle.length = 0;
    for (const connection of this.#open) connection.socket.destroy();
  }
}
