/**
 * @module http/body-source
 * A request body as a stream of chunks, for endpoints that must not hold it in memory
 * (uploads). uWS pushes chunks with onData; the consumer pulls them with for-await.
 * When more than HIGH_WATER bytes wait unread the socket is paused (res.pause) until
 * the consumer catches up, so a fast client cannot fill the server's memory. If the
 * client goes away the iteration just ends: the consumer checks `aborted`.
 */
import type { HttpResponse } from "uWebSockets.js";

const HIGH_WATER = 1024 * 1024;

export interface BodySource extends AsyncIterable<Buffer> {
  /** The client went away before the whole body arrived. */
  readonly aborted: boolean;
  /** Bytes received so far. */
  readonly received: number;
}

/** A body already in memory (the compat listener reads bodies whole). */
export function bufferSource(body: Buffer): BodySource {
  return {
    aborted: false,
    received: body.length,
    async *[Symbol.asyncIterator]() {
      if (body.length > 0) yield body;
    },
  };
}

export class UwsBodySource implements BodySource {
  readonly #res: HttpResponse;
  readonly #chunks: Buffer[] = [];
  #queued = 0;
  #ended = false;
  #aborted = false;
  #paused = false;
  #released = false;
  #received = 0;
  #wake: (() => void) | null = null;

  /** Must be constructed in the request handler's own tick (uWS requires onData at once). */
  constructor(res: HttpResponse, empty: boolean) {
    this.#res = res;
    if (empty) {
      this.#ended = true;
      return;
    }
    res.onData((chunk, isLast) => {
      if (this.#released) return;
      if (chunk.byteLength > 0) {
        // uWS reuses the chunk's memory after this callback: copy it.
        const copy = Buffer.from(new Uint8Array(chunk));
        this.#chunks.push(copy);
        this.#queued += copy.length;
        this.#received += copy.length;
      }
      if (isLast) this.#ended = true;
      if (!this.#ended && !this.#paused && this.#queued > HIGH_WATER) {
        this.#paused = true;
        res.pause();
      }
      this.#notify();
    });
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get received(): number {
    return this.#received;
  }

  /** The client went away (from the server's onAborted). */
  abort(): void {
    this.#aborted = true;
    this.#ended = true;
    this.#notify();
  }

  /** The reply is about to go out: stop buffering whatever else arrives, and let the socket flow. */
  release(): void {
    this.#released = true;
    this.#chunks.length = 0;
    this.#queued = 0;
    this.#ended = true;
    this.#resume();
    this.#notify();
  }

  #resume(): void {
    if (this.#paused && !this.#aborted) {
      this.#paused = false;
      this.#res.resume();
    }
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Buffer> {
    for (;;) {
      const chunk = this.#chunks.shift();
      if (chunk) {
        this.#queued -= chunk.length;
        if (this.#queued <= HIGH_WATER / 2) this.#resume();
        yield chunk;
        continue;
      }
      if (this.#ended) return;
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }
}
