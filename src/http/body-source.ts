/**
 * @module http/body-source
 * Request bodies on both listeners. uWS pushes chunks with onData, which must be
 * registered in the request handler's own tick, so UwsBody takes the body in one of
 * three ways chosen from the head alone (http/server's admission):
 * - "buffer": whole in memory, under the endpoint's limit and the server's body
 *   budget (http/load-limits), for the endpoints that parse forms;
 * - "stream": handed to the endpoint as a BodySource (uploads never sit whole in
 *   memory): when more than HIGH_WATER bytes wait unread the socket is paused until
 *   the consumer catches up;
 * - "discard": read and dropped (a request refused from its head, or whose answer is
 *   already decided), so that the client, still sending, can read the answer.
 * Either way it knows when the body has arrived whole: a refusal is not followed by a
 * close while the client is still sending (http/server lingers until then).
 * NodeBodySource is the stream mode of the compatibility listener.
 */
import type { IncomingMessage } from "node:http";
import type { HttpResponse } from "uWebSockets.js";
import type { EngineError } from "../engine/index.js";
import { BodyError } from "./errors.js";
import type { BodyBudget } from "./load-limits.js";

const HIGH_WATER = 1024 * 1024;

export interface BodySource extends AsyncIterable<Buffer> {
  /** The client went away before the whole body arrived. */
  readonly aborted: boolean;
  /** Bytes received so far. */
  readonly received: number;
}

/** A body already in memory. */
export function bufferSource(body: Buffer): BodySource {
  return {
    aborted: false,
    received: body.length,
    async *[Symbol.asyncIterator]() {
      if (body.length > 0) yield body;
    },
  };
}

export type BodyMode = "buffer" | "stream" | "discard";

export function tooLarge(): BodyError {
  return new BodyError("BODY_TOO_LARGE", "Request body too large");
}

export class UwsBody implements BodySource {
  readonly #res: HttpResponse;
  #mode: BodyMode;
  readonly #chunks: Buffer[] = [];
  #queued = 0;
  #complete = false;
  #aborted = false;
  #paused = false;
  #received = 0;
  #wake: (() => void) | null = null;
  readonly #waiting: (() => void)[] = [];
  readonly #maxBytes: number;
  readonly #budget: BodyBudget | null;
  /** Bytes taken from the budget and not yet given back. */
  #held = 0;
  #failure: EngineError | null = null;

