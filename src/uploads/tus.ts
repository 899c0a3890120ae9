/**
 * @module uploads/tus
 * Resumable uploads in progress (tus 1.0 creation, offset, append, termination). Each
 * has a server-made ID, its declared length, its owner, and a temporary file that
 * bytes are appended to as they arrive; after an interrupted PATCH the offset is what
 * reached the file, and the client resumes from there. Uploads in progress live in
 * this process only: after a restart their IDs answer 404 and clients start over.
 * Uploads untouched for a day are deleted by the periodic cleanup.
 */
import { randomBytes } from "node:crypto";
import { TempFile } from "./temp-file.js";
import type { UploadFiles } from "./files.js";

/** Abandoned uploads are removed after this long without a byte (milliseconds). */
const ABANDONED_AFTER_MS = 24 * 3600 * 1000;
/**
 * Uploads one user may have in progress: each holds an open file until it completes
 * or is abandoned for a day, so without a cap a client could exhaust the server's file
 * descriptors. Far above what a client uploading in parallel uses.
 */
export const MAX_TUS_UPLOADS_PER_USER = 20;

export interface TusUpload {
  readonly id: string;
  readonly realmId: number;
  readonly ownerId: number;
  readonly length: number;
  readonly filename: string;
  readonly filetype: string;
  readonly file: TempFile;
  /** A PATCH is appending (another one must wait or be refused). */
  busy: boolean;
  touchedAt: number;
}

export class TusUploads {
  readonly #files: UploadFiles;
  readonly #now: () => number;
  readonly #uploads = new Map<string, TusUpload>();

  constructor(files: UploadFiles, now: () => number) {
    this.#files = files;
    this.#now = now;
  }

  async create(realmId: number, ownerId: number, length: number, filename: string, filetype: string): Promise<TusUpload> {
    const id = randomBytes(16).toString("hex");
    const file = await this.#files.createTusFile(realmId, id);
    const upload: TusUpload = { id, realmId, ownerId, length, filename, filetype, file, busy: false, touchedAt: this.#now() };
    this.#uploads.set(id, upload);
    return upload;
  }

  /** The upload with this ID if `userId` of `realmId` owns it (another user's answers like a missing one). */
  get(id: string, realmId: number, userId: number): TusUpload | undefined {
    const upload = this.#uploads.get(id);
    return upload && upload.realmId === realmId && upload.ownerId === userId ? upload : undefined;
  }

  /** How many uploads `userId` has in progress. */
  inProgress(userId: number): number {
    let n = 0;
    for (const upload of this.#uploads.values()) if (upload.ownerId === userId) n++;
    return n;
  }

  touch(upload: TusUpload): void {
    upload.touchedAt = this.#now();
  }

  /** Forgets a finished upload (its file was moved into place). */
  finished(upload: TusUpload): void {
    this.#uploads.delete(upload.id);
  }

  async terminate(upload: TusUpload): Promise<void> {
    this.#uploads.delete(upload.id);
    await upload.file.discard();
  }

  async expire(): Promise<void> {
    const cutoff = this.#now() - ABANDONED_AFTER_MS;
    for (const upload of [...this.#uploads.values()]) if (!upload.busy && upload.touchedAt < cutoff) await this.terminate(upload);
  }
}
