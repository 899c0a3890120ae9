/**
 * Two processes serving one data directory (a reader worker making a thumbnail on first
 * view, the writer's queue making the same one) must not share a temporary file: with
 * one name, the second writer truncated the first's file and one rename found nothing.
 * Two Thumbnailers over the same directory stand for the two processes.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import sharp from "sharp";
import { afterEach, expect, it } from "vitest";
import { THUMBNAIL_FORMAT } from "../../src/engine/index.js";
import { Thumbnailer } from "../../src/uploads/thumbnails.js";
import { newPathId, UploadFiles } from "../../src/uploads/index.js";

let root: string;
afterEach(() => rmSync(root, { recursive: true, force: true }));

it("two thumbnailers making the same thumbnail at once both succeed and leave one whole file", async () => {
  root = mkdtempSync(join(tmpdir(), "parley-thumb-race-"));
  const files = new UploadFiles(root);
  const pathId = newPathId(1, "photo.png");
  const original = files.pathOf(pathId);
  mkdirSync(dirname(original), { recursive: true });
  await sharp({ create: { width: 1200, height: 900, channels: 3, background: "#3366aa" } })
    .png()
    .toFile(original);
  const errors: unknown[] = [];
  const made = await Promise.all(
    Array.from({ length: 6 }, () => new Thumbnailer(files, (e) => errors.push(e)).thumbnail(pathId)),
  );
  expect(errors).toEqual([]);
  expect(new Set(made)).toEqual(new Set([files.thumbnailPathOf(pathId, THUMBNAIL_FORMAT.name)]));
  const meta = await sharp(made[0]!).metadata();
  expect(meta.format).toBe("webp");
  expect(readdirSync(dirname(original)).filter((n) => n.endsWith(".partial"))).toEqual([]);
});
