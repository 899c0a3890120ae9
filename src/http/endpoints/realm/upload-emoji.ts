/**
 * @module http/endpoints/realm/upload-emoji
 * POST /realm/emoji/{emoji_name} — https://zulip.com/api/upload-custom-emoji
 * One image in a multipart body. The engine checks name, permission and file count
 * first (Zulip's order); then the size limit (MAX_EMOJI_FILE_SIZE_MIB), the format,
 * and the image itself (src/emoji/images.ts: decoded, resized to 64×64, animation
 * kept). The image is stored before the record is written and removed again if the
 * write fails, so a refused upload leaves neither.
 */
import { readFile } from "node:fs/promises";
import { BadImageError, BadRequestError } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { receiveImageFiles } from "../../multipart-files.js";
import {
  EmojiImageError,
  emojiContentType,
  newEmojiFileName,
  removeEmojiImage,
  resizeEmoji,
  storeEmojiImage,
} from "../../../emoji/images.js";

export default defineEndpoint({
  method: "POST",
  path: "/realm/emoji/:emoji_name",
  auth: "user",
  // Streamed like POST /user_uploads: files are never parsed into memory by the server.
  body: "stream",
  params: {},
  testing: {
    notRefs: {
      emoji_name:
        "custom emoji are named per realm: another realm's name is free here, and one never used answers alike " +
        "(test/http/realm-emoji.test.ts)",
    },
  },
  async handler(ctx) {
    const received = await receiveImageFiles(
      ctx.body,
      ctx.head.contentType,
      () => ctx.uploads.files.createTemp(ctx.realm.id, "emoji"),
      ctx.server.config.MAX_EMOJI_FILE_SIZE_MIB,
    );
    try {
      const name = ctx.store.checkAddRealmEmoji(
        ctx.user.id,
        ctx.pathParams["emoji_name"] ?? "",
        received.severalFiles ? Math.max(2, received.files.length) : received.files.length,
      );
      const file = received.files[0];
      if (!file) throw new BadRequestError("You must upload exactly one file.");
      const contentType = emojiContentType(file.mimeType, file.filename);
      if (contentType === null) throw new BadImageError("Invalid image format");
      const dataDir = ctx.server.dataDir;
      if (dataDir === null) throw new BadRequestError("Custom emoji uploads are not enabled on this server");
      await file.temp.flush();
      // At most MAX_EMOJI_FILE_SIZE_MIB (≤ 25 MiB): small enough for sharp to take whole.
      const data = await readFile(file.temp.path);
      let image;
      try {
        image = await resizeEmoji(data, contentType);
      } catch (error) {
        if (error instanceof EmojiImageError) throw new BadImageError(error.message);
        throw error;
      }
      const fileName = newEmojiFileName(image.extension);
      await storeEmojiImage(dataDir, ctx.realm.id, fileName, image);
      try {
        ctx.store.addRealmEmoji(ctx.user.id, { name, fileName, isAnimated: image.still !== null });
      } catch (error) {
        await removeEmojiImage(dataDir, ctx.realm.id, fileName);
        throw error;
      }
      return {};
    } finally {
      await Promise.all(received.files.map((f) => f.temp.discard()));
    }
  },
});
