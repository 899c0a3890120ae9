/**
 * @module http/endpoints/uploads/temporary-url
 * GET /user_uploads/{realm_id}/{filename} — https://zulip.com/api/get-file-temporary-url.
 * The API form of a file's path answers, to someone who may download the file, a URL
 * that serves it without credentials for SIGNED_ACCESS_TOKEN_VALIDITY_IN_SECONDS (60).
 * Anyone else gets the 404 of a missing file.
 */
import { defineEndpoint } from "../../endpoint.js";
import { accessibleFile, UPLOAD_PATH_NOT_REFS, UPLOAD_PATH_REFS } from "./serve-file.js";

export const temporaryUrlEndpoint = defineEndpoint({
  method: "GET",
  path: "/user_uploads/:realm_id/:path_hash/:path_random/:filename",
  pathRefs: UPLOAD_PATH_REFS,
  auth: "user",
  params: {},
  testing: { notRefs: UPLOAD_PATH_NOT_REFS },
  handler(ctx) {
    const attachment = accessibleFile(ctx.store, ctx.user, ctx.realm.id, ctx.pathParams);
    const filename = attachment.pathId.slice(attachment.pathId.lastIndexOf("/") + 1);
    return {
      url: `/user_uploads/temporary/${ctx.uploads.tokens.issue(attachment.pathId)}/${encodeURIComponent(filename)}`,
    };
  },
});
