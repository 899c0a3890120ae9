/**
 * @module http/endpoints/uploads/serve-file
 * Downloads, outside /api/v1 as in Zulip:
 * - GET /user_uploads/{realm_id}/{path...}: the file (Basic auth, or none for files
 *   of web-public channels in realms that allow spectators);
 * - GET /user_uploads/download/{realm_id}/{path...}: the same, always as an attachment;
 * - GET /user_uploads/thumbnail/{realm_id}/{path...}/{format}: an image's preview;
 * - GET /user_uploads/temporary/{token}/{filename}: without credentials, for 60
 *   seconds after GET /api/v1/user_uploads/... issued the token.
 * The engine decides access (Zulip's validate_attachment_request). Deliberate
 * deviation: a file the caller may not see answers exactly like one that does not
 * exist (404), where Zulip answers 403 — a 403 would confirm that the path exists.
 * Errors are Zulip's JSON envelope here, not its HTML pages.
 * Files are streamed from disk with Range (one range; video seeking), ETag and
 * If-None-Match, `X-Content-Type-Options: nosniff`, and `Content-Disposition`
 * inline only for Zulip's INLINE_MIME_TYPES (HTML, SVG and the rest download).
 */
import { stat } from "node:fs/promises";
import { BadRequestError, isValidPathId, NotFoundError, THUMBNAIL_FORMAT, type Attachment, type Store, type User } from "../../../engine/index.js";
import { contentDisposition, isInlineType } from "../../../uploads/index.js";
import { defineEndpoint, RawReply, type OptionalContext, type PublicContext } from "../../endpoint.js";

export const FILE_NOT_FOUND = "This file does not exist or has been deleted.";

/** The path_id the path parameters name, or null when they cannot name one (traversal, NUL, bad shape). */
export function pathIdOf(params: Readonly<Record<string, string>>): string | null {
  const pathId = `${params["realm_id"] ?? ""}/${params["path_hash"] ?? ""}/${params["path_random"] ?? ""}/${params["filename"] ?? ""}`;
  return isValidPathId(pathId) ? pathId : null;
}

/** The file the caller may download, or the 404 every other case gets. */
export function accessibleFile(store: Store, user: User | null, realmId: number | undefined, params: Readonly<Record<string, string>>): Attachment {
  const pathId = pathIdOf(params);
  const attachment = pathId === null || realmId === undefined ? undefined : store.attachmentForDownload(user?.id ?? null, realmId, pathId);
  if (!attachment) throw new NotFoundError(FILE_NOT_FOUND);
  return attachment;
}

/** A single "bytes=" range of a `size`-byte file: [start, length], "unsatisfiable", or null to send it whole. */
export function parseRange(header: string, size: number): [number, number] | "unsatisfiable" | null {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) return null;
  const [, from, to] = match;
  if (from === "") {
    // A suffix: the last N bytes.
    const n = Number(to);
    if (!Number.isSafeInteger(n) || n === 0) return "unsatisfiable";
    const length = Math.min(n, size);
    return [size - length, length];
  }
  const start = Number(from);
  if (!Number.isSafeInteger(start) || start >= size) return "unsatisfiable";
  const end = to === "" ? size - 1 : Math.min(Number(to), size - 1);
  if (!Number.isSafeInteger(end) || end < start) return "unsatisfiable";
  return [start, end - start + 1];
}

export interface FileToServe {
  readonly path: string;
  readonly size: number;
  readonly contentType: string;
  readonly name: string;
  readonly etag: string;
  readonly disposition: "inline" | "attachment";
}

