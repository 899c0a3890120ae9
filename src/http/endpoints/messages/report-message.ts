/**
 * @module http/endpoints/messages/report-message
 * POST /messages/{message_id}/report — https://zulip.com/api/report-message
 * Notification Bot posts the report in the realm's moderation request channel (the engine's actions/message-report).
 * `description` is required for `report_type` "other"; refused while the realm names no moderation request channel.
 */
import { BadRequestError, MAX_REPORT_DESCRIPTION_LENGTH, REPORT_TYPES } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";

export default defineEndpoint({
  method: "POST",
  path: "/messages/:message_id/report",
  pathRefs: { message_id: "message" },
  auth: "user",
  params: {
    report_type: p.oneOf(REPORT_TYPES),
    description: p.str({ maxLength: MAX_REPORT_DESCRIPTION_LENGTH }).default(""),
  },
  handler(ctx, input) {
    const raw = ctx.pathParams["message_id"] ?? "";
    if (!/^\d+$/.test(raw)) throw new BadRequestError("Invalid message(s)");
    ctx.store.reportMessage(ctx.user.id, Number(raw), {
      reportType: input.report_type,
      description: input.description,
    });
    return {};
  },
});
