/**
 * @module http/frame-listener
 * A worker's internal listener (`parley serve --workers`, src/serve-workers.ts): what
 * other workers forward (http/frame-forward: every write to the writer, polls of a queue
 * to its owner) arrives here in frames (http/frames) on a Unix socket that only the
 * server's user can reach, so the client address each head carries is trusted. It feeds
 * the same request pipeline (http/admission) as the public listener: admitted, counted
 * and answered exactly as if the client had connected here; only the transport differs.
 *
 * Bodies: "buffer" under the endpoint's limit and the server's body budget (BODY_MEMORY_MIB),
 * "stream" handed to the endpoint (uploads), each with flow control per request: the
 * forwarding worker sends at most FRAME_WINDOW bytes ahead of what was consumed here.
 */
import { chmodSync, createReadStream, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { EngineError } from "../engine/index.js";
import type { Admission, Pipeline } from "./admission.js";
import { tooLarge, type BodyMode, type BodySource } from "./body-source.js";
import {
  ANSWER_COMPLETE,
  creditPayload,
  decodeHead,
  encodeStrings,
  FRAME,
  FrameDecoder,
  FrameError,
  TurnBatchedSink,
  writeFrame,
  type FrameType,
} from "./frames.js";
import type { BodyBudget } from "./load-limits.js";
import { engineErrorReply, errorReply, FILE_TYPE, JsonParts, JSON_TYPE, type Reply } from "./respond.js";
import { responseHead, type HeaderList } from "./response-head.js";

export interface FrameListener {
  close(): void;
}

/** Serves `pipeline` to other workers on `socketPath` (mode 0600). */
export function listenFrames(pipeline: Pipeline, socketPath: string): Promise<FrameListener> {
  rmSync(socketPath, { force: true });
  const connections = new Set<FrameConnection>();
  const server: Server = createServer((socket) => {
    const connection = new FrameConnection(pipeline, socket);
    connections.add(connection);
    socket.on("close", () => connections.delete(connection));
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => {
      server.off("error", reject);
      chmodSync(socketPath, 0o600);
      resolve({
        close() {
          server.close();
          for (const connection of connections) connection.close();
        },
      });
    });
  });
}

/** A request being answered here. */
interface Served {
  left: boolean;
  body: FrameBody | null;
  gone: AbortController | null;
  /** Stops a file answer being streamed. */
  stopFile: (() => void) | null;
}

const FRAME_NAMES: Record<FrameType, string> = {
  [FRAME.head]: "HEAD",
  [FRAME.data]: "DATA",
  [FRAME.end]: "END",
  [FRAME.credit]: "CREDIT",
  [FRAME.cancel]: "CANCEL",
  [FRAME.answer]: "ANSWER",
};

class FrameConnection {
  readonly #pipeline: Pipeline;
  readonly #socket: Socket;
  readonly #out: TurnBatchedSink;
  readonly #served = new Map<number, Served>();
  /** Bodies that took bytes in this read of the socket without crediting them yet. */
  readonly #owing = new Set<FrameBody>();

