/**
 * @module http/endpoints/realm/upload-emoji
 * POST /realm/emoji/{emoji_name} — https://zulip.com/api/upload-custom-emoji
 * One image in a multipart body. The engine checks name, permission and file count
 * first (Zulip's order); then the size limit (MAX_EMOJI_FILE_SIZE_MIB), the format,
 * and the image itself (src/emoji/images.ts: decoded, resized to 64×64, animation
 * kept). The image is stored before the record is written and removed again if the
 * write fails, so a refused upload leaves neither.
 */
import { BadImageError, BadRequestError } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { EmojiImageError, emojiContentType, newEmojiFileName, removeEmojiImage, resizeEmoji, storeEmojiImage } from "../../../emoji/images.js";

/** The config's MAX_EMOJI_FILE_SIZE_MIB tops out at 25; the rest is multipart framing. */
const MAX_BODY_BYTES = 25 * 1024 * 1024 + 64 * 1024;

export default defineEndpoint({
  method: "POST",
  path: "/realm/emoji/:emoji_name",
  auth: "user",
  params: {},
  maxBodyBytes: MAX_BODY_BYTES,
  async handler(ctx) {
    const name = ctx.store.checkAddRealmEmoji(ctx.user.id, ctx.pathParams["emoji_name"] ?? "", ctx.files.length);
    const file = ctx.files[0];
    if (!file) throw new BadRequestError("You must upload exactly one file.");
    const limitMib = ctx.server.config.MAX_EMOJI_FILE_SIZE_MIB;
    if (file.data.length > limitMib * 1024 * 1024) throw new BadRequestError(`Uploaded file is larger than the allowed limit of ${limitMib} MiB`);
    const contentType = emojiContentType(file.mimeType, file.filename);
    if (contentType === null) throw new BadImageError("Invalid image format");
    const dataDir = ctx.server.dataDir;
    if (dataDir === null) throw new BadRequestError("Custom emoji uploads are not enabled on this server");
    let image;
    try {
      image = await resizeEmoji(file.data, contentType);
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
  },
});
