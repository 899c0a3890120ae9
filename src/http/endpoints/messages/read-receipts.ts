/**
 * @module http/endpoints/messages/read-receipts
 * GET /messages/{message_id}/read_receipts — https://zulip.com/api/get-read-receipts
 * `user_ids`: who has the message marked read (Zulip's rules, in the engine's queries/read-receipts). Refused with
 * "Read receipts are disabled in this organization." when the realm's `enable_read_receipts` is off.
 */
import { BadRequestError } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";

export default defineEndpoint({
  method: "GET",
  path: "/messages/:message_id/read_receipts",
  pathRefs: { message_id: "message" },
  auth: "user",
  params: {},
  handler(ctx) {
    const raw = ctx.pathParams["message_id"] ?? "";
    if (!/^\d+$/.test(raw)) throw new BadRequestError("Invalid message(s)");
    return { user_ids: ctx.store.readReceipts(ctx.user.id, Number(raw)) };
  },
});