  constructor(pipeline: Pipeline, socket: Socket) {
    this.#pipeline = pipeline;
    this.#socket = socket;
    this.#out = new TurnBatchedSink(socket);
    const decoder = new FrameDecoder((type, id, payload) => this.#onFrame(type, id, payload));
    socket.on("data", (chunk: Buffer) => {
      try {
        decoder.push(chunk);
        // Credit for what this read brought, sent once, and not for a body its END completed in the same read.
        for (const body of this.#owing) body.sendCredit();
        this.#owing.clear();
      } catch (error) {
        if (error instanceof FrameError)
          pipeline.logError(`internal socket: malformed frame from a worker (${error.message}); connection closed`, "");
        else pipeline.logError("internal socket: unexpected error; connection closed", error);
        socket.destroy();
      }
    });
    // A connection that fails closes: its requests end as if their clients had left.
    socket.on("error", () => undefined);
    socket.on("close", () => {
      for (const served of this.#served.values()) this.#leave(served);
      this.#served.clear();
    });
  }

  /** Ends the connection once what was written has gone out; its requests end as if their clients had left. */
  close(): void {
    for (const served of this.#served.values()) this.#leave(served);
    this.#served.clear();
    this.#socket.end();
  }

  #onFrame(type: FrameType, id: number, payload: Buffer): void {
    switch (type) {
      case FRAME.head:
        if (this.#served.has(id)) throw new FrameError(`request ${id} began twice`);
        return this.#start(id, payload);
      // A request answered (or left) meanwhile: what its client still sent is dropped.
      case FRAME.data:
        return this.#served.get(id)?.body?.push(payload);
      case FRAME.end:
        return this.#served.get(id)?.body?.end();
      case FRAME.cancel: {
        const served = this.#served.get(id);
        if (served === undefined) return;
        this.#served.delete(id);
        return this.#leave(served);
      }
      default:
        throw new FrameError(`a ${FRAME_NAMES[type]} frame sent to the listener`);
    }
  }

  #leave(served: Served): void {
    served.left = true;
    served.gone?.abort();
    served.body?.abort();
    served.stopFile?.();
  }

  #start(id: number, payload: Buffer): void {
    const { head, bodyFollows } = decodeHead(payload);
    const pipeline = this.#pipeline;
    let admission: Admission;
    try {
      admission = pipeline.admit(head);
    } catch (error) {
      pipeline.logError(`${head.method} ${head.url}: unexpected error`, error);
      this.#write(id, errorReply(500, "Internal server error", null), [], null);
      return;
    }
    const served: Served = { left: false, body: null, gone: null, stopFile: null };
    // Made on first use, as on the other listeners: most endpoints never look.
    const signal = (): AbortSignal => {
      if (served.gone === null) {
        served.gone = new AbortController();
        if (served.left) served.gone.abort();
      }
      return served.gone.signal;
    };
    const answer = (reply: Reply, headers: HeaderList = []): void => {
      served.body?.discard();
      if (this.#served.get(id) === served) this.#served.delete(id);
      const out = pipeline.finish(admission, reply, headers, !served.left);
      if (!served.left) this.#write(id, out.reply, out.headers, served);
    };
    if (admission.refusal) {
      answer(admission.refusal);
      return;
    }
    const credit = (bytes: number): void => {
      if (!served.left && this.#served.get(id) === served)
        writeFrame(this.#out, FRAME.credit, id, creditPayload(bytes));
    };
    const body = new FrameBody(bodyFollows, admission, pipeline.budget, credit, (owing) => this.#owing.add(owing));
    served.body = body;
    this.#served.set(id, served);
    (admission.mode === "stream" ? Promise.resolve<BodySource | Buffer | null>(body) : body.whole())
      .then(async (input) => {
        if (input === null) {
          served.body?.discard();
          pipeline.finish(admission, errorReply(400, "", null), [], false);
          return;
        }
        const out = await pipeline.handle(admission, input, signal);
        answer(out.reply, out.headers);
      })
      .catch((error: unknown) => {
        if (error instanceof EngineError) answer(engineErrorReply(error));
        else {
          pipeline.logError(`${head.method} ${head.url}: unexpected error`, error);
          answer(errorReply(500, "Internal server error", null));
        }
      });
  }

  /** ANSWER with the whole body, or (a file) ANSWER, DATA frames as the socket drains, END. */
  #write(id: number, reply: Reply, extra: HeaderList, served: Served | null): void {
    if (this.#socket.destroyed) return;
    const file = reply.file;
    const head = responseHead(reply, extra, file ? FILE_TYPE : JSON_TYPE);
    const strings: string[] = [];
    for (const [name, value] of head.fields) strings.push(name, value);
    const prefix = Buffer.allocUnsafe(3);
    prefix.writeUInt16BE(head.status, 0);
    if (!file) {
      prefix[2] = ANSWER_COMPLETE;
      const body = reply.body instanceof JsonParts ? reply.body.joinedTransiently() : reply.body;
      writeFrame(this.#out, FRAME.answer, id, encodeStrings(prefix, strings, body));
      return;
    }
    prefix[2] = 0;
    writeFrame(this.#out, FRAME.answer, id, encodeStrings(prefix, strings));
    if (file.length === 0) {
      writeFrame(this.#out, FRAME.end, id);
      return;
    }
    const stream = createReadStream(file.path, { start: file.start, end: file.start + file.length - 1 });
    const resume = (): void => void stream.resume();
    if (served !== null)
      served.stopFile = () => {
        this.#socket.off("drain", resume);
        stream.destroy();
      };
    stream.on("data", (chunk: Buffer | string) => {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      if (!writeFrame(this.#out, FRAME.data, id, bytes)) {
        stream.pause();
        this.#socket.once("drain", resume);
      }
    });
    // A file cut short (removed meanwhile) ends early: its client sees a body shorter than announced.
    const end = (): void => {
      if (served?.left !== true) writeFrame(this.#out, FRAME.end, id);
    };
    stream.on("end", end);
    stream.on("error", end);
  }
}

/**
 * A request's body as its DATA frames arrive, taken as the admission chose ("buffer":
 * whole, under the endpoint's limit and the server's budget; "stream": to the endpoint,
 * credited as it reads; "discard": dropped). Past a limit it is dropped, not buffered.
 */
class FrameBody implements BodySource {
  #mode: BodyMode;
  readonly #maxBytes: number;
  readonly #budget: BodyBudget;
  readonly #credit: (bytes: number) => void;
  readonly #owe: (body: FrameBody) => void;
  /** Bytes taken (buffered or dropped) and not yet credited: sent after the socket's read (sendCredit). */
  #uncredited = 0;
  readonly #chunks: Buffer[] = [];
  #held = 0;
  #received = 0;
  #complete: boolean;
  #aborted = false;
  #failure: EngineError | null = null;
  #wake: (() => void) | null = null;

  constructor(
    follows: boolean,
    admission: Admission,
    budget: BodyBudget,
    credit: (bytes: number) => void,
    owe: (body: FrameBody) => void,
  ) {
    this.#mode = admission.mode;
    this.#maxBytes = admission.maxBodyBytes;
    this.#budget = budget;
    this.#credit = credit;
    this.#owe = owe;
    this.#complete = !follows;
    const declared = admission.head.contentLength;
    if (follows && this.#mode === "buffer" && declared !== null && declared > this.#maxBytes) this.#fail(tooLarge());
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get received(): number {
    return this.#received;
  }

  push(chunk: Buffer): void {
    this.#received += chunk.length;
    if (this.#mode === "stream") {
      this.#chunks.push(chunk);
      this.#notify();
      return;
    }
    if (this.#mode === "buffer") {
      if (this.#received > this.#maxBytes) this.#fail(tooLarge());
      else {
        try {
          this.#budget.take(chunk.length);
          this.#held += chunk.length;
          this.#chunks.push(chunk);
        } catch (error) {
          this.#fail(error as EngineError);
        }
      }
    }
    this.#uncredited += chunk.length;
    this.#owe(this);
    this.#notify();
  }

  /** Credits what was taken since the last call, unless the body is complete (nothing more will come). */
  sendCredit(): void {
    if (this.#uncredited > 0 && !this.#complete) this.#credit(this.#uncredited);
    this.#uncredited = 0;
  }

  end(): void {
    this.#complete = true;
    this.#notify();
  }

  abort(): void {
    this.#aborted = true;
    this.#complete = true;
    this.discard();
  }

  /** From now on every chunk is dropped (the answer is decided); the budget is given back. */
  discard(): void {
    this.#mode = "discard";
    this.#chunks.length = 0;
    this.#budget.give(this.#held);
    this.#held = 0;
    this.#notify();
  }

  #fail(error: EngineError): void {
    this.#failure ??= error;
    this.discard();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  /** "buffer": the whole body, or null if the client left; rejects with 413 or 503 as soon as that is known. */
  async whole(): Promise<Buffer | null> {
    for (;;) {
      if (this.#failure !== null) throw this.#failure;
      if (this.#aborted) return null;
      if (this.#complete) return Buffer.concat(this.#chunks, this.#held);
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Buffer> {
    for (;;) {
      const chunk = this.#mode === "stream" ? this.#chunks.shift() : undefined;
      if (chunk) {
        if (!this.#complete) this.#credit(chunk.length);
        yield chunk;
        continue;
      }
      if (this.#complete || this.#mode !== "stream") return;
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }
}
