/**
 * @module uploads/temp-file
 * A file being received: chunks are appended as they arrive (coalesced into one
 * writev while the previous write is in flight), `write` reports when the caller
 * should stop feeding it (more than HIGH_WATER queued) and `onDrain` when to go on, so
 * a fast client never makes the server hold the file in memory. `finish` fsyncs
 * before the file is renamed into place.
 * A failed write (a full disk: ENOSPC, EFBIG) is sticky: from then on chunks are
 * dropped, waiters are released at once (a producer paused on onDrain would otherwise
 * wait forever: issue #26, item 9), `failure` says so, and flush/finish throw it.
 */
import { open, unlink, type FileHandle } from "node:fs/promises";

/** Bytes queued before the producer is asked to pause. */
const HIGH_WATER = 1024 * 1024;

export class TempFile {
  readonly path: string;
  readonly #handle: FileHandle;
  #queued: Buffer[] = [];
  #queuedBytes = 0;
  #inFlight: Promise<void> | null = null;
  #written = 0;
  #received = 0;
  #error: unknown = null;
  #drainWaiters: (() => void)[] = [];
  #closed = false;

  private constructor(path: string, handle: FileHandle, size: number) {
    this.path = path;
    this.#handle = handle;
    this.#written = size;
    this.#received = size;
  }

  /** A new file at `path` (which must not exist), readable and writable by the server only. */
  static async create(path: string): Promise<TempFile> {
    return new TempFile(path, await open(path, "wx", 0o600), 0);
  }

  /** An existing partial file, appended to (a resumed tus upload). */
  static async reopen(path: string, size: number): Promise<TempFile> {
    return new TempFile(path, await open(path, "r+"), size);
  }

  /** Bytes handed to write() so far. */
  get received(): number {
    return this.#received;
  }

  /** Bytes durably handed to the file system so far (a tus offset after an interruption). */
  get written(): number {
    return this.#written;
  }

  /** The write error that ended this file, or null. */
  get failure(): unknown {
    return this.#error;
  }

  /** Queues `chunk` (which the caller must not reuse); false when the caller should wait for onDrain. */
  write(chunk: Buffer): boolean {
    if (chunk.length === 0 || this.#error !== null) return true;
    this.#queued.push(chunk);
    this.#queuedBytes += chunk.length;
    this.#received += chunk.length;
    this.#pump();
    return this.#queuedBytes < HIGH_WATER;
  }

  /** Calls `fn` once the queue has room again (at once if it has). */
  onDrain(fn: () => void): void {
    if (this.#queuedBytes < HIGH_WATER || this.#error !== null) fn();
    else this.#drainWaiters.push(fn);
  }

  #pump(): void {
    if (this.#inFlight || this.#queued.length === 0 || this.#error !== null) return;
    const batch = this.#queued;
    const bytes = this.#queuedBytes;
    this.#queued = [];
    this.#queuedBytes = 0;
    this.#inFlight = this.#writeAll(batch, bytes).then(
      () => {
        this.#inFlight = null;
        this.#written += bytes;
        this.#pump();
      },
      (error: unknown) => {
        this.#inFlight = null;
        this.#error = error;
        // What is still queued will never be written.
        this.#queued = [];
        this.#queuedBytes = 0;
        const waiters = this.#drainWaiters;
        this.#drainWaiters = [];
        for (const fn of waiters) fn();
      },
    );
    const waiters = this.#drainWaiters;
    this.#drainWaiters = [];
    for (const fn of waiters) fn();
  }

  async #writeAll(buffers: Buffer[], bytes: number): Promise<void> {
    let position = this.#written;
    let done = 0;
    while (done < bytes) {
      const { bytesWritten } = await this.#handle.writev(buffers, position);
      done += bytesWritten;
      position += bytesWritten;
      if (done < bytes) buffers = remainder(buffers, bytesWritten);
    }
  }

  /** Resolves when every queued chunk is written (rejects with the first write error). */
  async flush(): Promise<void> {
    while (this.#inFlight || this.#queued.length > 0) {
      if (this.#error !== null) break;
      if (this.#inFlight) await this.#inFlight;
      else this.#pump();
    }
    if (this.#error !== null) throw this.#error;
  }

  /** Writes everything, fsyncs and closes: the bytes are on disk when this resolves. */
  async finish(): Promise<void> {
    await this.flush();
    await this.#handle.sync();
    await this.close();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#handle.close();
  }

  /** Closes and deletes the file (errors ignored: it is garbage either way). */
  async discard(): Promise<void> {
    await this.flush().catch(() => undefined);
    await this.close().catch(() => undefined);
    await unlink(this.path).catch(() => undefined);
  }
}

function remainder(buffers: Buffer[], skip: number): Buffer[] {
  const out: Buffer[] = [];
  let left = skip;
  for (const b of buffers) {
    if (left >= b.length) {
      left -= b.length;
      continue;
    }
    out.push(left > 0 ? b.subarray(left) : b);
    left = 0;
  }
  return out;
}
