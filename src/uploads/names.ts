/**
 * @module uploads/names
 * File names and types as Zulip derives them: the stored name sanitized by its
 * sanitize_name (strict for tus), the path_id layout, the content type from the part
 * or the name, and which types may be shown inline.
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
  const cut = new TextDecoder("utf-8", { fatal: false }).decode(Buffer.from(stem).subarray(0, room)).replace(/\uFFFD$/, "");
  return cut + extension;
}

/**
 * Zulip's sanitize_name: NFKC, only word characters, whitespace, "." and "-" kept,
 * trimmed, runs of whitespace and "-" made one "-", case kept, at most 255 bytes;
 * "", "." and ".." become "uploaded-file". `strict` (tus) first keeps ASCII only.
 */
export function sanitizeName(value: string, strict = false): string {
  let out = strict ? value.replace(/[^A-Za-z0-9_ .-]/g, "").trim() : value.normalize("NFKC").replace(/[^\p{L}\p{N}_\s.-]/gu, "").trim();
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

const TYPES_BY_EXTENSION: Readonly<Record<string, string>> = {
  apng: "image/apng", avif: "image/avif", bmp: "image/bmp", gif: "image/gif", heic: "image/heic", ico: "image/vnd.microsoft.icon", jpe: "image/jpeg", jpeg: "image/jpeg", jpg: "image/jpeg",
  png: "image/png", svg: "image/svg+xml", tif: "image/tiff", tiff: "image/tiff", webp: "image/webp",
  aac: "audio/aac", flac: "audio/flac", m4a: "audio/mp4", mp3: "audio/mpeg", oga: "audio/ogg", ogg: "audio/ogg", opus: "audio/ogg", wav: "audio/wav", weba: "audio/webm",
  mp4: "video/mp4", m4v: "video/mp4", mov: "video/quicktime", ogv: "video/ogg", webm: "video/webm", mkv: "video/x-matroska", avi: "video/x-msvideo",
  txt: "text/plain", log: "text/plain", md: "text/markdown", csv: "text/csv", htm: "text/html", html: "text/html", css: "text/css", js: "text/javascript", xml: "text/xml",
  json: "application/json", pdf: "application/pdf", zip: "application/zip", gz: "application/gzip", tar: "application/x-tar", "7z": "application/x-7z-compressed",
  doc: "application/msword", docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", xls: "application/vnd.ms-excel",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", ppt: "application/vnd.ms-powerpoint", pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  odt: "application/vnd.oasis.opendocument.text", ods: "application/vnd.oasis.opendocument.spreadsheet", py: "text/x-python", sh: "application/x-sh",
};

/** Zulip's get_file_info: the part's own type, else a guess from the name, else application/octet-stream. */
export function contentTypeFor(partType: string, name: string): string {
  const given = partType.trim();
  // busboy reports a part without Content-Type as application/octet-stream: guess then, as Zulip does for an empty type.
  if (given !== "" && given.toLowerCase() !== "application/octet-stream") return given.slice(0, 255);
  const extension = name.slice(name.lastIndexOf(".") + 1).toLowerCase();
  return (name.includes(".") ? TYPES_BY_EXTENSION[extension] : undefined) ?? "application/octet-stream";
}

/** Zulip's INLINE_MIME_TYPES: types a browser may show in place; everything else (HTML, SVG...) is served as an attachment. */
const INLINE_TYPES: ReadonlySet<string> = new Set([
  "application/pdf", "audio/aac", "audio/flac", "audio/mp4", "audio/mpeg", "audio/ogg", "audio/wav", "audio/webm", "audio/x-wav",
  "image/apng", "image/avif", "image/gif", "image/jpeg", "image/png", "image/webp", "text/plain", "video/mp4", "video/ogg", "video/quicktime", "video/webm",
]);

/** The type without parameters, lowercased. */
export function bareType(contentType: string): string {
  return contentType.split(";")[0]!.trim().toLowerCase();
}

export function isInlineType(contentType: string): boolean {
  return INLINE_TYPES.has(bareType(contentType));
}

/** Types the thumbnailer reads (Zulip's THUMBNAIL_ACCEPT_IMAGE_TYPES, as far as the bundled libvips reads them). */
export const THUMBNAIL_INPUT_TYPES: ReadonlySet<string> = new Set(["image/avif", "image/gif", "image/jpeg", "image/png", "image/tiff", "image/webp"]);

/** RFC 6266 Content-Disposition with an RFC 5987 `filename*` for names that are not plain ASCII. */
export function contentDisposition(kind: "inline" | "attachment", name: string): string {
  const ascii = /^[\x20-\x7e]*$/.test(name) && !/["\\]/.test(name);
  if (ascii) return `${kind}; filename="${name}"`;
  const fallback = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}
