/**
 * @module http/endpoints/messages/delete-message-history
 * DELETE /messages/{message_id}/history — the earlier versions of a message's content
 * dropped from its edit history, for whoever may delete the message (the Zulip fork's
 * delete-message-history; rules in engine/actions/delete-edit-history).
 */
import { BadRequestError } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";

export default defineEndpoint({
  method: "DELETE",
  path: "/messages/:message_id/history",
  pathRefs: { message_id: "message" },
  auth: "user",
  params: {},
  handler(ctx) {
    const raw = ctx.pathParams["message_id"] ?? "";
    if (!/^\d+$/.test(raw)) throw new BadRequestError("Invalid message(s)");
    ctx.store.deleteMessageEditHistory(ctx.user.id, Number(raw));
    return {};
  },
});
