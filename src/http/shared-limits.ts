/**
 * @module http/shared-limits
 * The limits of `parley serve --workers` that hold for the whole server, kept once, in
 * the writer: the requests in progress per client address and in all
 * (http/load-limits' OpenRequests: MAX_REQUESTS_PER_ADDRESS, MAX_OPEN_REQUESTS), the
 * block of an address after failed authentication (http/auth's AuthFailureGuard) and
 * the per-user API rate limit. Everything a reader forwards reaches the writer's own
 * pipeline anyway, bodies included (a reader answers only bodiless reads itself, so the
 * writer's body budget is the server's); only the requests a reader answers need the
 * writer's counts.
 *
 * A reader holds leases rather than asking for every request: slots of an address the
 * writer counted for it, and tokens of a user's bucket the writer took for it. A request
 * whose address has a free slot here (and whose user a token, when the writer limits
 * rates) is admitted without a word to the writer; a finished request's slot stays in
 * the lease for the next request from the address, and goes back once no request needed
 * it for LEASE_MS. Only when a lease runs out does the reader ask, over a Unix socket,
 * one line per request, many in flight on one connection:
 *
 *   "ID ADDRESS USER SLOT TOKENS"  ->  "ID OUTCOME RETRY_AFTER GRANTED LIMIT REMAINING RESET CHECKS"
 *   "- ADDRESS N"                      (N slots of the address go back)
 *   "+ USER N"                         (N tokens the reader did not use go back to the user's bucket)
 *
 * SLOT is 1 when the request needs a slot counted (0: it took a free one of the lease),
 * TOKENS 1 when it needs a token. USER is "-" for a request without credentials (no
 * block, no rate limit, as on a single server). OUTCOME is `ok`, `limited` (rate limit),
 * `blocked` (failed authentication from the address; RETRY_AFTER: seconds), `busy-all`
 * or `busy-address` (a cap: nothing counted). GRANTED is how many tokens the writer
 * took ("-": it limits no rate), at most LEASE_TOKENS and a quarter of what the bucket
 * holds, so a nearly empty bucket is shared out one token at a time; REMAINING is the
 * bucket after them. CHECKS is 1 when the writer blocks addresses for failed
 * authentication. The writer counts each connection's slots and frees them when it
 * closes, so a reader that dies leaks no slot (its unused tokens are lost: at most
 * LEASE_TOKENS per user, refilled as the bucket refills).
 *
 * How exact that is (README Workers): a cap refuses a request only when the writer's
 * count is full; that count includes the free slots of an address a reader holds, at
 * most as many as it had requests from the address in progress in the last 2 LEASE_MS. A
 * user's bucket is short by the tokens a reader holds unused (at most LEASE_TOKENS,
 * given back within LEASE_MS), and the X-RateLimit-Remaining a reader sends does not
 * see the other workers' requests since its lease. A block for failed authentication
 * reaches a reader at its next question about the address, at the latest LEASE_MS
 * after the last (an authenticated request asks again after that).
 *
 * Why in the writer rather than a store all workers write: each decision is a read, an
 * update and a choice that must be atomic across workers; the writer's event loop makes
 * it so for free, where a shared LMDB table would cost a write transaction (and the
 * writer's lock) per read. The leases keep its price (a local round trip,
 * bench/results/workers.md) off most reads.
 *
 * While the writer restarts, readers let reads through uncounted (and send no
 * X-RateLimit headers) rather than refuse them: the limits protect the server from a
 * flood, not data; the leases of the writer that went are dropped.
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
  /** An admission decided from the reader's leases comes back at once; one the writer decides, as a promise. */
  admit(address: string, user: number | null): SharedAdmission | Promise<SharedAdmission>;
}

/** Tokens a reader takes of a user's bucket at once (fewer, down to one, as the bucket empties). */
export const LEASE_TOKENS = 8;
/**
 * A reader gives back the tokens it did not use, and asks about a block again, this long after its lease;
 * slots of an address none of its requests needed for this long go back too.
 */
export const LEASE_MS = 1000;

const RATE_HEADERS = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"] as const;

function headerOf(decision: RateDecision, name: string): string {
  return decision.headers.find(([n]) => n === name)?.[1] ?? "-";
}

