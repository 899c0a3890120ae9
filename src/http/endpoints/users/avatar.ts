/**
 * @module http/endpoints/users/avatar
 * POST /users/me/avatar (one image in a multipart body) and DELETE /users/me/avatar:
 * one's own avatar, as Zulip's set_avatar_backend / delete_avatar_backend. Zulip's
 * checks in its order: exactly one file, avatar_changes_disabled (administrators
 * exempt), the size limit (MAX_AVATAR_FILE_SIZE_MIB); then the image itself
 * (http/avatar-images). The image is stored before the record names it and removed if
 * the write fails; the image replaced is removed after. Both answer the new avatar_url.
 */
import { readFile } from "node:fs/promises";
import { BadImageError, BadRequestError } from "../../../engine/index.js";
import { emojiContentType } from "../../../emoji/images.js";
import { avatarUrl } from "../../../wire/avatar.js";
import { AvatarImageError, removeAvatarImage, resizeAvatar, storeAvatarImage } from "../../avatar-images.js";
import { defineEndpoint } from "../../endpoint.js";
import { receiveImageFiles } from "../../multipart-files.js";

export const uploadAvatarEndpoint = defineEndpoint({
  method: "POST",
  path: "/users/me/avatar",
  auth: "user",
  // Streamed like POST /user_uploads: files are never parsed into memory by the server.
  body: "stream",
  params: {},
  // test/http/avatars
  async handler(ctx) {
    const received = await receiveImageFiles(
      ctx.body,
      ctx.head.contentType,
      () => ctx.uploads.files.createTemp(ctx.realm.id, "avatar"),
      ctx.server.config.MAX_AVATAR_FILE_SIZE_MIB,
    );
    try {
      const file = received.files[0];
      if (!file || received.severalFiles || received.files.length !== 1)
        throw new BadRequestError("You must upload exactly one avatar.");
      ctx.store.checkAvatarChange(ctx.user.id);
      const dataDir = ctx.server.dataDir;
      if (dataDir === null) throw new BadRequestError("Avatar uploads are not enabled on this server");
      const contentType = emojiContentType(file.mimeType, file.filename);
      if (contentType === null) throw new BadImageError("Invalid image format");
      await file.temp.flush();
      // At most MAX_AVATAR_FILE_SIZE_MIB (≤ 25 MiB): small enough for sharp to take whole.
      const data = await readFile(file.temp.path);
      let png: Buffer;
      try {
        png = await resizeAvatar(data, contentType);
      } catch (error) {
        if (error instanceof AvatarImageError) throw new BadImageError(error.message);
        throw error;
      }
      const fileName = await storeAvatarImage(dataDir, ctx.realm.id, png);
      let changed;
      try {
        changed = ctx.store.setAvatar(ctx.user.id, fileName);
      } catch (error) {
        await removeAvatarImage(dataDir, ctx.realm.id, fileName);
        throw error;
      }
      if (changed.replaced !== null) await removeAvatarImage(dataDir, ctx.realm.id, changed.replaced);
      return { avatar_url: avatarUrl(changed.user, false) };
    } finally {
      await Promise.all(received.files.map((f) => f.temp.discard()));
    }
  },
});

export const deleteAvatarEndpoint = defineEndpoint({
  method: "DELETE",
  path: "/users/me/avatar",
  auth: "user",
  params: {},
  // test/http/avatars
  async handler(ctx) {
    const changed = ctx.store.setAvatar(ctx.user.id, null);
    const dataDir = ctx.server.dataDir;
    if (changed.replaced !== null && dataDir !== null) await removeAvatarImage(dataDir, ctx.realm.id, changed.replaced);
    return { avatar_url: avatarUrl(changed.user, false) };
  },
});
