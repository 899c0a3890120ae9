/**
 * @module uploads/content-types
 * The one gate for uploaded files' content types. A type a client declares (a
 * multipart part's Content-Type, tus `filetype` metadata) is stored only as a
 * lowercase `type/subtype` pair of RFC 9110 tokens, and only when the whole value is a
 * well-formed media type; anything else is stored as application/octet-stream. The
 * same parser runs again when a file is served, so records an older build stored
 * unchecked (issue #26: `text/plain;a=b,text/html`, CR/LF) are served safely too.
 *
 * Serving: only an allow-list of types a browser shows without running anything
 * (raster images, PDF, audio, video, plain text) goes out under its own type and may
 * be inline; everything else (HTML, SVG, XML, script...) is application/octet-stream
 * with `Content-Disposition: attachment`.
 */

/** RFC 9110 tchar. */
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
/** RFC 9110 quoted-string, ASCII only (obs-text is refused: nothing legitimate needs it here). */
const QUOTED = '"(?:[\\t \\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\[\\t \\x21-\\x7e])*"';
/** media-type = type "/" subtype parameters; OWS is spaces and tabs only, so CR and LF never match. */
const PARAMETER = `[ \\t]*;[ \\t]*(?:${TOKEN}=(?:${TOKEN}|${QUOTED}))?`;
const MEDIA_TYPE = new RegExp(`^[ \\t]*(${TOKEN})/(${TOKEN})(?:${PARAMETER})*[ \\t]*$`);

/** Longer values are junk (RFC 6838 caps each name at 127 characters). */
const MAX_LENGTH = 255;

export const OCTET_STREAM = "application/octet-stream";

/** The lowercase `type/subtype` of a well-formed media type, or null for anything else. */
export function parseMediaType(value: string): string | null {
  if (value.length > MAX_LENGTH) return null;
  const match = MEDIA_TYPE.exec(value);
  return match ? `${match[1]!.toLowerCase()}/${match[2]!.toLowerCase()}` : null;
}

const TYPES_BY_EXTENSION: Readonly<Record<string, string>> = {
  apng: "image/apng",
  avif: "image/avif",
  bmp: "image/bmp",
  gif: "image/gif",
  heic: "image/heic",
  ico: "image/vnd.microsoft.icon",
  jpe: "image/jpeg",
  jpeg: "image/jpeg",
  jpg: "image/jpeg",
  png: "image/png",
  svg: "image/svg+xml",
  tif: "image/tiff",
  tiff: "image/tiff",
  webp: "image/webp",
  aac: "audio/aac",
  flac: "audio/flac",
  m4a: "audio/mp4",
  mp3: "audio/mpeg",
  oga: "audio/ogg",
  ogg: "audio/ogg",
  opus: "audio/ogg",
  wav: "audio/wav",
  weba: "audio/webm",
  mp4: "video/mp4",
  m4v: "video/mp4",
  mov: "video/quicktime",
  ogv: "video/ogg",
  webm: "video/webm",
  mkv: "video/x-matroska",
  avi: "video/x-msvideo",
  txt: "text/plain",
  log: "text/plain",
  md: "text/markdown",
  csv: "text/csv",
  htm: "text/html",
  html: "text/html",
  css: "text/css",
  js: "text/javascript",
  xml: "text/xml",
  json: "application/json",
  pdf: "application/pdf",
  zip: "application/zip",
  gz: "application/gzip",
  tar: "application/x-tar",
  "7z": "application/x-7z-compressed",
  doc: "application/msword",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xls: "application/vnd.ms-excel",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  ppt: "application/vnd.ms-powerpoint",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  odt: "application/vnd.oasis.opendocument.text",
  ods: "application/vnd.oasis.opendocument.spreadsheet",
  py: "text/x-python",
  sh: "application/x-sh",
};

/**
 * The type to store for an upload (Zulip's get_file_info): the declared type reduced
 * by parseMediaType; none declared (or octet-stream, which busboy reports for a part
 * without a type) is guessed from the name; a malformed one is octet-stream.
 */
export function contentTypeFor(declared: string, name: string): string {
  const given = declared.replace(/^[ \t]+|[ \t]+$/g, "");
  const parsed = given === "" ? OCTET_STREAM : parseMediaType(given);
  if (parsed === null) return OCTET_STREAM;
  if (parsed !== OCTET_STREAM) return parsed;
  const extension = name.slice(name.lastIndexOf(".") + 1).toLowerCase();
  return (name.includes(".") ? TYPES_BY_EXTENSION[extension] : undefined) ?? OCTET_STREAM;
}

/**
 * Types served under their own name and possibly inline (Zulip's INLINE_MIME_TYPES):
 * raster images (never SVG), PDF, audio, video, plain text.
 */
const INLINE_TYPES: ReadonlySet<string> = new Set([
  "application/pdf",
  "audio/aac",
  "audio/flac",
  "audio/mp4",
  "audio/mpeg",
  "audio/ogg",
  "audio/wav",
  "audio/webm",
  "audio/x-wav",
  "image/apng",
  "image/avif",
  "image/gif",
  "image/jpeg",
  "image/png",
  "image/webp",
  "text/plain",
  "video/mp4",
  "video/ogg",
  "video/quicktime",
  "video/webm",
]);

export interface ServedType {
  /** The Content-Type header. */
  readonly contentType: string;
  /** Whether the file may be shown in place (else always `attachment`). */
  readonly inline: boolean;
}

/** How a file whose record says `stored` is served; the record's text never reaches a header as it is. */
export function servedType(stored: string): ServedType {
  const type = parseMediaType(stored);
  if (type === null || !INLINE_TYPES.has(type)) return { contentType: OCTET_STREAM, inline: false };
  return { contentType: type === "text/plain" ? "text/plain; charset=utf-8" : type, inline: true };
}

/** Types the thumbnailer reads (Zulip's THUMBNAIL_ACCEPT_IMAGE_TYPES, as far as the bundled libvips reads them). */
export const THUMBNAIL_INPUT_TYPES: ReadonlySet<string> = new Set([
  "image/avif",
  "image/gif",
  "image/jpeg",
  "image/png",
  "image/tiff",
  "image/webp",
]);

/** Whether a stored type names an image the thumbnailer may try (its bytes are sniffed before any decoding). */
export function isThumbnailInputType(stored: string): boolean {
  const type = parseMediaType(stored);
  return type !== null && THUMBNAIL_INPUT_TYPES.has(type);
}
