/**
 * @module http/endpoints/uploads/tus
 * Resumable uploads at /api/v1/tus, the tus 1.0 core protocol with the creation and
 * termination extensions, implemented here on the uWS server: the well-kept server
 * library (@tus/server) is written against Node's http request/response objects,
 * which this server does not use. Zulip runs tusd and answers its hooks; the client
 * sees the same: Basic auth, Zulip's refusals (411 for a deferred length, 413 over
 * MAX_FILE_UPLOAD_SIZE or the realm quota), and the final PATCH answering
 * `{"url", "filename"}` JSON (tusd relays Zulip's pre-finish hook body), after which
 * the file is an attachment exactly like one from POST /user_uploads (the stored name
 * strictly sanitized to ASCII, as Zulip does for tus).
 * - POST /tus: creation (Upload-Length, Upload-Metadata filename/filetype) -> 201 + Location;
 * - HEAD /tus/{id}: Upload-Offset, what reached the disk (after an interrupted PATCH too);
 * - PATCH /tus/{id}: appends from Upload-Offset, streamed to disk;
 * - DELETE /tus/{id}: termination.
 * Another user's upload ID answers like an unknown one. Uploads in progress survive a
 * restart (uploads/tus): a client resumes after a deploy with HEAD, as after a dropped
 * connection.
 */
import { BadRequestError, EngineError } from "../../../engine/index.js";
import { contentTypeFor, MAX_TUS_UPLOADS_PER_USER, TUS_ID, type TusUpload } from "../../../uploads/index.js";
import { defineEndpoint, RawReply, type AuthedContext } from "../../endpoint.js";

const TUS_VERSION = "1.0.0";
const TUS_HEADERS: readonly [string, string][] = [["Tus-Resumable", TUS_VERSION]];

/** A tus refusal, in Zulip's error envelope, with its tus status. */
function refusal(status: number, msg: string, headers: readonly [string, string][] = []): RawReply {
  return new RawReply(status, [...TUS_HEADERS, ...headers], {
    kind: "body",
    body: JSON.stringify({ result: "error", msg, code: "BAD_REQUEST" }),
    contentType: "application/json",
  });
}

function errorRefusal(status: number, error: EngineError): RawReply {
  return new RawReply(status, TUS_HEADERS, {
    kind: "body",
    body: JSON.stringify({ result: "error", msg: error.message, code: error.code }),
    contentType: "application/json",
  });
}

/** tus requires the client's protocol version on every request but OPTIONS. */
function versionRefusal(ctx: AuthedContext): RawReply | null {
  return ctx.head.extra["tus-resumable"] === TUS_VERSION
    ? null
    : refusal(412, "Unsupported tus version", [["Tus-Version", TUS_VERSION]]);
}

/** Upload-Metadata: comma-separated `key base64value` pairs. */
export function parseMetadata(header: string): Map<string, string> | null {
  const out = new Map<string, string>();
  if (header.trim() === "") return out;
  for (const pair of header.split(",")) {
    const [key, value, ...rest] = pair.trim().split(" ");
    if (!key || rest.length > 0 || !/^[\x21-\x7e]+$/.test(key) || out.has(key)) return null;
    if (value !== undefined && !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) return null;
    out.set(key, value === undefined ? "" : Buffer.from(value, "base64").toString("utf8"));
  }
  return out;
}

/** The caller's upload; uploads a previous process left in progress are known once `ready` settles. */
async function uploadOf(ctx: AuthedContext): Promise<TusUpload | undefined> {
  await ctx.uploads.ready;
  const id = ctx.pathParams["upload_id"] ?? "";
  return TUS_ID.test(id) ? ctx.uploads.tus.get(id, ctx.realm.id, ctx.user.id) : undefined;
}

const NOT_FOUND = () => refusal(404, "Upload not found");

/** A PATCH in progress on the same upload finishes (its bytes counted) before another request looks at the offset. */
const patching = new WeakMap<TusUpload, Promise<unknown>>();

/** The caller's upload once no PATCH is writing to it, or the reply that refuses the request. */
async function idleUpload(ctx: AuthedContext): Promise<TusUpload | RawReply> {
  // An unknown (or another user's) ID first, so that it answers alike whatever else is wrong.
  const upload = await uploadOf(ctx);
  if (!upload) return NOT_FOUND();
  const refused = versionRefusal(ctx);
  if (refused) return refused;
  await patching.get(upload)?.catch(() => undefined);
  return upload;
}

