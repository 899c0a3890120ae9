/**
 * @module uploads
 * Uploaded files outside the engine: bytes on disk (files), image facts and
 * thumbnails (thumbnails), temporary download tokens (tokens), resumable uploads in
 * progress (tus). `Uploads.store` turns a received temporary file into an attachment:
 * fsync, image facts, rename into place (and into a cluster's replica), then the engine's record (which checks the
 * quota); if the record is refused the file is deleted, so nothing is left on disk.
 * At construction the temporary folders a previous process left are put in order
 * (`ready`): tus uploads in progress are resumed, every other half-received file is
 * deleted, before any new temporary file is made.
 */
import { THUMBNAIL_FORMAT, type Attachment, type Store, type User } from "../engine/index.js";
import { UploadFiles, type UploadReplica } from "./files.js";
import { newPathId, sanitizeName } from "./names.js";
import type { TempFile } from "./temp-file.js";
import { readImage, Thumbnailer } from "./thumbnails.js";
import { DownloadTokens } from "./tokens.js";
import { TusUploads } from "./tus.js";

export { TempFile } from "./temp-file.js";
export { ORPHAN_GRACE_MS, UploadFiles, type UploadReplica } from "./files.js";
export { DownloadTokens, TOKEN_VALIDITY_SECONDS } from "./tokens.js";
export { MAX_TUS_UPLOADS_PER_USER, TUS_ID, TusUploads, type TusUpload } from "./tus.js";
export * from "./names.js";
export * from "./content-types.js";
export { loadSharp, sniffRasterFormat, type RasterFormat } from "./image-formats.js";

const MiB = 1024 * 1024;

/** Zulip's default window for unclaimed uploads (its delete_old_unclaimed_attachments command: 5 weeks). */
export const UNCLAIMED_UPLOAD_WEEKS = 5;

export interface UploadsOptions {
  /** DATA/uploads. */
  readonly root: string;
  /** MAX_FILE_UPLOAD_SIZE, MiB. */
  readonly maxFileMib: number;
  /** Per-realm quota in MiB, or null for none. */
  readonly realmQuotaMib: number | null;
  /** Milliseconds (temporary URLs). */
  readonly now: () => number;
  readonly onError: (message: string, error: unknown) => void;
  /** The key of temporary download URLs (default: random, this process's own). */
  readonly tokenKey?: Buffer;
  /**
   * Recover the temporary folders at start (default true). False for a reader worker of
   * `parley serve --workers`: the temporaries are the writer's uploads in progress.
   */
  readonly recover?: boolean;
  /** A cluster's copy of every file for the other nodes (files.ts's UploadReplica), or none. */
  readonly replica?: UploadReplica;
}

/** What the start's recovery found in the temporary folders. */
export interface UploadsRecovery {
  /** tus uploads in progress, resumable again. */
  readonly resumed: number;
  /** Half-received files deleted. */
  readonly removed: number;
}

export class Uploads {
  readonly files: UploadFiles;
  /** Settles once the temporary folders are recovered (never rejects: a failure is reported to onError). */
  readonly ready: Promise<UploadsRecovery>;
  readonly thumbnails: Thumbnailer;
  readonly tokens: DownloadTokens;
  readonly tus: TusUploads;
  readonly maxFileMib: number;
  readonly maxFileBytes: number;
  readonly quotaBytes: number | null;

  constructor(options: UploadsOptions) {
    this.files = new UploadFiles(options.root, options.replica ?? null);
    this.thumbnails = new Thumbnailer(this.files, (error) => options.onError("thumbnail failed", error));
    this.tokens = new DownloadTokens(options.now, undefined, options.tokenKey);
    this.tus = new TusUploads(this.files, options.now);
    this.maxFileMib = options.maxFileMib;
    this.maxFileBytes = options.maxFileMib * MiB;
    this.quotaBytes = options.realmQuotaMib === null ? null : options.realmQuotaMib * MiB;
    this.ready =
      options.recover === false
        ? Promise.resolve({ resumed: 0, removed: 0 })
        : this.#recover().catch((error: unknown) => {
            options.onError("recovering uploads in progress failed", error);
            return { resumed: 0, removed: 0 };
          });
    this.files.holdNewFilesUntil(this.ready);
  }

  async #recover(): Promise<UploadsRecovery> {
    let resumed = 0;
    let removed = 0;
    for (const { realmId, names } of await this.files.temporaries()) {
      const kept = await this.tus.restore(realmId, names);
      resumed += kept.size / 2;
      removed += await this.files.removeTemporaries(realmId, names, kept);
    }
    return { resumed, removed };
  }

  /**
   * Deletes files a crash left in place without a record (item 14 of issue #26);
   * only those older than ORPHAN_GRACE_MS, so uploads in flight are safe. Returns how many went.
   */
  async removeOrphans(store: Store, nowMs = Date.now()): Promise<number> {
    await this.ready;
    return this.files.removeOrphans(store.allAttachmentPaths(), nowMs);
  }

  /**
   * Stores a received file as `owner`'s upload named `name`: the temporary file is
   * fsynced and closed here. `strict`: sanitize the stored name to ASCII (tus).
   */
  async store(
    store: Store,
    owner: User,
    temp: TempFile,
    name: string,
    contentType: string,
    strict = false,
  ): Promise<Attachment> {
    try {
      await temp.finish();
    } catch (error) {
      await temp.discard();
      throw error;
    }
    const size = temp.written;
    try {
      store.checkUploadQuota(owner.realmId, size, this.quotaBytes);
    } catch (error) {
      await temp.discard();
      throw error;
    }
    const pathId = newPathId(owner.realmId, sanitizeName(name, strict));
    const image = await readImage(temp.path, contentType);
    try {
      await this.files.install(temp, pathId);
      // Before the record: once any node can see the attachment, every node can get its bytes.
      await this.files.replicate(pathId);
    } catch (error) {
      await temp.discard();
      await this.files.remove(pathId);
      throw error;
    }
    let attachment: Attachment;
    try {
      attachment = store.createAttachment(
        { ownerId: owner.id, pathId, name, size, contentType, image },
        this.quotaBytes,
      );
    } catch (error) {
      await this.files.remove(pathId);
      throw error;
    }
    if (image) this.thumbnails.enqueue(pathId);
    return attachment;
  }

  /**
   * The periodic cleanup (Zulip's delete_old_unclaimed_attachments): records of
   * uploads no message claimed within `weeks` go, then their bytes; abandoned tus
   * uploads too. Returns how many files were removed.
   */
  async removeOldUnclaimed(store: Store, weeks = UNCLAIMED_UPLOAD_WEEKS): Promise<number> {
    const removed = store.removeOldUnclaimedAttachments(store.now() - weeks * 7 * 86_400);
    for (const attachment of removed) await this.files.remove(attachment.pathId);
    await this.tus.expire();
    return removed.length;
  }

  /** register's server_thumbnail_formats. */
  static thumbnailFormats(): Record<string, unknown>[] {
    const f = THUMBNAIL_FORMAT;
    return [{ name: f.name, max_width: f.maxWidth, max_height: f.maxHeight, format: f.format, animated: f.animated }];
  }
}
