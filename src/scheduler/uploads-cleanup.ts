/**
 * @module scheduler/uploads-cleanup
 * The server process's daily upload cleanup (Zulip's delete_old_unclaimed_attachments
 * cron job): uploads no message claimed within UNCLAIMED_UPLOAD_WEEKS are removed,
 * record then bytes, and abandoned resumable uploads with them; files a crash left in
 * place without a record (older than ORPHAN_GRACE_MS) go too, at start and daily.
 * Half-received temporary files are dealt with by Uploads itself when it is made
 * (tus uploads in progress resume, the rest is deleted).
 */
import type { Store } from "../engine/index.js";
import { systemClock, type Clock } from "../realtime/clock.js";
import type { Uploads } from "../uploads/index.js";

export const UPLOADS_CLEANUP_INTERVAL_MS = 24 * 3600 * 1000;

export interface UploadsCleanupOptions {
  readonly clock?: Clock;
  readonly intervalMs?: number;
  readonly onError?: (error: unknown) => void;
}

export class UploadsCleanup {
  readonly #store: Store;
  readonly #uploads: Uploads;
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #onError: (error: unknown) => void;
  #timer: unknown = null;

  constructor(store: Store, uploads: Uploads, options: UploadsCleanupOptions = {}) {
    this.#store = store;
    this.#uploads = uploads;
    this.#clock = options.clock ?? systemClock;
    this.#intervalMs = options.intervalMs ?? UPLOADS_CLEANUP_INTERVAL_MS;
    this.#onError = options.onError ?? ((error) => console.error("parley uploads cleanup:", error));
  }

  /** Waits for the recovery of uploads in progress, deletes orphans now, then runs the cleanup once per interval. */
  async start(): Promise<void> {
    if (this.#timer !== null) return;
    await this.#uploads.ready;
    await this.#uploads.removeOrphans(this.#store, this.#clock.now()).catch(this.#onError);
    const tick = () => {
      this.runOnce().catch(this.#onError);
      this.#timer = this.#clock.setTimeout(tick, this.#intervalMs);
    };
    this.#timer = this.#clock.setTimeout(tick, this.#intervalMs);
  }

  /** One round: old unclaimed uploads, abandoned tus uploads, orphan files. Returns how many files went. */
  async runOnce(): Promise<number> {
    const unclaimed = await this.#uploads.removeOldUnclaimed(this.#store);
    return unclaimed + (await this.#uploads.removeOrphans(this.#store, this.#clock.now()));
  }

  stop(): void {
    if (this.#timer !== null) this.#clock.clearTimeout(this.#timer);
    this.#timer = null;
  }
}
