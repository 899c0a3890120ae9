/**
 * @module http/endpoints/uploads/upload-file
 * POST /user_uploads — https://zulip.com/api/upload-file. One file in a
 * multipart body, streamed to a temporary file under DATA/uploads/<realm>/tmp as it
 * arrives (never whole in memory), fsynced and renamed into place, then recorded.
 * Zulip's errors: no file, several files, larger than MAX_FILE_UPLOAD_SIZE (a
 * declared Content-Length over it is refused before a byte is read), over the realm's
 * quota. Any refusal leaves nothing on disk.
 */
import { BadRequestError } from "../../../engine/index.js";
import { contentTypeFor, originalName } from "../../../uploads/index.js";
import { defineEndpoint, type AuthedContext } from "../../endpoint.js";
import { receiveMultipartFiles } from "../../multipart-files.js";

/** Room for multipart boundaries and part headers around the file. */
const MULTIPART_OVERHEAD = 64 * 1024;

/** Zulip's self-hosted text (the Zulip Cloud one names a plan, which parley has not). */
export function fileTooLarge(maxMib: number): BadRequestError {
  return new BadRequestError(`File is larger than this server's configured maximum upload size (${maxMib} MiB).`);
}

export async function receiveOneFile(
  ctx: AuthedContext,
): Promise<{ name: string; contentType: string; temp: import("../../../uploads/index.js").TempFile }> {
  const { uploads, head } = ctx;
  const tooLarge = () => fileTooLarge(uploads.maxFileMib);
  if (head.contentLength !== null && head.contentLength > uploads.maxFileBytes + MULTIPART_OVERHEAD) throw tooLarge();
  // Early quota check on the declared size; the engine checks again, exactly, when recording.
  if (head.contentLength !== null)
    ctx.store.checkUploadQuota(ctx.realm.id, Math.max(0, head.contentLength - MULTIPART_OVERHEAD), uploads.quotaBytes);
  const type = head.contentType.split(";")[0]!.trim().toLowerCase();
  if (type !== "multipart/form-data" || ctx.body === null)
    throw new BadRequestError("You must specify a file to upload");
  const { files, severalFiles } = await receiveMultipartFiles(
    ctx.body,
    head.contentType,
    () => uploads.files.createTemp(ctx.realm.id),
    { maxFileBytes: uploads.maxFileBytes, tooLarge },
  );
  const discardAll = () => Promise.all(files.map((f) => f.temp.discard()));
  if (files.length === 0) throw new BadRequestError("You must specify a file to upload");
  if (severalFiles || files.length > 1) {
    await discardAll();
    throw new BadRequestError("You may only upload one file at a time");
  }
  const file = files[0]!;
  const name = originalName(file.filename);
  return { name, contentType: contentTypeFor(file.mimeType, name), temp: file.temp };
}

export const uploadFileEndpoint = defineEndpoint({
  method: "POST",
  path: "/user_uploads",
  auth: "user",
  body: "stream",
  params: {},
  async handler(ctx) {
    const { name, contentType, temp } = await receiveOneFile(ctx);
    const attachment = await ctx.uploads.store(ctx.store, ctx.user, temp, name, contentType);
    const url = `/user_uploads/${attachment.pathId}`;
    return { uri: url, url, filename: attachment.name };
  },
});
