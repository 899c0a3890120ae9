/**
 * @module http/endpoints/messages/delete-message
 * DELETE /messages/{message_id} — https://zulip.com/api/delete-message
 * Zulip's can_delete_any_message_group / can_delete_own_message_group (realm and
 * channel) and message_content_delete_limit_seconds, decided in the engine.
 */
import { BadRequestError } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";

export default defineEndpoint({
  method: "DELETE",
  path: "/messages/:message_id",
  pathRefs: { message_id: "message" },
  auth: "user",
  params: {},
  async handler(ctx) {
    const raw = ctx.pathParams["message_id"] ?? "";
    if (!/^\d+$/.test(raw)) throw new BadRequestError("Invalid message(s)");
    await ctx.store.deleteMessage(ctx.user.id, Number(raw));
    return {};
  },
});
