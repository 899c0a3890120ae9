/**
 * @module external-content/signing
 * Zulip's camo URLs: an external image is shown through
 * `/external_content/<digest>/<hex of the URL>`, where the digest is the HMAC-SHA1 of
 * the URL's UTF-8 bytes under the server's camo key (Zulip's zerver/lib/camo.py). The
 * proxy fetches only what this server signed, so it cannot be used to fetch arbitrary
 * URLs, and the same key works with a go-camo deployment.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export const EXTERNAL_CONTENT_PREFIX = "/external_content/";

/**
 * Longest URL the proxy takes. The hex form doubles it, and the whole path must stay
 * well inside a request head; markdown links longer than this are not images anyway.
 */
export const MAX_PROXIED_URL_BYTES = 2048;

const DIGEST_RE = /^[0-9a-f]{40}$/;
const HEX_RE = /^(?:[0-9a-f]{2})+$/;

function digestOf(key: string, urlBytes: Buffer): Buffer {
  return createHmac("sha1", key).update(urlBytes).digest();
}

/** The proxied path of `url` under `key`. */
export function camoPath(key: string, url: string): string {
  const bytes = Buffer.from(url, "utf8");
  return `${EXTERNAL_CONTENT_PREFIX}${digestOf(key, bytes).toString("hex")}/${bytes.toString("hex")}`;
}

/** The URL a proxied path names, or null when `key` did not sign it (or it is malformed). */
export function verifiedUrl(key: string, digest: string, hexUrl: string): string | null {
  if (!DIGEST_RE.test(digest) || hexUrl.length > 2 * MAX_PROXIED_URL_BYTES || !HEX_RE.test(hexUrl)) return null;
  const bytes = Buffer.from(hexUrl, "hex");
  if (!timingSafeEqual(digestOf(key, bytes), Buffer.from(digest, "hex"))) return null;
  return bytes.toString("utf8");
}

/**
 * The renderer's rewrite of external image URLs (MarkdownOptions.externalImageUrl):
 * the signed path, or null for a URL the proxy would refuse to take (no preview).
 */
export function signedImageUrls(key: string): (url: string) => string | null {
  return (url) => (Buffer.byteLength(url, "utf8") > MAX_PROXIED_URL_BYTES ? null : camoPath(key, url));
}
