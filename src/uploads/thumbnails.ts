/**
 * @module uploads/thumbnails
 * Image facts and previews with sharp (libvips, from its prebuilt package), for raster
 * files only (uploads/image-formats decides what a file is). At upload
 * only the header is read (dimensions, frames: Zulip's ImageAttachment); thumbnails
 * are made afterwards, off the request path, by a small queue working one image at a
 * time, so a burst of uploads never competes with requests for both cores. A request
 * for a thumbnail not made yet waits for it (Zulip renders a missing current format on
 * demand too).
 */
import { randomBytes } from "node:crypto";
import { rename, stat } from "node:fs/promises";
import type { Sharp } from "sharp";
import { THUMBNAIL_FORMAT, type AttachmentImage } from "../engine/index.js";
import { isThumbnailInputType } from "./content-types.js";
import type { UploadFiles } from "./files.js";
import { loadSharp, SHARP_FORMAT, sniffFile } from "./image-formats.js";

/** Zulip refuses to thumbnail images over this many pixels (decompression bombs). */
const MAX_PIXELS = 128 * 1024 * 1024;

/**
 * A sharp pipeline over the file at `path`, or null when it is not a raster image
 * this server decodes: its magic bytes must name an allowed format and libvips must
 * read it as that same format (see uploads/image-formats).
 */
async function openRaster(
  path: string,
): Promise<{ image: Sharp; width: number; height: number; pages: number; pageHeight: number } | null> {
  const format = await sniffFile(path).catch(() => null);
  if (format === null) return null;
  const image = (await loadSharp())(path, { limitInputPixels: MAX_PIXELS });
  const meta = await image.metadata();
  if (meta.format !== SHARP_FORMAT[format] || !meta.width || !meta.height) return null;
  // For animated images libvips reports the height of all frames stacked unless asked per page.
  return {
    image,
    width: meta.width,
    height: meta.height,
    pages: meta.pages ?? 1,
    pageHeight: meta.pageHeight ?? meta.height,
  };
}

/** The image facts of a stored file, or null if it is not an image the thumbnailer reads. */
export async function readImage(path: string, contentType: string): Promise<AttachmentImage | null> {
  // Zulip does not parse the bytes of a file that does not claim to be an image it thumbnails.
  if (!isThumbnailInputType(contentType)) return null;
  try {
    const raster = await openRaster(path);
    return raster && { width: raster.width, height: raster.pageHeight, animated: raster.pages > 1 };
  } catch {
    return null;
  }
}

export class Thumbnailer {
  readonly #files: UploadFiles;
  readonly #onError: (error: unknown) => void;
  /** pathId -> the job making its thumbnail (pending or done). */
  readonly #jobs = new Map<string, Promise<string | null>>();
  #chain: Promise<unknown> = Promise.resolve();

  constructor(files: UploadFiles, onError: (error: unknown) => void) {
    this.#files = files;
    this.#onError = onError;
  }

  /** Queues the thumbnail of a stored image; returns at once. */
  enqueue(pathId: string): void {
    if (this.#jobs.has(pathId)) return;
    const job = this.#chain.then(() => this.#make(pathId));
    this.#chain = job.catch(() => undefined);
    this.#jobs.set(pathId, job);
    // Finished jobs are forgotten: the file on disk is the record from then on.
    void job.finally(() => this.#jobs.delete(pathId));
  }

  /** The thumbnail's disk path, made now (in the queue) if it does not exist yet; null if none can be made. */
  async thumbnail(pathId: string): Promise<string | null> {
    const target = this.#files.thumbnailPathOf(pathId, THUMBNAIL_FORMAT.name);
    if (await exists(target)) return target;
    const pending = this.#jobs.get(pathId);
    if (pending) return pending;
    this.enqueue(pathId);
    return this.#jobs.get(pathId) ?? ((await exists(target)) ? target : null);
  }

  /** Whether the thumbnail is made (GET /thumbnail/status): asks, never starts one. */
  async made(pathId: string): Promise<boolean> {
    return exists(this.#files.thumbnailPathOf(pathId, THUMBNAIL_FORMAT.name));
  }

  /** Resolves when every queued thumbnail is done (tests, shutdown). */
  async idle(): Promise<void> {
    await this.#chain;
  }

  async #make(pathId: string): Promise<string | null> {
    const target = this.#files.thumbnailPathOf(pathId, THUMBNAIL_FORMAT.name);
    if (await exists(target)) return target;
    // Its own name per attempt: a reader worker making a thumbnail on first view may race
    // the writer's queue making the same one; each writes its own file, and each rename
    // replaces the target whole.
    const partial = `${target}.${randomBytes(6).toString("hex")}.partial`;
    try {
      // Checked again here: records stored before the magic bytes were checked may name an SVG as an image.
      if (!(await this.#files.ensureLocal(pathId))) return null;
      const raster = await openRaster(this.#files.pathOf(pathId));
      if (raster === null) return null;
      await raster.image
        .rotate()
        .resize({
          width: THUMBNAIL_FORMAT.maxWidth,
          height: THUMBNAIL_FORMAT.maxHeight,
          fit: "inside",
          withoutEnlargement: true,
        })
        .webp({ quality: 80 })
        .toFile(partial);
      await rename(partial, target);
      return target;
    } catch (error) {
      this.#onError(error);
      return null;
    }
  }
}

function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
