/**
 * @module http/shared-limits
 * The per-user API rate limit of `parley serve --workers`, kept once, in the writer.
 * Writes reach the writer anyway (readers forward them), so only the reads a reader
 * answers itself need the writer's count: the reader asks over a Unix socket, one line
 * per request ("ID USER" -> "ID ALLOWED RETRY_AFTER LIMIT REMAINING RESET"), many in
 * flight on one connection.
 *
 * Why in the writer rather than a store all workers write: a bucket's take is a read,
 * an update and a decision that must be atomic across workers; the writer's event loop
 * makes it so for free, where a shared LMDB table would cost a write transaction (and
 * the writer's lock) per read. The price is one local round trip per read (bench/workers).
 *
 * While the writer restarts, readers let reads through unlimited (and send no
 * X-RateLimit headers) rather than refuse them: the limit protects the server from a
 * flood, not data.
 */
import { connect, createServer, type Server, type Socket } from "node:net";
import { chmodSync, rmSync } from "node:fs";
import type { RateDecision, RateLimiter } from "./rate-limit.js";
import type { SharedRateLimiter } from "./server.js";

/** Serves `limiter` to the readers on `socketPath` (only the server's user may connect). */
export function serveRateLimits(limiter: RateLimiter, socketPath: string): Promise<Server> {
  rmSync(socketPath, { force: true });
  const server = createServer((socket) => {
    let pending = "";
    socket.setEncoding("utf8");
    socket.on("data", (text: string) => {
      pending += text;
      let out = "";
      let end: number;
      while ((end = pending.indexOf("\n")) >= 0) {
        const [id, key] = pending.slice(0, end).split(" ");
        pending = pending.slice(end + 1);
        const user = Number(key);
        if (id === undefined || !Number.isSafeInteger(user)) continue;
        const d = limiter.take(user);
        const header = (name: string): string => d.headers.find(([n]) => n === name)?.[1] ?? "";
        const fields = [header("X-RateLimit-Limit"), header("X-RateLimit-Remaining"), header("X-RateLimit-Reset")];
        out += `${id} ${d.allowed ? 1 : 0} ${d.retryAfter} ${fields.join(" ")}\n`;
      }
      if (out !== "") socket.write(out);
    });
    socket.on("error", () => socket.destroy());
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

const UNLIMITED: RateDecision = { allowed: true, retryAfter: 0, headers: [] };

/** A reader's view of the writer's limiter. */
export class RemoteRateLimiter implements SharedRateLimiter {
  readonly #socketPath: string;
  #socket: Socket | null = null;
  #nextId = 1;
  readonly #waiting = new Map<number, (decision: RateDecision) => void>();
  #pending = "";

  constructor(socketPath: string) {
    this.#socketPath = socketPath;
  }

  take(key: number): Promise<RateDecision> {
    const socket = this.#connected();
    const id = this.#nextId++;
    return new Promise((resolve) => {
      this.#waiting.set(id, resolve);
      socket.write(`${id} ${key}\n`);
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
    // The writer is gone (restarting): what waits goes through; the next take reconnects.
    const lost = (): void => {
      if (this.#socket === socket) this.#socket = null;
      this.#pending = "";
      this.#failAll();
    };
    socket.on("error", lost);
    socket.on("close", lost);
    this.#socket = socket;
    return socket;
  }

  #read(text: string): void {
    this.#pending += text;
    let end: number;
    while ((end = this.#pending.indexOf("\n")) >= 0) {
      const [id, allowed, retryAfter, limit, remaining, reset] = this.#pending.slice(0, end).split(" ");
      this.#pending = this.#pending.slice(end + 1);
      const resolve = this.#waiting.get(Number(id));
      if (resolve === undefined) continue;
      this.#waiting.delete(Number(id));
      resolve({
        allowed: allowed === "1",
        retryAfter: Number(retryAfter),
        headers: [
          ["X-RateLimit-Limit", limit ?? ""],
          ["X-RateLimit-Remaining", remaining ?? ""],
          ["X-RateLimit-Reset", reset ?? ""],
        ],
      });
    }
  }

  #failAll(): void {
    for (const resolve of this.#waiting.values()) resolve(UNLIMITED);
    this.#waiting.clear();
  }
}
