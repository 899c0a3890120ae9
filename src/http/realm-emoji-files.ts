/**
 * @module http/realm-emoji-files
 * Serves custom emoji images and uploaded avatars at Zulip's local-upload URLs
 * (/user_avatars/{realm_id}/emoji/images/{file}, .../images/still/{name}.png, and
 * /user_avatars/{realm_id}/{file}.png for avatars, http/avatar-images).
 * Outside /api/v1 and without authentication: Zulip serves /user_avatars/ publicly,
 * and the file names are unguessable. Each name is written once, so the files are
 * immutable.
 */
import { emojiFilePath, readEmojiFile } from "../emoji/images.js";
import { avatarFilePath } from "./avatar-images.js";
import type { Reply } from "./respond.js";

const PATH = /^\/user_avatars\/([1-9]\d{0,8})\/emoji\/images\/(still\/)?([0-9a-f]{16}\.(png|gif|jpeg|webp))$/;
/** An avatar; `?version=N` (which changes with each avatar) may follow. */
const AVATAR_PATH = /^\/user_avatars\/([1-9]\d{0,8})\/([0-9a-f]{16}\.png)(\?version=\d{1,9})?$/;
const TYPES: Readonly<Record<string, string>> = {
  png: "image/png",
  gif: "image/gif",
  jpeg: "image/jpeg",
  webp: "image/webp",
};

/**
 * Whether the URL is one of these files' (so that anything else falls through to the API router). Data exports'
 * tarballs, also under /user_avatars/ as in Zulip, are a route of their own (endpoints/exports).
 */
export function isRealmEmojiPath(url: string): boolean {
  return url.startsWith("/user_avatars/") && !url.startsWith("/user_avatars/exports/");
}

/** The reply for a GET/HEAD of an emoji image. */
export async function realmEmojiFileReply(method: string, url: string, dataDir: string | null): Promise<Reply> {
  const notFound: Reply = { status: 404, body: "Not Found", contentType: "text/plain; charset=utf-8" };
  if (dataDir === null || (method !== "GET" && method !== "HEAD")) return notFound;
  const avatar = AVATAR_PATH.exec(url);
  const match = avatar ? null : PATH.exec(url);
  if (!avatar && !match) return notFound;
  const still = match?.[2] !== undefined;
  if (match && still && match[4] !== "png") return notFound;
  const path = avatar
    ? avatarFilePath(dataDir, Number(avatar[1]), avatar[2] ?? "")
    : emojiFilePath(dataDir, Number(match?.[1]), match?.[3] ?? "", still);
  const data = path === null ? null : await readEmojiFile(path);
  if (data === null) return notFound;
  return {
    status: 200,
    body: method === "HEAD" ? "" : data,
    contentType: avatar ? "image/png" : (TYPES[match?.[4] ?? ""] ?? "application/octet-stream"),
    headers: [
      ["Cache-Control", "public, max-age=31536000, immutable"],
      ["X-Content-Type-Options", "nosniff"],
    ],
  };
}