/** The writer's answer (after "ID ") to one question "ID ADDRESS USER SLOT TOKENS"; counts a slot into `held`. */
function decide(limits: ServerLimits, question: readonly string[], held: Map<string, number>): string {
  const [address, user, slot, tokens] = question as [string, string, string | undefined, string | undefined];
  const checks = limits.authFailures === null ? 0 : 1;
  if (slot !== "0") {
    const busy = limits.open.enter(address);
    if (busy !== null) return `${busy === TOO_MANY_IN_ALL ? "busy-all" : "busy-address"} 0 - - - - ${checks}`;
    held.set(address, (held.get(address) ?? 0) + 1);
  }
  if (user === "-") return `ok 0 - - - - ${checks}`;
  const wait = limits.authFailures?.wait(address) ?? 0;
  if (wait > 0) return `blocked ${wait} - - - - ${checks}`;
  const userId = Number(user);
  if (limits.rate === null || !Number.isSafeInteger(userId)) return `ok 0 - - - - ${checks}`;
  if (tokens === "0") return `ok 0 0 - - - ${checks}`;
  let last = limits.rate.take(userId);
  if (!last.allowed) {
    const fields = RATE_HEADERS.map((name) => headerOf(last, name)).join(" ");
    return `limited ${last.retryAfter} 0 ${fields} ${checks}`;
  }
  // A quarter of what the bucket holds at most: the tokens a lease holds unused are the other workers' shortfall.
  const want = Math.min(LEASE_TOKENS, Math.max(1, Math.floor((Number(headerOf(last, RATE_HEADERS[1])) + 1) / 4)));
  let granted = 1;
  while (granted < want) {
    const next = limits.rate.take(userId);
    if (!next.allowed) {
      limits.rate.refund(userId);
      break;
    }
    last = next;
    granted++;
  }
  return `ok 0 ${granted} ${RATE_HEADERS.map((name) => headerOf(last, name)).join(" ")} ${checks}`;
}

