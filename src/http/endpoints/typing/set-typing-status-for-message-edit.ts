/**
 * @module http/endpoints/typing/set-typing-status-for-message-edit
 * POST /messages/{message_id}/typing — https://zulip.com/api/set-typing-status-for-message-edit
 * (Zulip 10, feature level 351). The caller must be allowed to edit the message's
 * content now (Zulip's validate_user_can_edit_message); the engine releases a
 * typing_edit_message event to the channel's subscribers or the conversation's
 * participants.
 */
import { BadRequestError } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";

export default defineEndpoint({
  method: "POST",
  path: "/messages/:message_id/typing",
  pathRefs: { message_id: "message" },
  auth: "user",
  params: {
    op: p.oneOf(["start", "stop"] as const),
  },
  testing: { sweepBases: [{ params: { op: "start" } }] },
  handler(ctx, input) {
    const raw = ctx.pathParams["message_id"] ?? "";
    if (!/^\d{1,10}$/.test(raw)) throw new BadRequestError("Invalid message(s)");
    ctx.store.notifyEditTyping(ctx.user.id, Number(raw), input.op);
    return {};
  },
});
