/**
 * @module http/admission
 * The request pipeline both listeners run (uWS in http/server, Node's parser in
 * http/compat-listener), so that every listener applies the same limits:
 * 1. admit(head): from the head alone, before a byte of the body is read: count the
 *    request against the caps (http/load-limits), route it, choose its body limit and
 *    how the body is taken, and authenticate it when its credentials are in the
 *    headers (HTTP Basic). A refusal here is answered without buffering the body.
 * 2. handle(admission, body): parse, one engine call, envelope.
 * 3. finish(admission, reply): guard the head (http/response-head), log, free the
 *    request's slot; returns what the listener writes.
 */
import type { Realm, User } from "../engine/index.js";
import type { BodyMode, BodySource } from "./body-source.js";
import type { BodyBudget } from "./load-limits.js";
import type { RequestHead } from "./request.js";
import type { RequestNote } from "./request-log.js";
import type { Reply } from "./respond.js";
import type { HeaderList } from "./response-head.js";

/** Who sent the request, authenticated from its head. */
export interface Caller {
  readonly realm: Realm;
  readonly user: User;
}

export interface Admission {
  readonly head: RequestHead;
  readonly note: RequestNote;
  /** Holds a slot among the open requests (finish frees it). */
  readonly counted: boolean;
  /** Answered from the head alone (busy, bad credentials); the body is then discarded. */
  readonly refusal: Reply | null;
  readonly mode: BodyMode;
  /** The endpoint's body limit (DEFAULT_MAX_BODY_BYTES or its own), capped by the server's option. */
  readonly maxBodyBytes: number;
  /** Set when the endpoint takes credentials and the head carried valid ones. */
  readonly caller: Caller | null;
}

export interface Pipeline {
  admit(head: RequestHead): Admission;
  handle(
    admission: Admission,
    body: Buffer | BodySource,
    /** Fires when the client leaves before its answer; made on first call (most endpoints never ask). */
    signal: () => AbortSignal,
  ): Promise<{ reply: Reply; headers: HeaderList }>;
  /** Call once per admission, when the reply goes out (or the client is gone): what to write. */
  finish(
    admission: Admission,
    reply: Reply,
    headers: HeaderList,
    delivered: boolean,
  ): { reply: Reply; headers: HeaderList };
  /** Bytes of buffered bodies, shared by the listeners. */
  readonly budget: BodyBudget;
  /** Connections the compatibility listener keeps open at most (0: no cap). */
  readonly maxConnections: number;
  readonly logError: (message: string, error: unknown) => void;
}

/**
 * How long a refused request's body is still read (and dropped) before the
 * connection is closed: closing while the client still sends makes its kernel reset
 * the connection, and the client often loses the answer it had not read yet (issue
 * 26, item 5). nginx lingers likewise (lingering_time 30 s); 10 s matches the uWS
 * idle timeout, which bounds the keep-alive case there.
 */
export const LINGER_MS = 10_000;

/**
 * A refusal for load (503: a cap or the body budget) does not linger: its connection is
 * closed with the answer, body unread. Lingering would keep open the very connections it
 * refuses, and uWS would later close thousands of them in one turn of its idle-timeout
 * sweep (8,000 slow POSTs from one address: 190-350 ms of the event loop at that moment,
 * 120 ms with this). A client that loses the answer to the reset was to retry anyway.
 * 429 lingers: closing those at once cost more than it saved (the close of a socket
 * with unread data is not cheap, and they come while the flood is still arriving).
 */
export function sheds(status: number): boolean {
  return status === 503;
}

/** Resolves when `complete` does or LINGER_MS have passed, whichever is first. */
export function linger(complete: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, LINGER_MS)));
  return Promise.race([complete, deadline]).finally(() => clearTimeout(timer));
}
