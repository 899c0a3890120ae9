/**
 * @module http/endpoints/exports/download-export
 * GET /user_avatars/exports/{realm_id}/{random}/{filename}: a finished export's tarball,
 * outside /api/v1 at the path Zulip's local backend gives it. Deliberate deviation:
 * Zulip serves it to anyone holding the URL; here it takes the credentials of an
 * administrator of the export's realm (Basic auth, as uploads), and any other caller
 * gets the 404 of a missing file. Streamed from disk with Range and ETag.
 */
import { stat } from "node:fs/promises";
import { NotFoundError, type RealmExport } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { fileReply } from "../uploads/serve-file.js";
import type { AuthedContext } from "../../endpoint.js";

const NOT_FOUND = "This file does not exist or has been deleted.";

async function tarballOf(ctx: AuthedContext): Promise<{ row: RealmExport; path: string; size: number }> {
  const { realm_id = "", random = "", filename = "" } = ctx.pathParams;
  const exportPath = `${realm_id}/${random}/${filename}`;
  const row = ctx.store.downloadableExport(ctx.user.id, exportPath);
  const path = row === null ? null : ctx.server.exports.fileOf(exportPath);
  const size =
    path === null
      ? null
      : await stat(path).then(
          (s) => s.size,
          () => null,
        );
  if (row === null || path === null || size === null) throw new NotFoundError(NOT_FOUND);
  return { row, path, size };
}

export default defineEndpoint({
  method: "GET",
  path: "/user_avatars/exports/:realm_id/:random/:filename",
  root: true,
  auth: "user",
  params: {},
  testing: {
    notRefs: {
      realm_id: "a segment of the export's path: only an administrator of that realm is served (realm-export.test.ts)",
      random: "a segment of the export's path, made by the server",
      filename: "a segment of the export's path, made by the server",
    },
  },
  async handler(ctx) {
    const { row, path, size } = await tarballOf(ctx);
    return fileReply(
      {
        path,
        size,
        contentType: "application/gzip",
        name: ctx.pathParams["filename"] ?? "export.tar.gz",
        etag: `"export-${row.id}-${row.sha256 ?? ""}"`,
        disposition: "attachment",
      },
      ctx.head,
    );
  },
});
