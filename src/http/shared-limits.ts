/**
 * @module http/shared-limits
 * The limits of `parley serve --workers` that hold for the whole server, kept once, in
 * the writer: the requests in progress per client address and in all
 * (http/load-limits' OpenRequests: MAX_REQUESTS_PER_ADDRESS, MAX_OPEN_REQUESTS), the
 * block of an address after failed authentication (http/auth's AuthFailureGuard) and
 * the per-user API rate limit. Everything a reader forwards reaches the writer's own
 * pipeline anyway, bodies included (a reader answers only bodiless reads itself, so the
 * writer's body budget is the server's); only the requests a reader answers need the
 * writer's counts. The reader asks over a Unix socket, one line per request, many in
 * flight on one connection:
 *
 *   "ID ADDRESS USER"  ->  "ID OUTCOME RETRY_AFTER LIMIT REMAINING RESET"
 *   "- ADDRESS"            (the request's answer went out: its slot is free)
 *
 * USER is "-" for a request without credentials (no block, no rate limit, as on a
 * single server). OUTCOME is `ok`, `limited` (rate limit), `blocked` (failed
 * authentication from the address; RETRY_AFTER: seconds), `busy-all` or
 * `busy-address` (a cap: nothing counted). The writer counts each connection's
 * requests and frees them when it closes, so a reader that dies leaks no slot.
 *
 * Why in the writer rather than a store all workers write: each decision is a read, an
 * update and a choice that must be atomic across workers; the writer's event loop makes
 * it so for free, where a shared LMDB table would cost a write transaction (and the
 * writer's lock) per read. The price is one local round trip per read (bench/workers).
 *
 * While the writer restarts, readers let reads through uncounted (and send no
 * X-RateLimit headers) rather than refuse them: the limits protect the server from a
 * flood, not data.
 */
import { connect, createServer, type Server, type Socket } from "node:net";
import { chmodSync, rmSync } from "node:fs";
import { RateLimitError } from "../engine/index.js";
import type { ServerBusyError } from "./errors.js";
import { TurnBatchedSink } from "./frames.js";
import { TOO_MANY_FROM_ADDRESS, TOO_MANY_IN_ALL, type OpenRequests } from "./load-limits.js";
import type { RateDecision, RateLimiter } from "./rate-limit.js";

/** What the writer keeps for every worker. */
export interface ServerLimits {
  readonly open: OpenRequests;
  /** Failed authentication per address (null: off, with rate limiting). */
  readonly authFailures: RateLimiter | null;
  /** The per-user limit (null: off). */
  readonly rate: RateLimiter | null;
}

/** The writer's answer for one request a reader answers. */
export interface SharedAdmission {
  /** Refused before the endpoint runs: 503 for a cap, 429 for a blocked address or the rate limit. */
  readonly refusal: ServerBusyError | RateLimitError | null;
  /** The rate limit's decision when a user was named and the limit is on (its headers go on the answer). */
  readonly rate: RateDecision | null;
  /** Call once when the answer went out: frees the request's slot (nothing when it was not counted). */
  readonly release: () => void;
}

/** A reader's side of the shared limits. */
export interface SharedLimits {
  admit(address: string, user: number | null): Promise<SharedAdmission>;
}

const RATE_HEADERS = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"] as const;

/** The writer's decision for one line "ID ADDRESS USER"; counts the request into `held` when it is let in. */
function decide(limits: ServerLimits, address: string, user: string, held: Map<string, number>): string {
  const busy = limits.open.enter(address);
  if (busy !== null) return `${busy === TOO_MANY_IN_ALL ? "busy-all" : "busy-address"} 0 - - -`;
  held.set(address, (held.get(address) ?? 0) + 1);
  if (user === "-") return "ok 0 - - -";
  const wait = limits.authFailures?.wait(address) ?? 0;
  if (wait > 0) return `blocked ${wait} - - -`;
  const userId = Number(user);
  if (limits.rate === null || !Number.isSafeInteger(userId)) return "ok 0 - - -";
  const d = limits.rate.take(userId);
  const fields = RATE_HEADERS.map((name) => d.headers.find(([n]) => n === name)?.[1] ?? "-");
  return `${d.allowed ? "ok" : "limited"} ${d.retryAfter} ${fields.join(" ")}`;
}

