/**
 * @module accounts/hash-pool
 * A bound on concurrent password hashes. scrypt runs on libuv's thread pool (4 threads
 * unless UV_THREADPOOL_SIZE says otherwise), the same pool file reads and writes use:
 * hundreds of hashes at once (a flood of join-page posts or logins) queue ahead of
 * every file download for seconds. Here at most `concurrency` hashes run at once, at
 * most `maxQueued` wait their turn, and anything beyond is refused at once with
 * HashingBusyError, so file I/O always keeps most of the threads.
 */
import { availableParallelism } from "node:os";
import { HashingBusyError } from "../errors.js";

export interface HashPoolLimits {
  /** Hashes running at once. */
  readonly concurrency: number;
  /** Hashes waiting for a slot; one more is refused. */
  readonly maxQueued: number;
}

/** libuv's thread pool size for this process (its default is 4). */
function libuvThreads(): number {
  const configured = Number.parseInt(process.env["UV_THREADPOOL_SIZE"] ?? "", 10);
  return Number.isInteger(configured) && configured > 0 ? configured : 4;
}

/**
 * At most half of libuv's threads and half of the cores (at least one): the other
 * half of the thread pool stays free for file I/O, the other cores for the event loop.
 * ~16 hashes queued per slot at ~40 ms each keeps a refused client's wait under a second.
 */
export function defaultHashPoolLimits(): HashPoolLimits {
  const concurrency = Math.max(1, Math.min(Math.floor(libuvThreads() / 2), Math.floor(availableParallelism() / 2)));
  return { concurrency, maxQueued: 16 * concurrency };
}

/** Seconds a refused client is told to wait: about what the queue takes to drain. */
const BUSY_RETRY_AFTER_SECONDS = 1;

export class HashPool {
  #limits: HashPoolLimits;
  #running = 0;
  readonly #waiting: (() => void)[] = [];
  /** Tasks started since the pool was made (tests count hashes with it). */
  started = 0;
  /** Tasks refused because the queue was full. */
  refused = 0;
  /** The most tasks seen running at once. */
  peakRunning = 0;

  constructor(limits: HashPoolLimits) {
    this.#limits = limits;
  }

  get limits(): HashPoolLimits {
    return this.#limits;
  }

  /** New limits apply to tasks that start from now on; running and queued ones are kept. */
  configure(limits: HashPoolLimits): void {
    if (!(limits.concurrency >= 1) || !(limits.maxQueued >= 0)) {
      throw new RangeError("a hash pool needs concurrency >= 1 and maxQueued >= 0");
    }
    this.#limits = limits;
    this.#startWaiting();
  }

  get running(): number {
    return this.#running;
  }

  get queued(): number {
    return this.#waiting.length;
  }

  /** Runs `task` when a slot is free; rejects with HashingBusyError, without running it, when the queue is full. */
  run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running < this.#limits.concurrency) return this.#start(task);
    if (this.#waiting.length >= this.#limits.maxQueued) {
      this.refused++;
      return Promise.reject(new HashingBusyError(BUSY_RETRY_AFTER_SECONDS));
    }
    return new Promise<T>((resolve, reject) => this.#waiting.push(() => this.#start(task).then(resolve, reject)));
  }

  #start<T>(task: () => Promise<T>): Promise<T> {
    this.#running++;
    this.started++;
    this.peakRunning = Math.max(this.peakRunning, this.#running);
    const release = (): void => {
      this.#running--;
      this.#startWaiting();
    };
    let result: Promise<T>;
    try {
      result = task();
    } catch (error) {
      result = Promise.reject(error);
    }
    return result.finally(release);
  }

  #startWaiting(): void {
    while (this.#running < this.#limits.concurrency && this.#waiting.length > 0) this.#waiting.shift()!();
  }
}

/** The process's pool: libuv's thread pool is shared by every server and store in the process. */
export const passwordHashPool = new HashPool(defaultHashPoolLimits());
