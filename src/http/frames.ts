/**
 * @module http/frames
 * The framing of the hop between the workers of `parley serve --workers` (http/frame-forward
 * sends, http/frame-listener answers), on Unix sockets in the supervisor's private directory.
 * It replaced Node's HTTP client and parser there, which cost the reader about a fifth of its
 * CPU and the writer an eighth: a worker's request is already parsed (a RequestHead), so it
 * goes across as a few length-prefixed strings, and many requests share one connection.
 *
 * Every frame: u32 length of what follows (type, id, payload), u8 type, u32 request id
 * (chosen by the sending side of the connection, never reused on it), payload.
 *
 *   HEAD    request head: flags (u8: BODY_FOLLOWS), then strings (http/frame-forward's encodeHead)
 *   DATA    a piece of a request's or an answer's body
 *   END     the body is complete
 *   CREDIT  u32: the receiver consumed that many bytes of the request's body (flow control per
 *           request, so that one slow upload never stalls the others on its connection)
 *   CANCEL  the client left: the request ends on the other side (a long-poll's included)
 *   ANSWER  u16 status, u8 flags (ANSWER_COMPLETE: the body follows in this frame, else in
 *           DATA frames up to END), strings (header name, value, ...), then the body
 *
 * A frame that breaks these rules (an unknown type, a length out of bounds, strings that do
 * not fit their frame) is a bug on the other side: the connection is closed, which fails
 * only the requests in flight on it.
 */

import type { Socket } from "node:net";
import { EXTRA_HEADERS, type ExtraHeader, type RequestHead } from "./request.js";

export const FRAME = { head: 1, data: 2, end: 3, credit: 4, cancel: 5, answer: 6 } as const;
export type FrameType = (typeof FRAME)[keyof typeof FRAME];

/** HEAD flag: DATA frames and an END follow (else the request has no body). */
export const BODY_FOLLOWS = 1;
/** ANSWER flag: the whole body is in this frame. */
export const ANSWER_COMPLETE = 1;

/** Type and request ID, after the length. */
const PREFIX_BYTES = 4;
const FIXED_BYTES = 5;
/** Above any frame this protocol sends (bodies go in DATA frames of MAX_DATA_BYTES at most; answers are small). */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;
/** Bytes of a request's body a forwarding worker may send ahead of what the other side consumed. */
export const FRAME_WINDOW = 1024 * 1024;
/** How much of a body one DATA frame carries at most. */
export const MAX_DATA_BYTES = 256 * 1024;

export class FrameError extends Error {}

/** One frame's header and payload (a view into the bytes received: copy what outlives the callback). */
export type FrameHandler = (type: FrameType, id: number, payload: Buffer) => void;

const isFrameType = (type: number): type is FrameType => type >= FRAME.head && type <= FRAME.answer;

/** Cuts a byte stream into frames; throws FrameError on a malformed one (close the connection then). */
export class FrameDecoder {
  readonly #onFrame: FrameHandler;
  #chunks: Buffer[] = [];
  #buffered = 0;
  /** Bytes needed before the next frame can be read (its length prefix, then the whole frame). */
  #need = PREFIX_BYTES;

  constructor(onFrame: FrameHandler) {
    this.#onFrame = onFrame;
  }

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    if (this.#buffered < this.#need) return;
    // Merged only once a frame is complete: a body frame spanning many reads is copied once.
    const bytes = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#buffered);
    let at = 0;
    while (bytes.length - at >= PREFIX_BYTES) {
      const length = bytes.readUInt32BE(at);
      if (length < FIXED_BYTES || length > MAX_FRAME_BYTES) throw new FrameError(`a frame of ${length} bytes`);
      if (bytes.length - at < PREFIX_BYTES + length) break;
      const type = bytes[at + PREFIX_BYTES]!;
      if (!isFrameType(type)) throw new FrameError(`a frame of unknown type ${type}`);
      const id = bytes.readUInt32BE(at + PREFIX_BYTES + 1);
      const start = at + PREFIX_BYTES + FIXED_BYTES;
      at += PREFIX_BYTES + length;
      this.#onFrame(type, id, bytes.subarray(start, at));
    }
    const rest = bytes.length - at;
    this.#chunks = rest === 0 ? [] : [bytes.subarray(at)];
    this.#buffered = rest;
    this.#need = rest >= PREFIX_BYTES ? PREFIX_BYTES + bytes.readUInt32BE(at) : PREFIX_BYTES;
  }
}

/** Writes frames to a socket (or anything with write). Returns write's result: false when it should drain. */
export interface FrameSink {
  write(bytes: Buffer): boolean;
}

/**
 * A socket whose writes of one turn of the event loop go out together (cork, then uncork
 * on the next tick): the answers a batch of events releases, or the heads of requests
 * arriving together, cost one system call instead of one each (also http/shared-limits').
 */
export class TurnBatchedSink implements FrameSink {
  readonly #socket: Socket;
  #corked = false;
  readonly #uncork = (): void => {
    this.#corked = false;
    this.#socket.uncork();
  };

  constructor(socket: Socket) {
    this.#socket = socket;
  }

  write(bytes: Buffer | string): boolean {
    if (!this.#corked) {
      this.#corked = true;
      this.#socket.cork();
      process.nextTick(this.#uncork);
    }
    return this.#socket.write(bytes);
  }
}

