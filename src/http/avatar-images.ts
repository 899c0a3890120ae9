/**
 * @module http/avatar-images
 * Uploaded avatars, as Zulip's local storage keeps them: the first frame cropped to its
 * centre and scaled to 100×100 (Zulip's DEFAULT_AVATAR_SIZE), stored as PNG under
 * DATA/uploads/avatars/{realm}/{random}.png and served publicly at
 * /user_avatars/{realm}/{random}.png (http/realm-emoji-files). Decoding follows the
 * custom emoji's rules (emoji/images: the same formats, the same pixel bound). Each
 * upload gets a new unguessable name, so a file never changes once written.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { EmojiImageError, newEmojiFileName, resizeEmoji, writeAtomically } from "../emoji/images.js";

/** Zulip's DEFAULT_AVATAR_SIZE. */
export const AVATAR_SIZE = 100;
const FILE_NAME = /^[0-9a-f]{16}\.png$/;

/** An image that cannot be an avatar; the message is Zulip's. */
export class AvatarImageError extends Error {}

/** The image as a 100×100 PNG; AvatarImageError with Zulip's reason when it is no usable image. */
export async function resizeAvatar(input: Buffer, contentType: string): Promise<Buffer> {
  try {
    // The emoji path checks format and size and decodes; its 64 px result is not used.
    await resizeEmoji(input, contentType);
  } catch (error) {
    if (error instanceof EmojiImageError) throw new AvatarImageError(error.message);
    throw error;
  }
  const { default: sharp } = await import("sharp");
  try {
    return await sharp(input, { pages: 1, failOn: "error" })
      .resize(AVATAR_SIZE, AVATAR_SIZE, { fit: "cover", position: "centre" })
      .png()
      .toBuffer();
  } catch {
    throw new AvatarImageError("Image is corrupted or truncated");
  }
}

export function avatarFilePath(dataDir: string, realmId: number, fileName: string): string | null {
  return FILE_NAME.test(fileName) ? join(dataDir, "uploads", "avatars", String(realmId), fileName) : null;
}

/** Stores the image under a new name and returns the name. */
export async function storeAvatarImage(dataDir: string, realmId: number, png: Buffer): Promise<string> {
  const fileName = newEmojiFileName("png");
  await writeAtomically(avatarFilePath(dataDir, realmId, fileName)!, png);
  return fileName;
}

export async function removeAvatarImage(dataDir: string, realmId: number, fileName: string): Promise<void> {
  const path = avatarFilePath(dataDir, realmId, fileName);
  if (path !== null) await rm(path, { force: true });
}