/** Serves `limits` to the readers on `socketPath` (only the server's user may connect). */
export function serveSharedLimits(limits: ServerLimits, socketPath: string): Promise<Server> {
  rmSync(socketPath, { force: true });
  const server = createServer((socket) => {
    // This reader's requests in progress, by address: freed together if it goes away.
    const held = new Map<string, number>();
    let pending = "";
    socket.setEncoding("utf8");
    socket.on("data", (text: string) => {
      pending += text;
      let out = "";
      let end: number;
      while ((end = pending.indexOf("\n")) >= 0) {
        const [id, address, user] = pending.slice(0, end).split(" ");
        pending = pending.slice(end + 1);
        if (id === undefined || address === undefined || address === "") continue;
        if (id === "-") {
          const count = held.get(address) ?? 0;
          if (count === 0) continue;
          if (count === 1) held.delete(address);
          else held.set(address, count - 1);
          limits.open.leave(address);
        } else if (user !== undefined) out += `${id} ${decide(limits, address, user, held)}\n`;
      }
      if (out !== "") socket.write(out);
    });
    socket.on("error", () => socket.destroy());
    socket.on("close", () => {
      for (const [address, count] of held) for (let i = 0; i < count; i++) limits.open.leave(address);
      held.clear();
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => {
      server.off("error", reject);
      chmodSync(socketPath, 0o600);
      resolve(server);
    });
  });
}

const NOTHING_TO_FREE = (): void => undefined;
const UNCOUNTED: SharedAdmission = { refusal: null, rate: null, release: NOTHING_TO_FREE };

/** A reader's view of the writer's limits. */
export class RemoteLimits implements SharedLimits {
  readonly #socketPath: string;
  #socket: Socket | null = null;
  /** The socket's writes, one system call per turn (polls answered together free their slots together). */
  #out: TurnBatchedSink | null = null;
  #nextId = 1;
  readonly #waiting = new Map<number, { address: string; socket: Socket; resolve: (a: SharedAdmission) => void }>();
  #pending = "";

  constructor(socketPath: string) {
    this.#socketPath = socketPath;
  }

  admit(address: string, user: number | null): Promise<SharedAdmission> {
    const socket = this.#connected();
    const out = this.#out!;
    const id = this.#nextId++;
    return new Promise((resolve) => {
      this.#waiting.set(id, { address, socket, resolve });
      out.write(`${id} ${address} ${user ?? "-"}\n`);
    });
  }

  close(): void {
    this.#socket?.destroy();
    this.#failAll();
  }

  #connected(): Socket {
    if (this.#socket !== null) return this.#socket;
    const socket = connect(this.#socketPath);
    socket.setEncoding("utf8");
    socket.on("data", (text: string) => this.#read(text));
    // The writer is gone (restarting): what waits goes through; the next admit reconnects.
    const lost = (): void => {
      if (this.#socket === socket) {
        this.#socket = null;
        this.#out = null;
      }
      this.#pending = "";
      this.#failAll();
    };
    socket.on("error", lost);
    socket.on("close", lost);
    this.#socket = socket;
    this.#out = new TurnBatchedSink(socket);
    return socket;
  }

  #read(text: string): void {
    this.#pending += text;
    let end: number;
    while ((end = this.#pending.indexOf("\n")) >= 0) {
      const [id, outcome, retryAfter, ...rate] = this.#pending.slice(0, end).split(" ");
      this.#pending = this.#pending.slice(end + 1);
      const waiting = this.#waiting.get(Number(id));
      if (waiting === undefined) continue;
      this.#waiting.delete(Number(id));
      waiting.resolve(this.#admission(waiting.address, waiting.socket, outcome, Number(retryAfter), rate));
    }
  }

  #admission(
    address: string,
    socket: Socket,
    outcome: string | undefined,
    retryAfter: number,
    rate: string[],
  ): SharedAdmission {
    if (outcome === "busy-all") return { ...UNCOUNTED, refusal: TOO_MANY_IN_ALL };
    if (outcome === "busy-address") return { ...UNCOUNTED, refusal: TOO_MANY_FROM_ADDRESS };
    let freed = false;
    const release = (): void => {
      // A slot counted by a writer that has since gone is not the new writer's to free.
      if (freed || this.#socket !== socket) return;
      freed = true;
      this.#out?.write(`- ${address}\n`);
    };
    if (outcome === "blocked") return { refusal: new RateLimitError(retryAfter), rate: null, release };
    const decision: RateDecision | null =
      rate[0] === "-" || rate[0] === undefined
        ? null
        : {
            allowed: outcome === "ok",
            retryAfter,
            headers: RATE_HEADERS.map((name, i) => [name, rate[i] ?? ""] as const),
          };
    const refusal = decision !== null && !decision.allowed ? new RateLimitError(retryAfter) : null;
    return { refusal, rate: decision, release };
  }

  #failAll(): void {
    for (const { resolve } of this.#waiting.values()) resolve(UNCOUNTED);
    this.#waiting.clear();
  }
}