  /**
   * Must be constructed in the request handler's own tick. `empty`: the head says
   * there is no body (no onData then). `maxBytes` and `budget` apply to "buffer".
   */
  constructor(
    res: HttpResponse,
    empty: boolean,
    mode: BodyMode,
    maxBytes = Number.POSITIVE_INFINITY,
    budget: BodyBudget | null = null,
    declaredLength: number | null = null,
  ) {
    this.#res = res;
    this.#mode = mode;
    this.#maxBytes = maxBytes;
    this.#budget = budget;
    if (empty) {
      this.#complete = true;
      return;
    }
    // Refused before a byte is kept: the declared length alone is over the limit.
    if (mode === "buffer" && declaredLength !== null && declaredLength > maxBytes) this.#fail(tooLarge());
    res.onData((chunk, isLast) => this.#onData(chunk, isLast));
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get received(): number {
    return this.#received;
  }

  /** The whole body has arrived (or there was none); false after an abort. */
  get complete(): boolean {
    return this.#complete && !this.#aborted;
  }

  #onData(chunk: ArrayBuffer, isLast: boolean): void {
    this.#received += chunk.byteLength;
    if (this.#mode === "buffer" && chunk.byteLength > 0) {
      if (this.#received > this.#maxBytes) this.#fail(tooLarge());
      else {
        try {
          this.#budget?.take(chunk.byteLength);
          this.#held += chunk.byteLength;
          // uWS reuses the chunk's memory after this callback: copy it.
          this.#chunks.push(Buffer.from(new Uint8Array(chunk)));
        } catch (error) {
          this.#fail(error as EngineError);
        }
      }
    } else if (this.#mode === "stream" && chunk.byteLength > 0) {
      const copy = Buffer.from(new Uint8Array(chunk));
      this.#chunks.push(copy);
      this.#queued += copy.length;
      if (!isLast && !this.#paused && this.#queued > HIGH_WATER) {
        this.#paused = true;
        this.#res.pause();
      }
    }
    if (isLast) this.#finish();
    this.#notify();
  }

  #fail(error: EngineError): void {
    this.#failure ??= error;
    this.discard();
  }

  #finish(): void {
    this.#complete = true;
    for (const resolve of this.#waiting.splice(0)) resolve();
  }

  /** The client went away (from the server's onAborted). */
  abort(): void {
    this.#aborted = true;
    this.discard();
    this.#finish();
    this.#notify();
  }

  /** From now on every chunk is dropped (the answer is decided); the socket flows again. */
  discard(): void {
    this.#mode = "discard";
    this.#chunks.length = 0;
    this.#queued = 0;
    this.release();
    if (this.#paused && !this.#aborted) {
      this.#paused = false;
      this.#res.resume();
    }
    this.#notify();
  }

  /** Gives the budget back (the request is answered, or its bytes were dropped). */
  release(): void {
    this.#budget?.give(this.#held);
    this.#held = 0;
  }

  /** Resolves once the whole body has arrived or the client went away. */
  whenComplete(): Promise<void> {
    return this.#complete ? Promise.resolve() : new Promise((resolve) => this.#waiting.push(resolve));
  }

  /**
   * "buffer": the whole body, or null if the client went away. Rejects with 413
   * (over the limit) or 503 (over the server's budget) as soon as that is known.
   */
  async whole(): Promise<Buffer | null> {
    for (;;) {
      if (this.#failure !== null) throw this.#failure;
      if (this.#aborted) return null;
      if (this.#complete) return Buffer.concat(this.#chunks);
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  /** "stream": the chunks as they come; ends early if the client goes away or the body is discarded. */
  async *[Symbol.asyncIterator](): AsyncIterator<Buffer> {
    for (;;) {
      const chunk = this.#mode === "stream" ? this.#chunks.shift() : undefined;
      if (chunk) {
        this.#queued -= chunk.length;
        if (this.#paused && this.#queued <= HIGH_WATER / 2) {
          this.#paused = false;
          this.#res.resume();
        }
        yield chunk;
        continue;
      }
      if (this.#complete || this.#mode !== "stream") return;
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }
}

/**
 * A request body on Node's parser as a BodySource, with the same backpressure. Read
 * by listening, not by Node's async iterator, whose early return would destroy the
 * socket before the answer is written.
 */
export class NodeBodySource implements BodySource {
  readonly #req: IncomingMessage;
  readonly #chunks: Buffer[] = [];
  #queued = 0;
  #ended = false;
  #aborted = false;
  #dropping = false;
  #received = 0;
  #wake: (() => void) | null = null;

  constructor(req: IncomingMessage) {
    this.#req = req;
    req.on("data", (chunk: Buffer) => {
      this.#received += chunk.length;
      if (this.#dropping) return;
      this.#chunks.push(chunk);
      this.#queued += chunk.length;
      if (this.#queued > HIGH_WATER) req.pause();
      this.#notify();
    });
    req.on("end", () => {
      this.#ended = true;
      this.#notify();
    });
    req.on("close", () => {
      if (!req.complete) this.#aborted = true;
      this.#ended = true;
      this.#notify();
    });
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get received(): number {
    return this.#received;
  }

  /** From now on every chunk is dropped (the answer is decided); the socket flows again. */
  discard(): void {
    this.#dropping = true;
    this.#chunks.length = 0;
    this.#queued = 0;
    this.#req.resume();
    this.#notify();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Buffer> {
    for (;;) {
      const chunk = this.#dropping ? undefined : this.#chunks.shift();
      if (chunk) {
        this.#queued -= chunk.length;
        if (this.#queued <= HIGH_WATER / 2) this.#req.resume();
        yield chunk;
        continue;
      }
      if (this.#ended || this.#dropping) return;
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }
}
