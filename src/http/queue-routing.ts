/**
 * @module http/queue-routing
 * Event queues of `parley serve --workers` live in one worker at a time (each worker runs
 * its own hub, fed by the writer's event stream: realtime/writer-stream), and move to the
 * worker their polls reach (a poll or DELETE /events for a queue a worker does not hold
 * brings it there: realtime/writer-stream's moves). So a client polling on one keep-alive
 * connection, as browsers and bench:day's clients do, has its queue moved once, and every
 * later poll is answered where it lands, whichever worker registered it.
 *
 * A client whose polls alternate between workers would move its queue at every poll,
 * each move costing its poll a round trip or two through the writer and the holder's
 * stream backlog, and both workers the queue's JSON. So a worker that handed a queue
 * away forwards that queue's GET and DELETE /events for STAY_MS to the worker it went
 * to (http/frame-forward, one hop, ~0.1-0.15 ms a poll on each, as every poll to
 * another worker's queue cost before moves): such a client costs a move per STAY_MS per
 * worker at most, and forwards otherwise. A forwarded request is answered where it
 * arrives (internal listeners never forward), bringing the queue there if it moved on.
 *
 * GET /events carries queue_id in its query. DELETE /events may carry it in a body:
 * that body (a few bytes) is read here first, then the request goes to the worker
 * chosen, the worker itself included (its internal listener answers it as any other).
 *
 * A worker that forwards to one that is down (a reader being replaced) answers 502 with
 * Retry-After, as any forward does: that worker's queues are gone, and a poll for one of
 * them gets BAD_EVENT_QUEUE_ID once the hint expires (or at once elsewhere), which is what
 * clients register again on.
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

/** How long a worker that handed a queue away forwards its polls to where it went (see the module's comment). */
export const STAY_MS = 30_000;
/** Hand-offs remembered (a client's re-registrations leave old IDs behind). */
const MAX_HANDOFFS = 100_000;

/** The queues a worker handed away lately, and to which worker. */
export class Handoffs {
  readonly #to = new Map<string, { worker: string; at: number }>();
  readonly #now: () => number;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  handed(queueId: string, worker: string): void {
    this.#to.delete(queueId);
    this.#to.set(queueId, { worker, at: this.#now() });
    if (this.#to.size > MAX_HANDOFFS) this.#to.delete(this.#to.keys().next().value!);
  }

  /** Where the queue went, if within STAY_MS. */
  recent(queueId: string): string | null {
    const handoff = this.#to.get(queueId);
    if (handoff === undefined) return null;
    if (this.#now() - handoff.at <= STAY_MS) return handoff.worker;
    this.#to.delete(queueId);
    return null;
  }
}

/** A worker's internal listener (the writer's is workers/protocol's WRITER_SOCKET). */
export function internalSocket(dir: string, worker: string): string {
  return join(dir, `${worker}.sock`);
}

export class QueueRouter {
  readonly #self: string;
  readonly #dir: string;
  readonly #log: (line: string) => void;
  readonly #forwarders = new Map<string, FrameForwarder>();
  readonly #place: (queueId: string) => string | null;

  /**
   * `self`: this worker's name; `log`: where a broken hop is reported; `place`: the worker
   * that answers a queue's GET or DELETE /events, null for this one.
   */
  constructor(self: string, dir: string, log: (line: string) => void, place: (queueId: string) => string | null) {
    this.#place = place;
    this.#log = log;
    this.#self = self;
    this.#dir = dir;
  }

  /**
   * Takes GET and DELETE /events away to the worker `place` names (true); false for
   * everything else, and for the queues answered here. Call synchronously from the uWS handler.
   */
  route(res: HttpResponse, req: HttpRequest, head: RequestHead): boolean {
    if (head.url !== EVENTS_PATH || (head.method !== "GET" && head.method !== "DELETE")) return false;
    const queueId = new URLSearchParams(head.query).get("queue_id");
    if (queueId !== null) return this.#toOwner(res, req, head, queueId);
    if (head.method === "GET" || !carriesBody(head, req)) return false;
    this.#readThenRoute(res, req, head);
    return true;
  }

  #ownerOf(queueId: string): string {
    return this.#place(queueId) ?? this.#self;
  }

  /** Resolves once every forwarded request has been answered (or its client left). */
  async drained(): Promise<void> {
    await Promise.all([...this.#forwarders.values()].map((f) => f.drained()));
  }

  close(): void {
    for (const forwarder of this.#forwarders.values()) forwarder.close();
  }

  #toOwner(res: HttpResponse, req: HttpRequest, head: RequestHead, queueId: string): boolean {
    const owner = this.#ownerOf(queueId);
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
      const owner = queueId === null ? this.#self : this.#ownerOf(queueId);
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