/** Serves `limits` to the readers on `socketPath` (only the server's user may connect). */
export function serveSharedLimits(limits: ServerLimits, socketPath: string): Promise<Server> {
  rmSync(socketPath, { force: true });
  const server = createServer((socket) => {
    // The slots this reader's leases hold, by address: freed together if it goes away.
    const held = new Map<string, number>();
    let pending = "";
    socket.setEncoding("utf8");
    socket.on("data", (text: string) => {
      pending += text;
      let out = "";
      let end: number;
      while ((end = pending.indexOf("\n")) >= 0) {
        const [id, key, ...rest] = pending.slice(0, end).split(" ");
        pending = pending.slice(end + 1);
        if (id === undefined || key === undefined || key === "") continue;
        if (id === "-") {
          const count = held.get(key) ?? 0;
          const back = Math.min(count, Number(rest[0] ?? 1) || 0);
          if (back <= 0) continue;
          if (back === count) held.delete(key);
          else held.set(key, count - back);
          for (let i = 0; i < back; i++) limits.open.leave(key);
        } else if (id === "+") {
          const userId = Number(key);
          const back = Math.min(LEASE_TOKENS, Number(rest[0] ?? 0) || 0);
          if (limits.rate !== null && Number.isSafeInteger(userId))
            for (let i = 0; i < back; i++) limits.rate.refund(userId);
        } else if (rest[0] !== undefined) out += `${id} ${decide(limits, [key, ...rest], held)}\n`;
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

/** The slots of one address the writer counted for this reader. */
interface SlotLease {
  inUse: number;
  free: number;
  /** The fewest free since the last sweep: slots no request needed in that time, given back at the next. */
  unused: number;
  /** When the writer last said whether the address is blocked (Date.now()). */
  checkedAt: number;
}

/** Tokens of one user's bucket the writer took for this reader. */
interface TokenLease {
  free: number;
  /** The bucket's X-RateLimit-* after the writer's takes (Remaining without the free tokens here). */
  limit: string;
  remaining: number;
  reset: string;
  expiresAt: number;
}

interface Waiting {
  readonly address: string;
  readonly user: number | null;
  /** The request took a free slot of the lease (else the writer counts one). */
  readonly tookSlot: boolean;
  /** The rate decision made from a token of the lease (else the writer's). */
  readonly rate: RateDecision | null;
  readonly resolve: (admission: SharedAdmission) => void;
}

/** One connection to the writer and the leases its writer granted (gone with it). */
interface Link {
  readonly socket: Socket;
  /** Its writes, one system call per turn (polls answered together free their slots together). */
  readonly out: TurnBatchedSink;
  readonly waiting: Map<number, Waiting>;
  readonly slots: Map<string, SlotLease>;
  readonly tokens: Map<number, TokenLease>;
  /** The writer limits no rate (learnt from its answers). */
  rateOff: boolean;
  /** The writer blocks addresses for failed authentication (learnt from its answers). */
  checks: boolean;
  pending: string;
}

/** A reader's view of the writer's limits, through leases (module comment). */
export class RemoteLimits implements SharedLimits {
  readonly #socketPath: string;
  readonly #now: () => number;
  #link: Link | null = null;
  #nextId = 1;
  #sweep: NodeJS.Timeout | null = null;

  constructor(socketPath: string, now: () => number = Date.now) {
    this.#socketPath = socketPath;
    this.#now = now;
  }

  admit(address: string, user: number | null): SharedAdmission | Promise<SharedAdmission> {
    const link = this.#connected();
    const now = this.#now();
    const slots = link.slots.get(address);
    const tookSlot = slots !== undefined && slots.free > 0;
    if (tookSlot) {
      slots.free--;
      slots.unused = Math.min(slots.unused, slots.free);
      slots.inUse++;
    }
    const check = user !== null && link.checks && (slots === undefined || now - slots.checkedAt >= LEASE_MS);
    const rate = user === null || link.rateOff ? null : this.#spend(link, user, now);
    const needsToken = user !== null && !link.rateOff && rate === null;
    if (tookSlot && !check && !needsToken) return { refusal: null, rate, release: this.#releaser(link, address) };
    const id = this.#nextId++;
    link.out.write(`${id} ${address} ${user ?? "-"} ${tookSlot ? 0 : 1} ${needsToken ? 1 : 0}\n`);
    return new Promise((resolve) => link.waiting.set(id, { address, user, tookSlot, rate, resolve }));
  }

  close(): void {
    const link = this.#link;
    this.#drop();
    link?.socket.destroy();
  }

  /** A token of the user's lease, as the rate decision a single server would make; null when none is left. */
  #spend(link: Link, user: number, now: number): RateDecision | null {
    const lease = link.tokens.get(user);
    if (lease === undefined) return null;
    if (lease.expiresAt <= now || lease.free === 0) {
      this.#giveBack(link, user, lease);
      return null;
    }
    lease.free--;
    return {
      allowed: true,
      retryAfter: 0,
      headers: [
        [RATE_HEADERS[0], lease.limit],
        [RATE_HEADERS[1], String(lease.remaining + lease.free)],
        [RATE_HEADERS[2], lease.reset],
      ],
    };
  }

  #giveBack(link: Link, user: number, lease: TokenLease): void {
    link.tokens.delete(user);
    if (lease.free > 0) link.out.write(`+ ${user} ${lease.free}\n`);
  }

  #releaser(link: Link, address: string): () => void {
    let freed = false;
    return () => {
      // A slot counted by a writer that has since gone is not the new writer's to free.
      if (freed || this.#link !== link) return;
      freed = true;
      const lease = link.slots.get(address);
      if (lease === undefined) return;
      lease.inUse--;
      lease.free++;
    };
  }

  /**
   * Gives back what the leases held unused since the last call: tokens past LEASE_MS, and
   * slots of an address no request needed in that time (a burst of answered long-polls
   * frees many at once; their clients poll again within milliseconds). Runs every LEASE_MS.
   */
  giveBackUnused(): void {
    const link = this.#link;
    if (link === null) return;
    const now = this.#now();
    for (const [user, lease] of link.tokens) if (lease.expiresAt <= now) this.#giveBack(link, user, lease);
    for (const [address, lease] of link.slots) {
      const back = Math.min(lease.unused, lease.free);
      if (back > 0) {
        lease.free -= back;
        link.out.write(`- ${address} ${back}\n`);
      }
      lease.unused = lease.free;
      if (lease.inUse === 0 && lease.free === 0) link.slots.delete(address);
    }
  }

  #connected(): Link {
    if (this.#link !== null) return this.#link;
    const socket = connect(this.#socketPath);
    socket.setEncoding("utf8");
    const link: Link = {
      socket,
      out: new TurnBatchedSink(socket),
      waiting: new Map(),
      slots: new Map(),
      tokens: new Map(),
      rateOff: false,
      checks: true,
      pending: "",
    };
    socket.on("data", (text: string) => this.#read(link, text));
    // The writer is gone (restarting): what waits goes through, the leases go; the next admit reconnects.
    const lost = (): void => {
      if (this.#link === link) this.#drop();
    };
    socket.on("error", lost);
    socket.on("close", lost);
    this.#link = link;
    this.#sweep ??= setInterval(() => this.giveBackUnused(), LEASE_MS);
    this.#sweep.unref();
    return link;
  }

  #drop(): void {
    const link = this.#link;
    this.#link = null;
    if (this.#sweep !== null) clearInterval(this.#sweep);
    this.#sweep = null;
    if (link === null) return;
    for (const { resolve } of link.waiting.values()) resolve(UNCOUNTED);
    link.waiting.clear();
  }

  #read(link: Link, text: string): void {
    link.pending += text;
    let end: number;
    while ((end = link.pending.indexOf("\n")) >= 0) {
      const fields = link.pending.slice(0, end).split(" ");
      link.pending = link.pending.slice(end + 1);
      const id = Number(fields[0]);
      const waiting = link.waiting.get(id);
      if (waiting === undefined) continue;
      link.waiting.delete(id);
      waiting.resolve(this.#answer(link, waiting, fields));
    }
  }

  /** The admission from the writer's answer "ID OUTCOME RETRY_AFTER GRANTED LIMIT REMAINING RESET CHECKS". */
  #answer(link: Link, waiting: Waiting, fields: readonly string[]): SharedAdmission {
    const [, outcome, retryText, granted, limit, remaining, reset, checks] = fields;
    const retryAfter = Number(retryText);
    link.checks = checks !== "0";
    if (outcome === "busy-all") return { ...UNCOUNTED, refusal: TOO_MANY_IN_ALL };
    if (outcome === "busy-address") return { ...UNCOUNTED, refusal: TOO_MANY_FROM_ADDRESS };
    const now = this.#now();
    let slots = link.slots.get(waiting.address);
    if (slots === undefined) {
      slots = { inUse: 0, free: 0, unused: 0, checkedAt: 0 };
      link.slots.set(waiting.address, slots);
    }
    if (!waiting.tookSlot) slots.inUse++;
    if (waiting.user !== null) slots.checkedAt = now;
    const release = this.#releaser(link, waiting.address);
    if (outcome === "blocked") return { refusal: new RateLimitError(retryAfter), rate: null, release };
    if (waiting.user === null || waiting.rate !== null) return { refusal: null, rate: waiting.rate, release };
    if (granted === "-") {
      link.rateOff = true;
      return { refusal: null, rate: null, release };
    }
    const headers = [
      [RATE_HEADERS[0], limit ?? ""],
      [RATE_HEADERS[1], remaining ?? ""],
      [RATE_HEADERS[2], reset ?? ""],
    ] as const;
    if (outcome !== "ok") {
      const decision: RateDecision = { allowed: false, retryAfter, headers };
      return { refusal: new RateLimitError(retryAfter), rate: decision, release };
    }
    const lease = link.tokens.get(waiting.user);
    const left = Number(remaining);
    const extra = Math.max(0, Number(granted) - 1);
    if (lease === undefined || lease.expiresAt <= now) {
      if (lease !== undefined) this.#giveBack(link, waiting.user, lease);
      link.tokens.set(waiting.user, {
        free: extra,
        limit: limit ?? "",
        remaining: left,
        reset: reset ?? "",
        expiresAt: now + LEASE_MS,
      });
    } else {
      lease.free += extra;
      lease.remaining = left;
      lease.reset = reset ?? "";
      lease.expiresAt = now + LEASE_MS;
    }
    const free = link.tokens.get(waiting.user)!.free;
    const decision: RateDecision = {
      allowed: true,
      retryAfter: 0,
      headers: [headers[0], [RATE_HEADERS[1], String(left + free)], headers[2]],
    };
    return { refusal: null, rate: decision, release };
  }
}
