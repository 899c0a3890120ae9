/**
 * @module emoji/images
 * Custom emoji images, as Zulip makes them (zerver/lib/thumbnail.py resize_emoji):
 * decoded only from PNG, GIF, JPEG, WebP, TIFF or HEIF data (libvips' other loaders,
 * SVG and PDF among them, are refused as Zulip blocks them); at most 90 million
 * pixels over all frames; a still image is cropped to its centre and scaled to 64×64
 * in the format it was uploaded as; an animated GIF or WebP stays animated, each frame
 * scaled to fit 64×64 and centred on a transparent square, with a still PNG of its
 * first frame beside it (Zulip's still_url). sharp (libvips) does the work.
 *
 * Files live under DATA/uploads/avatars/{realm}/emoji/images/ (Zulip's local upload
 * layout); each is written to a temporary name and renamed, so a reader never sees
 * half a file.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

/** Zulip's DEFAULT_EMOJI_SIZE. */
export const EMOJI_SIZE = 64;
/** Zulip's IMAGE_BOMB_TOTAL_PIXELS. */
const IMAGE_BOMB_TOTAL_PIXELS = 90_000_000;

/** The upload types Zulip takes for emoji (thumbnailable and shown inline), and each one's extension. */
export const EMOJI_CONTENT_TYPES: Readonly<Record<string, "png" | "gif" | "jpeg" | "webp">> = {
  "image/png": "png",
  "image/gif": "gif",
  "image/jpeg": "jpeg",
  "image/webp": "webp",
};
const EXTENSION_TYPES: Readonly<Record<string, string>> = {
  png: "image/png",
  gif: "image/gif",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  webp: "image/webp",
};
/** What libvips may decode here (Zulip unblocks the same loaders). */
const DECODABLE = new Set(["png", "gif", "jpeg", "webp", "tiff", "heif"]);

/** An image that cannot become an emoji; the message is Zulip's. */
export class EmojiImageError extends Error {}

/** The content type of an upload: the part's own type if Zulip takes it, else one guessed from the file name. */
export function emojiContentType(partType: string, filename: string): string | null {
  const type = partType.toLowerCase().split(";")[0]?.trim() ?? "";
  if (EMOJI_CONTENT_TYPES[type]) return type;
  const guessed = EXTENSION_TYPES[/\.([a-z0-9]+)$/i.exec(filename)?.[1]?.toLowerCase() ?? ""];
  return type === "" || type === "application/octet-stream" ? (guessed ?? null) : null;
}

export interface EmojiImage {
  readonly extension: "png" | "gif" | "jpeg" | "webp";
  readonly data: Buffer;
  /** The first frame as PNG, for animated images. */
  readonly still: Buffer | null;
}

/** Zulip's resize_emoji for an upload of `contentType` (one of EMOJI_CONTENT_TYPES). */
export async function resizeEmoji(input: Buffer, contentType: string): Promise<EmojiImage> {
  const extension = EMOJI_CONTENT_TYPES[contentType];
  if (!extension) throw new EmojiImageError("Invalid image format");
  // Loaded on first use: libvips takes most of a second to load, which every server
  // start (and every short-lived CLI command) would otherwise pay.
  const { default: sharp } = await import("sharp");
  let pages: number;
  try {
    const meta = await sharp(input, { animated: true, limitInputPixels: false }).metadata();
    if (!meta.format || !DECODABLE.has(meta.format)) throw new Error("not a permitted format");
    pages = meta.pages ?? 1;
    const frameHeight = meta.pageHeight ?? meta.height;
    if (meta.width * frameHeight * pages > IMAGE_BOMB_TOTAL_PIXELS)
      throw new EmojiImageError("Image size exceeds limit.");
  } catch (error) {
    if (error instanceof EmojiImageError) throw error;
    throw new EmojiImageError("Could not decode image; did you upload an image file?");
  }
  try {
    const still = sharp(input, { pages: 1, failOn: "error" }).resize(EMOJI_SIZE, EMOJI_SIZE, {
      fit: "cover",
      position: "centre",
    });
    if (pages === 1 || (extension !== "gif" && extension !== "webp"))
      return { extension, data: await still.toFormat(extension).toBuffer(), still: null };
    const animated = await sharp(input, { animated: true, failOn: "error" })
      .resize(EMOJI_SIZE, EMOJI_SIZE, { fit: "contain", background: { r: 0, g: 0, b: 0, alpha: 0 } })
      .toFormat(extension)
      .toBuffer();
    return { extension, data: animated, still: await still.png().toBuffer() };
  } catch {
    throw new EmojiImageError("Image is corrupted or truncated");
  }
}

/** A fresh file name: unguessable, so URLs cannot be enumerated (Zulip salts a hash for the same end). */
export function newEmojiFileName(extension: string): string {
  return `${randomBytes(8).toString("hex")}.${extension}`;
}

function imagesDir(dataDir: string, realmId: number): string {
  return join(dataDir, "uploads", "avatars", String(realmId), "emoji", "images");
}

/** The file for a request path's parts, or null for anything that is not one of ours. */
export function emojiFilePath(dataDir: string, realmId: number, fileName: string, still: boolean): string | null {
  if (!/^[0-9a-f]{16}\.(png|gif|jpeg|webp)$/.test(fileName)) return null;
  const dir = imagesDir(dataDir, realmId);
  return still ? join(dir, "still", fileName) : join(dir, fileName);
}

/** Writes the file whole or not at all (a temporary name, then a rename). */
export async function writeAtomically(path: string, data: Buffer): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    await writeFile(temporary, data);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** Stores an emoji's image (and its still, if animated) under the data directory. */
export async function storeEmojiImage(
  dataDir: string,
  realmId: number,
  fileName: string,
  image: EmojiImage,
): Promise<void> {
  const dir = imagesDir(dataDir, realmId);
  if (image.still) await writeAtomically(join(dir, "still", fileName.replace(/\.[a-z]+$/, ".png")), image.still);
  try {
    await writeAtomically(join(dir, fileName), image.data);
  } catch (error) {
    await removeEmojiImage(dataDir, realmId, fileName);
    throw error;
  }
}

/** Removes a stored image and its still (when the record could not be written). */
export async function removeEmojiImage(dataDir: string, realmId: number, fileName: string): Promise<void> {
  const dir = imagesDir(dataDir, realmId);
  await rm(join(dir, fileName), { force: true });
  await rm(join(dir, "still", fileName.replace(/\.[a-z]+$/, ".png")), { force: true });
}

/** A stored image's bytes, or null. */
export async function readEmojiFile(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path);
  } catch {
    return null;
  }
}
