/**
 * @module http/reply
 * What a handler answers, before it is written: its status, headers and body (a string,
 * bytes, pre-joined JSON pieces or a file range). A leaf, so that the writer (respond)
 * and the head checks (response-head) can both read it without importing each other.
 */

/** The data of a success answer, before Zulip's envelope is added. */
export type SuccessData = Record<string, unknown>;

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
