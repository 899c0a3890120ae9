/**
 * @module http/endpoints/scheduled-messages/create-scheduled-message
 * POST /scheduled_messages — https://zulip.com/api/create-scheduled-message
 * Checked like POST /messages (topic rules, channel access, recipients: "Invalid user
 * ID N", STREAM_DOES_NOT_EXIST with stream_id); the time must be in the future.
 * read_by_sender defaults by client and recipient (engine).
 */
import { defineEndpoint } from "../../endpoint.js";
import type { SweepFixture } from "../../endpoint-testing.js";
import { p } from "../../params.js";
import { channelIdOf, normalizeType, parseTo, toParam, typeParam, userIdsOf } from "./wire-params.js";

const later = (fixture: SweepFixture) => fixture.later();

export default defineEndpoint({
  method: "POST",
  path: "/scheduled_messages",
  auth: "user",
  params: {
    type: typeParam(),
    to: toParam(),
    content: p.str(),
    topic: p.str().optional(),
    scheduled_delivery_timestamp: p.int(),
    read_by_sender: p.bool().optional(),
  },
  testing: {
    sweepBases: [
      { params: { type: "stream", topic: "t", content: "x", scheduled_delivery_timestamp: later } },
      { params: { type: "direct", content: "x", scheduled_delivery_timestamp: later } },
    ],
  },
  handler(ctx, input) {
    const to = parseTo(input.to);
    const scheduled = ctx.store.scheduleMessage(ctx.user.id, {
      to:
        normalizeType(input.type) === "channel"
          ? { type: "channel", channelId: channelIdOf(to), topic: input.topic }
          : { type: "direct", userIds: userIdsOf(to) },
      content: input.content,
      deliverAt: input.scheduled_delivery_timestamp,
      client: ctx.client,
      ...(input.read_by_sender !== undefined ? { readBySender: input.read_by_sender } : {}),
    });
    return { scheduled_message_id: scheduled.id };
  },
});
