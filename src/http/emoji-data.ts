/**
 * @module http/emoji-data
 * The emoji data file register's `server_emoji_data_url` points at (Zulip's
 * /static/generated/emoji/emoji_api.<hash>.json). Outside /api/v1: no auth, and
 * immutable, since its URL carries its content hash.
 */
import { EMOJI_API_HASH, EMOJI_API_JSON, EMOJI_API_PATH } from "../emoji/unicode.js";
import type { Reply } from "./respond.js";

const ETAG = `"${EMOJI_API_HASH}"`;
const CACHE_HEADERS: readonly (readonly [string, string])[] = [
  ["Cache-Control", "public, max-age=31536000, immutable"],
  ["ETag", ETAG],
  ["Access-Control-Allow-Origin", "*"],
];

/** The absolute URL register reports. */
export function emojiDataUrl(baseUrl: string): string {
  return `${baseUrl}${EMOJI_API_PATH}`;
}

/** The reply for a GET/HEAD of the file, or null when the request is for something else. */
export function emojiDataReply(method: string, url: string, ifNoneMatch: string): Reply | null {
  if (url !== EMOJI_API_PATH || (method !== "GET" && method !== "HEAD")) return null;
  if (ifNoneMatch.split(",").some((tag) => tag.trim() === ETAG || tag.trim() === "*"))
    return { status: 304, body: "", headers: CACHE_HEADERS };
  return { status: 200, body: method === "HEAD" ? "" : EMOJI_API_JSON, headers: CACHE_HEADERS };
}
