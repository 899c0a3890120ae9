/**
 * @module http/load-limits
 * What one client, or all of them, may hold of the server before a request is even
 * authenticated (issue 26, item 4: 8,000 slow unauthenticated POSTs held 2.4 GB).
 *
 * - Open requests per client address and in all: a request counts from its head to
 *   its answer (long polls included), on both listeners. The uWS build has no hook at
 *   accept time (no connection events for HTTP apps), so an excess connection is
 *   refused at its first request: 503 with Retry-After, then closed. Idle keep-alive
 *   connections hold no request: uWS closes them after its ~10 s idle timeout, and the
 *   compatibility listener caps its connections in all (Node's maxConnections).
 *   127.0.0.1 and ::1 are not capped per address unless asked: a reverse proxy on the
 *   same host makes every client one of them (the total cap still applies); other
 *   loopback addresses (127.0.0.2, ...) are capped like any client.
 * - Bytes of request bodies held in memory in all (bodies read whole before their
 *   endpoint runs; streamed uploads go to disk): past the budget a request is refused
 *   with 503 and Retry-After instead of buffering more.
 */
import { ServerBusyError } from "./errors.js";

export interface LoadLimitOptions {
  /** Requests in progress per client address (0: no cap). Default 256. */
  readonly perAddress?: number;
  /** Requests in progress in all (0: no cap). Default 10,000. */
  readonly total?: number;
  /** Bytes of buffered request bodies in all. Default 64 MiB. */
  readonly bodyBudgetBytes?: number;
  /** Apply the per-address cap to 127.0.0.1 and ::1 too (default false: see above). */
  readonly capLoopback?: boolean;
}

export const DEFAULT_MAX_REQUESTS_PER_ADDRESS = 256;
export const DEFAULT_MAX_REQUESTS = 10_000;
export const DEFAULT_BODY_BUDGET_BYTES = 64 * 1024 * 1024;
/** The addresses a reverse proxy on the same host connects from unless told otherwise. */
function isLocalProxyAddress(address: string): boolean {
  return (
    address === "127.0.0.1" ||
    address === "::1" ||
    address === "::ffff:127.0.0.1" ||
    /^0{0,4}(:0{0,4}){6}:0{0,3}1$/.test(address)
  );
}

/** The refusals OpenRequests.enter returns (http/shared-limits tells them apart). */
export const TOO_MANY_IN_ALL = new ServerBusyError("Too many requests in progress; try again shortly");
export const TOO_MANY_FROM_ADDRESS = new ServerBusyError(
  "Too many requests in progress from this address; try again shortly",
);

/** Requests in progress, per client address and in all. */
export class OpenRequests {
  readonly #perAddress: number;
  readonly #total: number;
  readonly #capLoopback: boolean;
  readonly #byAddress = new Map<string, number>();
  #open = 0;

  constructor(options: LoadLimitOptions = {}) {
    this.#perAddress = options.perAddress ?? DEFAULT_MAX_REQUESTS_PER_ADDRESS;
    this.#total = options.total ?? DEFAULT_MAX_REQUESTS;
    this.#capLoopback = options.capLoopback ?? false;
  }

  get open(): number {
    return this.#open;
  }

  /**
   * Counts a request in and returns null, or returns the refusal (nothing counted) when a
   * cap is reached. The refusals are made once: a flood meets them thousands of times a
   * second, and an error's stack trace is the dearest part of answering it.
   */
  enter(address: string): ServerBusyError | null {
    if (this.#total > 0 && this.#open >= this.#total) return TOO_MANY_IN_ALL;
    const held = this.#byAddress.get(address) ?? 0;
    if (this.#perAddress > 0 && held >= this.#perAddress && (this.#capLoopback || !isLocalProxyAddress(address))) {
      return TOO_MANY_FROM_ADDRESS;
    }
    this.#byAddress.set(address, held + 1);
    this.#open++;
    return null;
  }

  leave(address: string): void {
    const held = this.#byAddress.get(address) ?? 0;
    if (held <= 1) this.#byAddress.delete(address);
    else this.#byAddress.set(address, held - 1);
    this.#open = Math.max(0, this.#open - 1);
  }
}

/** Bytes of request bodies held in memory, against one budget for the whole server. */
export class BodyBudget {
  readonly #limit: number;
  #held = 0;

  constructor(limit: number = DEFAULT_BODY_BUDGET_BYTES) {
    this.#limit = limit;
  }

  get held(): number {
    return this.#held;
  }

  /** Takes `bytes`, or throws ServerBusyError (nothing taken) when that would pass the budget. */
  take(bytes: number): void {
    if (this.#held + bytes > this.#limit)
      throw new ServerBusyError("The server is receiving too much data; try again shortly");
    this.#held += bytes;
  }

  give(bytes: number): void {
    this.#held = Math.max(0, this.#held - bytes);
  }
}
