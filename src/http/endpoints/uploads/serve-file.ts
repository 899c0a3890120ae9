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
 * If-None-Match.
 *
 * Safety (issue #26): the stored content type goes through uploads/content-types'
 * allow-list again here, so only raster images, PDF, audio, video and plain text are
 * served under their own type (inline unless downloaded); everything else is
 * application/octet-stream with `attachment`. Every answer of these routes, errors
 * included, carries UPLOAD_RESPONSE_HEADERS: a sandbox CSP (a document that somehow
 * renders runs no script, has an opaque origin and cannot reach the API key's
 * storage), nosniff, and Cross-Origin-Resource-Policy same-origin.
 * Zulip's security model says uploads should ideally come from a separate domain (so a
 * file that renders cannot touch the app's origin at all), which its S3 backend allows;
 * its local-files backend, like parley, serves them on the realm's own host. Not done
 * for now: it needs a second host name (and certificate) per deployment and signed
 * redirects to it; the mitigation is the allow-list with `attachment`, nosniff and the
 * sandbox CSP. A separate origin would be an option (an UPLOADS_HOST setting) later.
 */
import { stat } from "node:fs/promises";
import {
  BadRequestError,
  EngineError,
  isValidPathId,
  NotFoundError,
  THUMBNAIL_FORMAT,
  type Attachment,
  type Store,
  type User,
} from "../../../engine/index.js";
import { contentDisposition, servedType } from "../../../uploads/index.js";
import {
  defineEndpoint,
  RawReply,
  type HandlerResult,
  type OptionalContext,
  type PublicContext,
} from "../../endpoint.js";
import { engineErrorReply } from "../../respond.js";

/** On every answer of the file routes (see the module comment). */
export const UPLOAD_RESPONSE_HEADERS: readonly (readonly [string, string])[] = [
  ["Content-Security-Policy", "sandbox; default-src 'none'"],
  ["X-Content-Type-Options", "nosniff"],
  ["Cross-Origin-Resource-Policy", "same-origin"],
];

/** A file route's handler whose refusals carry UPLOAD_RESPONSE_HEADERS too (the error body is the usual one). */
function guarded<C>(handler: (ctx: C) => RawReply | Promise<RawReply>): (ctx: C) => HandlerResult {
  return async (ctx) => {
    try {
      return await handler(ctx);
    } catch (error) {
      if (!(error instanceof EngineError) || error.code === "INTERNAL_SERVER_ERROR") throw error;
      const reply = engineErrorReply(error);
      const body = typeof reply.body === "string" || Buffer.isBuffer(reply.body) ? reply.body : reply.body.joined();
      const headers = [...(reply.headers ?? []), ...UPLOAD_RESPONSE_HEADERS];
      return new RawReply(reply.status, headers, { kind: "body", body, contentType: "application/json" });
    }
  };
}

export const FILE_NOT_FOUND = "This file does not exist or has been deleted.";

/** The path_id the path parameters name, or null when they cannot name one (traversal, NUL, bad shape). */
export function pathIdOf(params: Readonly<Record<string, string>>): string | null {
  const pathId = `${params["realm_id"] ?? ""}/${params["path_hash"] ?? ""}/${params["path_random"] ?? ""}/${params["filename"] ?? ""}`;
  return isValidPathId(pathId) ? pathId : null;
}

/** The file the caller may download, or the 404 every other case gets. */
export function accessibleFile(
  store: Store,
  user: User | null,
  realmId: number | undefined,
  params: Readonly<Record<string, string>>,
): Attachment {
  const pathId = pathIdOf(params);
  const attachment =
    pathId === null || realmId === undefined
      ? undefined
      : store.attachmentForDownload(user?.id ?? null, realmId, pathId);
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
  /** Already passed through servedType (or a type this server made, the thumbnail's). */
  readonly contentType: string;
  readonly name: string;
  readonly etag: string;
  readonly disposition: "inline" | "attachment";
}

/** The reply for a file: 200, 206 for a range, 304 when the client's copy is current, 416 for a range past the end. */
export function fileReply(file: FileToServe, head: OptionalContext["head"]): RawReply {
  const common: (readonly [string, string])[] = [
    ["ETag", file.etag],
    ["Accept-Ranges", "bytes"],
    ...UPLOAD_RESPONSE_HEADERS,
    ["Cache-Control", "private, immutable"],
    ["Content-Disposition", contentDisposition(file.disposition, file.name)],
  ];
  if (head.ifNoneMatch !== "" && head.ifNoneMatch.split(",").some((t) => t.trim() === file.etag || t.trim() === "*"))
    return new RawReply(304, common, { kind: "empty" });
  const ifRange = head.extra["if-range"];
  const range =
    head.extra.range === "" || (ifRange !== "" && ifRange !== file.etag)
      ? null
      : parseRange(head.extra.range, file.size);
  if (range === "unsatisfiable")
    return new RawReply(416, [...common, ["Content-Range", `bytes */${file.size}`]], { kind: "empty" });
  if (range === null)
    return new RawReply(200, common, {
      kind: "file",
      path: file.path,
      start: 0,
      length: file.size,
      contentType: file.contentType,
    });
  const [start, length] = range;
  return new RawReply(206, [...common, ["Content-Range", `bytes ${start}-${start + length - 1}/${file.size}`]], {
    kind: "file",
    path: file.path,
    start,
    length,
    contentType: file.contentType,
  });
}

async function originalOf(
  ctx: OptionalContext | PublicContext,
  attachment: Attachment,
  forceAttachment: boolean,
): Promise<RawReply> {
  // A cluster node may not have a file another node stored yet; unreachable, it is served as a missing file is.
  await ctx.uploads.files.ensureLocal(attachment.pathId).catch(() => false);
  const served = servedType(attachment.contentType);
  return fileReply(
    {
      path: ctx.uploads.files.pathOf(attachment.pathId),
      size: attachment.size,
      contentType: served.contentType,
      name: attachment.name,
      etag: `"${attachment.id}-${attachment.size}"`,
      disposition: !forceAttachment && served.inline ? "inline" : "attachment",
    },
    ctx.head,
  );
}

const FILE_PATH = "/user_uploads/:realm_id/:path_hash/:path_random/:filename";

/** An upload's path_id spans the path: the access sweep's probe fills every segment through path_random. */
export const UPLOAD_PATH_REFS = { path_random: "uploadPath" } as const;
const SEGMENT = "a segment of the upload's path_id (probed as a whole through path_random)";
export const UPLOAD_PATH_NOT_REFS = { realm_id: SEGMENT, path_hash: SEGMENT, filename: SEGMENT } as const;

export const serveFileEndpoint = defineEndpoint({
  method: "GET",
  path: FILE_PATH,
  pathRefs: UPLOAD_PATH_REFS,
  root: true,
  auth: "optional",
  params: {},
  testing: { notRefs: UPLOAD_PATH_NOT_REFS },
  handler: guarded((ctx: OptionalContext) => {
    return originalOf(ctx, accessibleFile(ctx.store, ctx.user, ctx.realm?.id, ctx.pathParams), false);
  }),
});

export const downloadFileEndpoint = defineEndpoint({
  method: "GET",
  path: "/user_uploads/download/:realm_id/:path_hash/:path_random/:filename",
  pathRefs: UPLOAD_PATH_REFS,
  root: true,
  auth: "optional",
  params: {},
  testing: { notRefs: UPLOAD_PATH_NOT_REFS },
  handler: guarded((ctx: OptionalContext) => {
    return originalOf(ctx, accessibleFile(ctx.store, ctx.user, ctx.realm?.id, ctx.pathParams), true);
  }),
});

export const serveThumbnailEndpoint = defineEndpoint({
  method: "GET",
  path: "/user_uploads/thumbnail/:realm_id/:path_hash/:path_random/:filename/:thumbnail_format",
  pathRefs: UPLOAD_PATH_REFS,
  root: true,
  auth: "optional",
  params: {},
  testing: { notRefs: { ...UPLOAD_PATH_NOT_REFS, thumbnail_format: "a size and format of the thumbnail" } },
  handler: guarded(async (ctx: OptionalContext) => {
    const attachment = accessibleFile(ctx.store, ctx.user, ctx.realm?.id, ctx.pathParams);
    if (ctx.pathParams["thumbnail_format"] !== THUMBNAIL_FORMAT.name || attachment.image === null)
      throw new NotFoundError(FILE_NOT_FOUND);
    const path = await ctx.uploads.thumbnails.thumbnail(attachment.pathId);
    const size =
      path === null
        ? null
        : await stat(path).then(
            (s) => s.size,
            () => null,
          );
    if (path === null || size === null) throw new NotFoundError(FILE_NOT_FOUND);
    return fileReply(
      {
        path,
        size,
        contentType: "image/webp",
        name: `${attachment.name}.webp`,
        etag: `"${attachment.id}-${THUMBNAIL_FORMAT.name}"`,
        disposition: "inline",
      },
      ctx.head,
    );
  }),
});

export const serveTemporaryFileEndpoint = defineEndpoint({
  method: "GET",
  path: "/user_uploads/temporary/:token/:filename",
  root: true,
  auth: "none",
  params: {},
  // test/http/uploads
  testing: {
    notRefs: {
      token: "signed by the server for one file: it cannot be made for another",
      filename: "the file's name, checked against the one the token names",
    },
  },
  handler: guarded((ctx: PublicContext) => {
    const pathId = ctx.uploads.tokens.verify(ctx.pathParams["token"] ?? "");
    if (pathId === null) throw new BadRequestError("Invalid token");
    if (pathId.slice(pathId.lastIndexOf("/") + 1) !== ctx.pathParams["filename"])
      throw new BadRequestError("Invalid filename");
    // The token stands for the access check made when it was issued; the file must still exist, in this realm.
    const attachment = ctx.realm === undefined ? undefined : ctx.store.attachmentInRealm(ctx.realm.id, pathId);
    if (!attachment) throw new NotFoundError(FILE_NOT_FOUND);
    return originalOf(ctx, attachment, false);
  }),
});
