/**
 * @module uploads/image-formats
 * What an uploaded file really is, from its first bytes, and the sharp (libvips)
 * instance allowed to decode it. Neither the stored content type nor the name is
 * trusted (issue #26, item 8: an SVG uploaded as `x.png` was rasterized by librsvg,
 * which pulled in a neighbouring private image). Only raster formats that cannot
 * refer to other files are decoded, and three checks must agree: the magic bytes name
 * one of them, libvips' loaders for every other format (SVG, PDF, ImageMagick, its own
 * .v files, CSV/matrix text...) are blocked process-wide as Zulip blocks them, and the
 * loader libvips picked reports that same format.
 */
import { open } from "node:fs/promises";
import type { Sharp, SharpOptions } from "sharp";

export type RasterFormat = "png" | "jpeg" | "gif" | "webp" | "avif" | "tiff";

/** Bytes enough for every signature below (an ISO-BMFF `ftyp` box lists its brands within its first few dozen). */
const SNIFF_BYTES = 64;

/** The raster format these bytes start with, or null for anything else (SVG, HTML, PDF, HEIC...). */
export function sniffRasterFormat(head: Buffer): RasterFormat | null {
  const ascii = (from: number, to: number) => head.toString("latin1", from, to);
  if (head.length >= 8 && head.readUInt32BE(0) === 0x89504e47 && head.readUInt32BE(4) === 0x0d0a1a0a) return "png";
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return "jpeg";
  if (ascii(0, 6) === "GIF87a" || ascii(0, 6) === "GIF89a") return "gif";
  if (ascii(0, 4) === "RIFF" && ascii(8, 12) === "WEBP") return "webp";
  if (ascii(0, 4) === "II*\0" || ascii(0, 4) === "MM\0*") return "tiff";
  if (ascii(4, 8) === "ftyp" && head.length >= 16) {
    const boxEnd = Math.min(head.readUInt32BE(0), head.length);
    // The major brand, then (after the minor version) the compatible brands.
    const brands = [ascii(8, 12)];
    for (let at = 16; at + 4 <= boxEnd; at += 4) brands.push(ascii(at, at + 4));
    if (brands.includes("avif") || brands.includes("avis")) return "avif";
  }
  return null;
}

/** The raster format of the file at `path` by its magic bytes, or null. */
export async function sniffFile(path: string): Promise<RasterFormat | null> {
  const handle = await open(path, "r");
  try {
    const head = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(head, 0, SNIFF_BYTES, 0);
    return sniffRasterFormat(head.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

/** The name sharp's metadata() gives each format (AVIF is read by the HEIF loader). */
export const SHARP_FORMAT: Readonly<Record<RasterFormat, string>> = {
  png: "png",
  jpeg: "jpeg",
  gif: "gif",
  webp: "webp",
  avif: "heif",
  tiff: "tiff",
};

/**
 * The libvips loaders left unblocked (each name covers its File, Buffer and Source
 * variants): Zulip's list. Custom emoji (src/emoji/images.ts) decode the same formats.
 */
const ALLOWED_LOADERS = [
  "VipsForeignLoadJpeg",
  "VipsForeignLoadPng",
  "VipsForeignLoadNsgif",
  "VipsForeignLoadWebp",
  "VipsForeignLoadHeif",
  "VipsForeignLoadTiff",
];

type SharpFactory = (input: string, options: SharpOptions) => Sharp;

let loaded: Promise<SharpFactory> | null = null;

/**
 * sharp, loaded on first use (loading libvips costs a noticeable part of a second,
 * which a server start should not pay before it has an image), with every loader but
 * ALLOWED_LOADERS blocked. Its operation cache is off: each file is read once, and a
 * cache would only keep decoded pixels in memory. One libvips worker thread per
 * image: thumbnails are made one at a time off the request path, and each thread
 * costs a malloc arena.
 */
export function loadSharp(): Promise<SharpFactory> {
  loaded ??= import("sharp").then(({ default: sharp }) => {
    sharp.block({ operation: ["VipsForeignLoad"] });
    sharp.unblock({ operation: ALLOWED_LOADERS });
    sharp.cache(false);
    sharp.concurrency(1);
    return (input: string, options: SharpOptions) => sharp(input, options);
  });
  return loaded;
}