/** The reply for a file: 200, 206 for a range, 304 when the client's copy is current, 416 for a range past the end. */
export function fileReply(file: FileToServe, head: OptionalContext["head"]): RawReply {
  const common: [string, string][] = [
    ["ETag", file.etag],
    ["Accept-Ranges", "bytes"],
    ["X-Content-Type-Options", "nosniff"],
    ["Cache-Control", "private, immutable"],
    ["Content-Disposition", contentDisposition(file.disposition, file.name)],
  ];
  if (head.ifNoneMatch !== "" && head.ifNoneMatch.split(",").some((t) => t.trim() === file.etag || t.trim() === "*")) return new RawReply(304, common, { kind: "empty" });
  const ifRange = head.extra["if-range"];
  const range = head.extra.range === "" || (ifRange !== "" && ifRange !== file.etag) ? null : parseRange(head.extra.range, file.size);
  if (range === "unsatisfiable") return new RawReply(416, [...common, ["Content-Range", `bytes */${file.size}`]], { kind: "empty" });
  if (range === null) return new RawReply(200, common, { kind: "file", path: file.path, start: 0, length: file.size, contentType: file.contentType });
  const [start, length] = range;
  return new RawReply(206, [...common, ["Content-Range", `bytes ${start}-${start + length - 1}/${file.size}`]], { kind: "file", path: file.path, start, length, contentType: file.contentType });
}

function originalOf(ctx: OptionalContext | PublicContext, attachment: Attachment, forceAttachment: boolean): RawReply {
  return fileReply(
    {
      path: ctx.uploads.files.pathOf(attachment.pathId),
      size: attachment.size,
      contentType: attachment.contentType,
      name: attachment.name,
      etag: `"${attachment.id}-${attachment.size}"`,
      disposition: !forceAttachment && isInlineType(attachment.contentType) ? "inline" : "attachment",
    },
    ctx.head,
  );
}

const FILE_PATH = "/user_uploads/:realm_id/:path_hash/:path_random/:filename";

export const serveFileEndpoint = defineEndpoint({
  method: "GET",
  path: FILE_PATH,
  root: true,
  auth: "optional",
  params: {},
  handler(ctx) {
    return originalOf(ctx, accessibleFile(ctx.store, ctx.user, ctx.realm?.id, ctx.pathParams), false);
  },
});

export const downloadFileEndpoint = defineEndpoint({
  method: "GET",
  path: "/user_uploads/download/:realm_id/:path_hash/:path_random/:filename",
  root: true,
  auth: "optional",
  params: {},
  handler(ctx) {
    return originalOf(ctx, accessibleFile(ctx.store, ctx.user, ctx.realm?.id, ctx.pathParams), true);
  },
});

export const serveThumbnailEndpoint = defineEndpoint({
  method: "GET",
  path: "/user_uploads/thumbnail/:realm_id/:path_hash/:path_random/:filename/:thumbnail_format",
  root: true,
  auth: "optional",
  params: {},
  async handler(ctx) {
    const attachment = accessibleFile(ctx.store, ctx.user, ctx.realm?.id, ctx.pathParams);
    if (ctx.pathParams["thumbnail_format"] !== THUMBNAIL_FORMAT.name || attachment.image === null) throw new NotFoundError(FILE_NOT_FOUND);
    const path = await ctx.uploads.thumbnails.thumbnail(attachment.pathId);
    const size = path === null ? null : await stat(path).then((s) => s.size, () => null);
    if (path === null || size === null) throw new NotFoundError(FILE_NOT_FOUND);
    return fileReply({ path, size, contentType: "image/webp", name: `${attachment.name}.webp`, etag: `"${attachment.id}-${THUMBNAIL_FORMAT.name}"`, disposition: "inline" }, ctx.head);
  },
});

export const serveTemporaryFileEndpoint = defineEndpoint({
  method: "GET",
  path: "/user_uploads/temporary/:token/:filename",
  root: true,
  auth: "none",
  params: {},
  handler(ctx) {
    const pathId = ctx.uploads.tokens.verify(ctx.pathParams["token"] ?? "");
    if (pathId === null) throw new BadRequestError("Invalid token");
    if (pathId.slice(pathId.lastIndexOf("/") + 1) !== ctx.pathParams["filename"]) throw new BadRequestError("Invalid filename");
    // The token stands for the access check made when it was issued; the file must still exist, in this realm.
    const attachment = ctx.realm === undefined ? undefined : ctx.store.attachmentInRealm(ctx.realm.id, pathId);
    if (!attachment) throw new NotFoundError(FILE_NOT_FOUND);
    return originalOf(ctx, attachment, false);
  },
});
