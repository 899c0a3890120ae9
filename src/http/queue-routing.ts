/**
 * @module http/queue-routing
 * Event queues of `parley serve --workers` live in the worker where they were
 * registered (each worker runs its own hub, fed by the writer's event stream:
 * realtime/writer-stream). A queue ID names its owner ("reader-2.<uuid>"; the writer's
 * carry no name, as a single server's), so that a poll or a DELETE /events reaching
 * another worker is forwarded to the owner directly (http/frame-forward), over its internal
 * listener (`<name>.sock` in the supervisor's private directory): one hop, and the
 * writer, the one process every write goes through, does none of the readers' work.
 *
 * GET /events carries queue_id in its query. DELETE /events may carry it in a body:
 * that body (a few bytes) is read here first, then the request goes to the owner,
 * the worker itself included (its internal listener answers it as any other).
 *
 * With two workers the writer registers every queue, and a queue moves to the reader when
 * its polls reach the reader (realtime/writer-stream's ADOPT): the reader answers polls of
 * the queues it holds, and of a writer's queue it may adopt, itself; the writer sends on to
 * the reader the polls of every queue it does not hold (the reader answers
 * BAD_EVENT_QUEUE_ID for one that is nowhere). A worker's `place` says so.
 *
 * An owner that is down (a reader being replaced) answers 502 with Retry-After, as any
 * forward does: its queues are gone, but a replacement answers BAD_EVENT_QUEUE_ID for
 * them within a moment, which is what clients register again on.
 */
import { join } from "node:path";
import type { HttpRequest, HttpResponse } from "uWebSockets.js";
import { carriesBody } from "./forward.js";
import { FrameForwarder } from "./frame-forward.js";
import type { RequestHead } from "./request.js";
import { errorReply, send } from "./respond.js";
import { WORKER_HEADER } from "./worker-headers.js";

const EVENTS_PATH = "/api/v1/events";
/** DELETE /events bodies read to find queue_id: a form of one short field. */
const MAX_DELETE_BODY_BYTES = 64 * 1024;
const WRITER = "writer";

/** What begins the queue IDs a worker hands out: none for the writer, whose IDs look like a single server's. */
export function queueIdPrefix(worker: string): string {
  return worker === WRITER ? "" : `${worker}.`;
}

/** The worker a queue ID names among `workers` workers; the writer for any other ID (it answers BAD_EVENT_QUEUE_ID). */
export function queueOwner(queueId: string, workers: number): string {
  const match = /^reader-(\d{1,4})\./.exec(queueId);
  if (match === null) return WRITER;
  const n = Number(match[1]);
  return n >= 1 && n < workers ? `reader-${n}` : WRITER;
}

/** A worker's internal listener (the writer's is workers/protocol's WRITER_SOCKET). */
export function internalSocket(dir: string, worker: string): string {
  return join(dir, `${worker}.sock`);
}

export class QueueRouter {
  readonly #self: string;
  readonly #dir: string;
  readonly #workers: number;
  readonly #log: (line: string) => void;
  readonly #forwarders = new Map<string, FrameForwarder>();
  readonly #place: (queueId: string, method: string) => string | null;

  /**
   * `self`: this worker's name; `workers`: how many the server runs; `log`: where a broken hop is reported;
   * `place`: the worker that answers a queue's GET or DELETE /events when not the one its ID names (null).
   */
  constructor(
    self: string,
    dir: string,
    workers: number,
    log: (line: string) => void,
    place: (queueId: string, method: string) => string | null = () => null,
  ) {
    this.#place = place;
    this.#log = log;
    this.#self = self;
    this.#dir = dir;
    this.#workers = workers;
  }

  /**
   * Takes GET and DELETE /events for another worker's queue away to its owner (true);
   * false for everything else, a queue of this worker's included (answered here).
   * Call synchronously from the uWS handler.
   */
  route(res: HttpResponse, req: HttpRequest, head: RequestHead): boolean {
    if (head.url !== EVENTS_PATH || (head.method !== "GET" && head.method !== "DELETE")) return false;
    const queueId = new URLSearchParams(head.query).get("queue_id");
    if (queueId !== null) return this.#toOwner(res, req, head, queueId);
    if (head.method === "GET" || !carriesBody(head, req)) return false;
    this.#readThenRoute(res, req, head);
    return true;
  }

  #ownerOf(queueId: string, method: string): string {
    return this.#place(queueId, method) ?? queueOwner(queueId, this.#workers);
  }

  /** Resolves once every forwarded request has been answered (or its client left). */
  async drained(): Promise<void> {
    await Promise.all([...this.#forwarders.values()].map((f) => f.drained()));
  }

  close(): void {
    for (const forwarder of this.#forwarders.values()) forwarder.close();
  }

  #toOwner(res: HttpResponse, req: HttpRequest, head: RequestHead, queueId: string): boolean {
    const owner = this.#ownerOf(queueId, head.method);
    if (owner === this.#self) return false;
    this.#forwarder(owner).forward(res, req, head);
    return true;
  }

  /** DELETE /events with its parameters in a body: read it, then forward to the owner (this worker included). */
  #readThenRoute(res: HttpResponse, req: HttpRequest, head: RequestHead): void {
    const closeAsked = /(^|,)\s*close\s*(,|$)/i.test(req.getHeader("connection"));
    const form = head.contentType.split(";")[0]!.trim().toLowerCase() === "application/x-www-form-urlencoded";
    const chunks: Buffer[] = [];
    let bytes = 0;
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    res.onData((chunk, isLast) => {
      if (aborted) return;
      bytes += chunk.byteLength;
      if (bytes > MAX_DELETE_BODY_BYTES) {
        if (!isLast) return;
        const reply = errorReply(400, "The request's body is too large for DELETE /events", "BAD_REQUEST");
        send(res, () => aborted, reply, [[WORKER_HEADER, this.#self]]);
        return;
      }
      // uWS reuses the chunk's memory after this callback: copy.
      chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (!isLast) return;
      const body = Buffer.concat(chunks);
      // A body of another type is answered here: it names no queue this router could read.
      const queueId = form ? new URLSearchParams(body.toString("utf8")).get("queue_id") : null;
      const owner = queueId === null ? this.#self : this.#ownerOf(queueId, head.method);
      this.#forwarder(owner).forwardRead(res, head, closeAsked, body);
    });
  }

  #forwarder(owner: string): FrameForwarder {
    let forwarder = this.#forwarders.get(owner);
    if (forwarder === undefined) {
      forwarder = new FrameForwarder(internalSocket(this.#dir, owner), this.#self, { upstream: owner, log: this.#log });
      this.#forwarders.set(owner, forwarder);
    }
    return forwarder;
  }
}