/** Below this a payload is copied behind its header (one write); above, header and payload go separately. */
const COPY_BELOW = 16 * 1024;

export function writeFrame(sink: FrameSink, type: FrameType, id: number, payload?: Buffer): boolean {
  const size = payload?.length ?? 0;
  const head = Buffer.allocUnsafe(PREFIX_BYTES + FIXED_BYTES + (size < COPY_BELOW ? size : 0));
  head.writeUInt32BE(FIXED_BYTES + size, 0);
  head[PREFIX_BYTES] = type;
  head.writeUInt32BE(id, PREFIX_BYTES + 1);
  if (payload === undefined || size === 0) return sink.write(head);
  if (size < COPY_BELOW) {
    payload.copy(head, PREFIX_BYTES + FIXED_BYTES);
    return sink.write(head);
  }
  sink.write(head);
  return sink.write(payload);
}

/** A CREDIT frame's payload. */
export function creditPayload(bytes: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(bytes, 0);
  return payload;
}

export function readCredit(payload: Buffer): number {
  if (payload.length !== 4) throw new FrameError(`a CREDIT frame of ${payload.length} bytes`);
  return payload.readUInt32BE(0);
}

/**
 * `prefix` bytes (flags, status...) then the strings, each a u32 length and its UTF-8,
 * then `tail` (an answer's body).
 */
export function encodeStrings(prefix: Buffer, strings: readonly string[], tail?: Buffer | string): Buffer {
  let size = prefix.length + 2;
  for (const s of strings) size += 4 + Buffer.byteLength(s);
  const tailBytes = tail === undefined ? 0 : typeof tail === "string" ? Buffer.byteLength(tail) : tail.length;
  const out = Buffer.allocUnsafe(size + tailBytes);
  prefix.copy(out, 0);
  let at = prefix.length;
  out.writeUInt16BE(strings.length, at);
  at += 2;
  for (const s of strings) {
    const length = out.write(s, at + 4);
    out.writeUInt32BE(length, at);
    at += 4 + length;
  }
  if (typeof tail === "string") out.write(tail, at);
  else tail?.copy(out, at);
  return out;
}

/** The strings after `prefixBytes` bytes, and where what follows them begins; FrameError if they do not fit. */
export function decodeStrings(payload: Buffer, prefixBytes: number): { strings: string[]; end: number } {
  if (payload.length < prefixBytes + 2) throw new FrameError("a frame too short for its strings");
  const count = payload.readUInt16BE(prefixBytes);
  let at = prefixBytes + 2;
  const strings: string[] = [];
  for (let i = 0; i < count; i++) {
    if (payload.length - at < 4) throw new FrameError("a string past its frame's end");
    const length = payload.readUInt32BE(at);
    at += 4;
    if (payload.length - at < length) throw new FrameError("a string past its frame's end");
    strings.push(payload.toString("utf8", at, at + length));
    at += length;
  }
  return { strings, end: at };
}

/** The head's fields in HEAD's strings, in this order, then EXTRA_HEADERS' values in theirs. */
const HEAD_FIELDS = 10;
const HEAD_STRINGS = HEAD_FIELDS + EXTRA_HEADERS.length;
const NO_BODY = Buffer.from([0]);
const WITH_BODY = Buffer.from([BODY_FOLLOWS]);

/**
 * A HEAD frame's payload: the head as the reader parsed it (every header the writer's
 * pipeline reads, the client's address included), so the writer parses nothing again.
 */
export function encodeHead(head: RequestHead, bodyFollows: boolean): Buffer {
  const strings = [
    head.method,
    head.url,
    head.query,
    head.host,
    head.authorization,
    head.contentType,
    head.contentLength === null ? "" : String(head.contentLength),
    head.userAgent,
    head.ifNoneMatch,
    head.remoteAddress,
  ];
  for (const name of EXTRA_HEADERS) strings.push(head.extra[name]);
  return encodeStrings(bodyFollows ? WITH_BODY : NO_BODY, strings);
}

export function decodeHead(payload: Buffer): { head: RequestHead; bodyFollows: boolean } {
  const { strings, end } = decodeStrings(payload, 1);
  if (strings.length !== HEAD_STRINGS || end !== payload.length)
    throw new FrameError(`a HEAD frame of ${strings.length} strings (expected ${HEAD_STRINGS})`);
  const [method, url, query, host, authorization, contentType, length, userAgent, ifNoneMatch, remoteAddress] =
    strings as [string, string, string, string, string, string, string, string, string, string];
  const contentLength = length === "" ? null : Number(length);
  if (contentLength !== null && !(Number.isSafeInteger(contentLength) && contentLength >= 0))
    throw new FrameError(`a HEAD frame with content length ${JSON.stringify(length)}`);
  const extra = {} as Record<ExtraHeader, string>;
  EXTRA_HEADERS.forEach((name, i) => (extra[name] = strings[HEAD_FIELDS + i]!));
  const head = {
    method,
    url,
    query,
    host,
    authorization,
    contentType,
    contentLength,
    userAgent,
    ifNoneMatch,
    remoteAddress,
    extra,
  };
  return { head, bodyFollows: (payload[0]! & BODY_FOLLOWS) !== 0 };
}
