/**
 * @module import/upload-images
 * The image facts of an export's uploads (dimensions, animation: Zulip's ImageAttachment),
 * read from the unpacked files with the upload route's own reader before the replay, as
 * Zulip's import does: its export leaves zerver_imageattachment out ("the importer
 * cannot trust ImageAttachment objects anyway") and the importer looks at each image
 * itself. With them, imported messages render their image previews as the originals
 * did, and thumbnails are made on the first request, as for a fresh upload.
 */
import { readImage } from "../../src/uploads/thumbnails.js";
import type { ZulipExport } from "./zulip-export.js";

/** Fills data.uploadImages: path_id -> facts, for every upload whose file is an image the thumbnailer reads. */
export async function readUploadImages(data: ZulipExport): Promise<void> {
  for (const a of data.attachments) {
    const file = data.uploadFiles.get(a.path_id);
    const image = file === undefined ? null : await readImage(file, a.content_type ?? "application/octet-stream");
    if (image !== null) data.uploadImages.set(a.path_id, image);
  }
}
