/**
 * @module http/endpoints/scheduled-messages/edit-scheduled-message
 * PATCH /scheduled_messages/{scheduled_message_id} — https://zulip.com/api/update-scheduled-message
 * A new type needs `to` (and `topic` when it becomes a channel message); the topic of
 * a direct message is ignored; a failed message needs a new time. Any edit clears
 * `failed`.
 */
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { normalizeType, parseTo, scheduledIdParam, typeParam } from "./wire-params.js";

export default defineEndpoint({
  method: "PATCH",
  path: "/scheduled_messages/:scheduled_message_id",
  auth: "user",
  params: {
    type: typeParam().optional(),
    to: p.str().optional(),
    content: p.str().optional(),
    topic: p.str().optional(),
    scheduled_delivery_timestamp: p.int().optional(),
  },
  handler(ctx, input) {
    const id = scheduledIdParam(ctx);
    ctx.store.editScheduledMessage(ctx.user.id, id, {
      ...(input.type !== undefined ? { type: normalizeType(input.type) } : {}),
      ...(input.to !== undefined ? { to: parseTo(input.to) } : {}),
      ...(input.content !== undefined ? { content: input.content } : {}),
      ...(input.topic !== undefined ? { topic: input.topic } : {}),
      ...(input.scheduled_delivery_timestamp !== undefined ? { deliverAt: input.scheduled_delivery_timestamp } : {}),
    });
    return {};
  },
});