export const tusCreateEndpoint = defineEndpoint({
  method: "POST",
  path: "/tus",
  auth: "user",
  body: "stream",
  params: {},
  async handler(ctx) {
    const refused = versionRefusal(ctx);
    if (refused) return refused;
    const { head, uploads } = ctx;
    if (head.extra["upload-defer-length"] !== "" || head.extra["upload-length"] === "")
      return refusal(411, "SizeIsDeferred is not supported");
    if (head.extra["upload-concat"] !== "") return refusal(400, "Concatenation is not supported");
    if (!/^\d{1,15}$/.test(head.extra["upload-length"])) return refusal(400, "Invalid Upload-Length");
    const length = Number(head.extra["upload-length"]);
    if (length > uploads.maxFileBytes)
      return refusal(413, `Uploaded file is larger than the allowed limit of ${uploads.maxFileMib} MiB`);
    try {
      ctx.store.checkUploadQuota(ctx.realm.id, length, uploads.quotaBytes);
    } catch (error) {
      return errorRefusal(413, error as EngineError);
    }
    const metadata = parseMetadata(head.extra["upload-metadata"]);
    if (metadata === null) return refusal(400, "Invalid Upload-Metadata");
    await uploads.ready;
    if (uploads.tus.inProgress(ctx.user.id) >= MAX_TUS_UPLOADS_PER_USER)
      return refusal(
        429,
        `Too many uploads in progress (limit: ${MAX_TUS_UPLOADS_PER_USER}); finish or cancel one first`,
      );
    const rawName = metadata.get("filename") ?? "";
    const filename =
      rawName === "" || rawName === "." || rawName === ".." ? "uploaded-file" : rawName.replace(/\0/g, "");
    const upload = await uploads.tus.create(
      ctx.realm.id,
      ctx.user.id,
      length,
      filename,
      contentTypeFor(metadata.get("filetype") ?? "", filename),
    );
    return new RawReply(201, [...TUS_HEADERS, ["Location", `/api/v1/tus/${upload.id}`], ["Upload-Offset", "0"]], {
      kind: "empty",
    });
  },
});

export const tusHeadEndpoint = defineEndpoint({
  method: "HEAD",
  path: "/tus/:upload_id",
  pathRefs: { upload_id: "tusUpload" },
  auth: "user",
  params: {},
  async handler(ctx) {
    const upload = await idleUpload(ctx);
    if (upload instanceof RawReply) return upload;
    await upload.file.flush().catch(() => undefined);
    return new RawReply(
      200,
      [
        ...TUS_HEADERS,
        ["Upload-Offset", String(upload.file.written)],
        ["Upload-Length", String(upload.length)],
        ["Cache-Control", "no-store"],
      ],
      { kind: "empty" },
    );
  },
});

export const tusPatchEndpoint = defineEndpoint({
  method: "PATCH",
  path: "/tus/:upload_id",
  pathRefs: { upload_id: "tusUpload" },
  auth: "user",
  body: "stream",
  params: {},
  async handler(ctx) {
    // An unknown (or another user's) ID first, so that it answers alike whatever else is wrong.
    const upload = await uploadOf(ctx);
    if (!upload) return NOT_FOUND();
    const refused = versionRefusal(ctx);
    if (refused) return refused;
    if (ctx.head.contentType.split(";")[0]!.trim().toLowerCase() !== "application/offset+octet-stream")
      return refusal(415, "Content-Type must be application/offset+octet-stream");
    const previous = patching.get(upload);
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    patching.set(upload, mine);
    try {
      await previous?.catch(() => undefined);
      // The daily expiry leaves an upload alone while a PATCH writes to it, however long that takes.
      upload.busy = true;
      await upload.file.flush();
      if (ctx.head.extra["upload-offset"] !== String(upload.file.written))
        return refusal(409, "Upload-Offset does not match the upload's offset", [
          ["Upload-Offset", String(upload.file.written)],
        ]);
      let tooLong = false;
      if (ctx.body) {
        for await (const chunk of ctx.body) {
          if (upload.file.received + chunk.length > upload.length) {
            tooLong = true;
            break;
          }
          if (!upload.file.write(chunk)) await new Promise<void>((resolve) => upload.file.onDrain(resolve));
          if (upload.file.failure !== null) break;
        }
      }
      await upload.file.flush();
      ctx.uploads.tus.touch(upload);
      if (tooLong)
        return refusal(413, "The body goes past Upload-Length", [["Upload-Offset", String(upload.file.written)]]);
      const offset = upload.file.written;
      if (offset < upload.length)
        return new RawReply(204, [...TUS_HEADERS, ["Upload-Offset", String(offset)]], { kind: "empty" });
      await ctx.uploads.tus.finished(upload);
      const attachment = await ctx.uploads.store(
        ctx.store,
        ctx.user,
        upload.file,
        upload.filename,
        upload.filetype,
        true,
      );
      // tusd hands the client Zulip's pre-finish hook body as the final PATCH's response.
      return new RawReply(200, [...TUS_HEADERS, ["Upload-Offset", String(offset)]], {
        kind: "body",
        body: JSON.stringify({ url: `/user_uploads/${attachment.pathId}`, filename: attachment.name }),
        contentType: "application/json",
      });
    } catch (error) {
      if (error instanceof BadRequestError || (error as EngineError).code === "REALM_UPLOAD_QUOTA")
        return errorRefusal(413, error as EngineError);
      // A storage failure (a full disk) ends the upload: its partial file would only hold on to the space. The
      // client is answered 500, as tusd answers one, and starts over.
      if (!(error instanceof EngineError)) await ctx.uploads.tus.terminate(upload);
      throw error;
    } finally {
      upload.busy = false;
      done();
      if (patching.get(upload) === mine) patching.delete(upload);
    }
  },
});

export const tusDeleteEndpoint = defineEndpoint({
  method: "DELETE",
  path: "/tus/:upload_id",
  pathRefs: { upload_id: "tusUpload" },
  auth: "user",
  params: {},
  async handler(ctx) {
    const upload = await idleUpload(ctx);
    if (upload instanceof RawReply) return upload;
    await ctx.uploads.tus.terminate(upload);
    return new RawReply(204, TUS_HEADERS, { kind: "empty" });
  },
});
