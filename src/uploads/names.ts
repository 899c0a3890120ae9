/**
 * @module uploads/names
 * File names as Zulip derives them: the stored name sanitized by its sanitize_name
 * (strict for tus), the path_id layout, and the Content-Disposition of a download.
 * Content types are uploads/content-types' business.
 */
import { randomBytes } from "node:crypto";

/** Most file systems limit a path component to 255 bytes (Zulip's MAX_FILE_NAME_LENGTH). */
export const MAX_FILE_NAME_BYTES = 255;

/** Cuts a name to `max` UTF-8 bytes, keeping its extension when that leaves room for the rest. */
export function truncateFileName(name: string, max: number): string {
  if (Buffer.byteLength(name) <= max) return name;
  const dot = name.lastIndexOf(".");
  let stem = dot > 0 ? name.slice(0, dot) : name;
  let extension = dot > 0 ? name.slice(dot) : "";
  if (Buffer.byteLength(extension) >= max) {
    stem = name;
    extension = "";
  }
  const room = max - Buffer.byteLength(extension);
  // Cutting the encoded bytes may split a character; the decoder drops the partial one.
  const cut = new TextDecoder("utf-8", { fatal: false })
    .decode(Buffer.from(stem).subarray(0, room))
    .replace(/\uFFFD$/, "");
  return cut + extension;
}

/**
 * Zulip's sanitize_name: NFKC, only word characters, whitespace, "." and "-" kept,
 * trimmed, runs of whitespace and "-" made one "-", case kept, at most 255 bytes;
 * "", "." and ".." become "uploaded-file". `strict` (tus) first keeps ASCII only.
 */
export function sanitizeName(value: string, strict = false): string {
  let out = strict
    ? value.replace(/[^A-Za-z0-9_ .-]/g, "").trim()
    : value
        .normalize("NFKC")
        .replace(/[^\p{L}\p{N}_\s.-]/gu, "")
        .trim();
  out = out.replace(/[-\s]+/g, "-");
  out = truncateFileName(out, MAX_FILE_NAME_BYTES);
  return out === "" || out === "." || out === ".." ? "uploaded-file" : out;
}

/** The name a client sent, as Zulip keeps it: URL-unquoted (when that decodes) and without NUL bytes. */
export function originalName(raw: string): string {
  let name = raw;
  try {
    name = decodeURIComponent(raw);
  } catch {
    // Python's unquote leaves malformed escapes as they are.
  }
  return name.replace(/\0/g, "");
}

/** A fresh path_id: `<realm>/<2 hex>/<24 random URL-safe characters>/<sanitized name>`. */
export function newPathId(realmId: number, sanitizedName: string): string {
  return `${realmId}/${randomBytes(1).toString("hex")}/${randomBytes(18).toString("base64url")}/${sanitizedName}`;
}

/** RFC 6266 Content-Disposition with an RFC 5987 `filename*` for names that are not plain ASCII. */
export function contentDisposition(kind: "inline" | "attachment", name: string): string {
  const ascii = /^[\x20-\x7e]*$/.test(name) && !/["\\]/.test(name);
  if (ascii) return `${kind}; filename="${name}"`;
  const fallback = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}
