/**
 * @module http/endpoints/uploads/attachments
 * GET /attachments — https://zulip.com/api/get-attachments: the caller's own uploads
 * with the messages that link them, and the realm's upload space used.
 * DELETE /attachments/{attachment_id} — https://zulip.com/api/remove-attachment: the
 * owner's own only ("Invalid attachment" otherwise, as for a missing one); the record
 * goes first, then the bytes.
 */
import { defineEndpoint, type AuthedContext } from "../../endpoint.js";
import { attachmentToWire } from "../../../wire/attachment.js";

function attachmentIdParam(ctx: AuthedContext): number {
  const raw = ctx.pathParams["attachment_id"] ?? "";
  return /^\d{1,9}$/.test(raw) ? Number(raw) : 0;
}

export const listAttachmentsEndpoint = defineEndpoint({
  method: "GET",
  path: "/attachments",
  auth: "user",
  params: {},
  handler(ctx) {
    return {
      attachments: ctx.store.attachments(ctx.user.id).map(attachmentToWire),
      upload_space_used: ctx.store.uploadSpaceUsed(ctx.realm.id),
    };
  },
});

export const deleteAttachmentEndpoint = defineEndpoint({
  method: "DELETE",
  path: "/attachments/:attachment_id",
  pathRefs: { attachment_id: "attachment" },
  auth: "user",
  params: {},
  async handler(ctx) {
    const removed = ctx.store.deleteAttachment(ctx.user.id, attachmentIdParam(ctx));
    await ctx.uploads.files.remove(removed.pathId);
    return {};
  },
});
