/**
 * @module http/endpoints/uploads/thumbnail-status
 * GET /thumbnail/status/{realm_id}/{filename} — https://zulip.com/api/check-thumbnail-status
 * (FL 479): whether an uploaded image's thumbnail is made yet, for clients polling
 * after an upload; false for a file that gets none (not an image this server
 * thumbnails). Asking never starts the work. A file the caller may not download gets
 * the 404 of a missing file ("This file does not exist or has been deleted."), as its temporary URL does.
 */
import { defineEndpoint } from "../../endpoint.js";
import { accessibleFile, UPLOAD_PATH_NOT_REFS, UPLOAD_PATH_REFS } from "./serve-file.js";

export const thumbnailStatusEndpoint = defineEndpoint({
  method: "GET",
  path: "/thumbnail/status/:realm_id/:path_hash/:path_random/:filename",
  pathRefs: UPLOAD_PATH_REFS,
  auth: "user",
  params: {},
  testing: { notRefs: UPLOAD_PATH_NOT_REFS },
  async handler(ctx) {
    const attachment = accessibleFile(ctx.store, ctx.user, ctx.realm.id, ctx.pathParams);
    const made = attachment.image !== null && (await ctx.uploads.thumbnails.made(attachment.pathId));
    return { has_thumbnail: made };
  },
});
