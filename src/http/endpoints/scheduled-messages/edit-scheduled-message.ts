/**
 * @module http/endpoints/scheduled-messages/edit-scheduled-message
 * PATCH /scheduled_messages/{scheduled_message_id} — https://zulip.com/api/update-scheduled-message
 * A new type needs `to` (and `topic` when it becomes a channel message); the topic of
 * a direct message is ignored; a failed message needs a new time. Any edit clears
 * `failed`.
 */
import { defineEndpoint } from "../../endpoint.js";
import type { SweepFixture } from "../../endpoint-testing.js";
import { p } from "../../params.js";
import { normalizeType, parseTo, scheduledIdParam, toParam, typeParam } from "./wire-params.js";

const own = (fixture: SweepFixture) => String(fixture.ownScheduledMessage);

export default defineEndpoint({
  method: "PATCH",
  path: "/scheduled_messages/:scheduled_message_id",
  pathRefs: { scheduled_message_id: "scheduledMessage" },
  auth: "user",
  params: {
    type: typeParam().optional(),
    to: toParam().optional(),
    content: p.str().optional(),
    topic: p.str().optional(),
    scheduled_delivery_timestamp: p.int().optional(),
  },
  // `to` edits each caller's own scheduled message (a direct message to themselves).
  testing: {
    sweepBases: [
      { params: { content: "changed" }, for: ["scheduled_message_id"] },
      { params: { scheduled_message_id: own, type: "stream", topic: "t" }, for: ["to"] },
      { params: { scheduled_message_id: own, type: "direct" }, for: ["to"] },
    ],
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
