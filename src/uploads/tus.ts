/**
 * @module uploads/tus
 * Resumable uploads in progress (tus 1.0 creation, offset, append, termination). Each
 * has a server-made ID, its declared length, its owner, and a temporary file that
 * bytes are appended to as they arrive; after an interrupted PATCH the offset is what
 * reached the file, and the client resumes from there.
 *
 * Uploads in progress survive a restart (a deploy, or kill -9): at creation their
 * facts are written durably to a small JSON sidecar next to the temporary file
 * (DATA/uploads/<realm>/tmp/tus-<id>.json); at start `restore` reopens every upload
 * whose sidecar and file are both there, its offset being the file's size. The file's
 * modification time is when it was last touched, so a PATCH costs no sidecar write.
 * Uploads untouched for a day are deleted by the periodic cleanup.
 */
import { randomBytes } from "node:crypto";
import { readFile, stat, unlink } from "node:fs/promises";
import { z } from "zod";
import { contentTypeFor } from "./content-types.js";
import { TempFile } from "./temp-file.js";
import { writeFileDurably, type UploadFiles } from "./files.js";

/** Abandoned uploads are removed after this long without a byte (milliseconds). */
const ABANDONED_AFTER_MS = 24 * 3600 * 1000;
/**
 * Uploads one user may have in progress: each holds an open file until it completes
 * or is abandoned for a day, so without a cap a client could exhaust the server's file
 * descriptors. Far above what a client uploading in parallel uses.
 */
export const MAX_TUS_UPLOADS_PER_USER = 20;

export const TUS_ID = /^[0-9a-f]{32}$/;

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

const sidecarSchema = z.object({
  version: z.literal(1),
  id: z.string().regex(TUS_ID),
  realmId: z.number().int().nonnegative(),
  ownerId: z.number().int().nonnegative(),
  length: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  filename: z.string().max(4096),
  filetype: z.string().max(255),
  createdAt: z.number(),
});
type Sidecar = z.infer<typeof sidecarSchema>;

export class TusUploads {
  readonly #files: UploadFiles;
  readonly #now: () => number;
  readonly #uploads = new Map<string, TusUpload>();

  constructor(files: UploadFiles, now: () => number) {
    this.#files = files;
    this.#now = now;
  }

  async create(
    realmId: number,
    ownerId: number,
    length: number,
    filename: string,
    filetype: string,
  ): Promise<TusUpload> {
    const id = randomBytes(16).toString("hex");
    const file = await this.#files.createTusFile(realmId, id);
    const touchedAt = this.#now();
    const sidecar: Sidecar = { version: 1, id, realmId, ownerId, length, filename, filetype, createdAt: touchedAt };
    try {
      await writeFileDurably(this.#files.tusSidecarPath(realmId, id), JSON.stringify(sidecar));
    } catch (error) {
      await file.discard();
      throw error;
    }
    const upload: TusUpload = { id, realmId, ownerId, length, filename, filetype, file, busy: false, touchedAt };
    this.#uploads.set(id, upload);
    return upload;
  }

  /**
   * Reopens the uploads a previous process left in progress in `realmId`'s temporary
   * folder, given the names found there; returns the names it kept (the rest is
   * garbage for the caller to delete).
   */
  async restore(realmId: number, names: readonly string[]): Promise<Set<string>> {
    const kept = new Set<string>();
    const present = new Set(names);
    for (const name of names) {
      const id = /^tus-([0-9a-f]{32})\.json$/.exec(name)?.[1];
      if (id === undefined || !present.has(`tus-${id}`) || this.#uploads.has(id)) continue;
      const upload = await this.#reopen(realmId, id).catch(() => null);
      if (upload === null) continue;
      this.#uploads.set(id, upload);
      kept.add(name).add(`tus-${id}`);
    }
    return kept;
  }

  async #reopen(realmId: number, id: string): Promise<TusUpload | null> {
    const parsed = sidecarSchema.safeParse(JSON.parse(await readFile(this.#files.tusSidecarPath(realmId, id), "utf8")));
    if (!parsed.success || parsed.data.id !== id || parsed.data.realmId !== realmId) return null;
    const meta = parsed.data;
    const path = this.#files.tusPath(realmId, id);
    const facts = await stat(path);
    if (!facts.isFile() || facts.size > meta.length) return null;
    const file = await TempFile.reopen(path, facts.size);
    return {
      id,
      realmId,
      ownerId: meta.ownerId,
      length: meta.length,
      filename: meta.filename,
      // Through the parser again: a sidecar is data on disk like any other.
      filetype: contentTypeFor(meta.filetype, meta.filename),
      file,
      busy: false,
      touchedAt: Math.max(meta.createdAt, facts.mtimeMs),
    };
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

  /** Forgets a finished upload (its file is about to be moved into place). */
  async finished(upload: TusUpload): Promise<void> {
    this.#uploads.delete(upload.id);
    await this.#removeSidecar(upload);
  }

  async terminate(upload: TusUpload): Promise<void> {
    this.#uploads.delete(upload.id);
    await upload.file.discard();
    await this.#removeSidecar(upload);
  }

  async #removeSidecar(upload: TusUpload): Promise<void> {
    await unlink(this.#files.tusSidecarPath(upload.realmId, upload.id)).catch(() => undefined);
  }

  async expire(): Promise<void> {
    const cutoff = this.#now() - ABANDONED_AFTER_MS;
    for (const upload of [...this.#uploads.values()])
      if (!upload.busy && upload.touchedAt < cutoff) await this.terminate(upload);
  }
}
