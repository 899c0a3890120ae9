/**
 * @module http/endpoints/user-topics/legacy-muted-topics
 * PATCH /users/me/subscriptions/muted_topics — https://zulip.com/api/mute-topic
 * (deprecated in favour of POST /user_topics; older clients still call it). `stream_id`
 * or `stream` (exactly one), `topic`, `op` add or remove. Rules in the engine
 * (actions/legacy-muted-topics.ts).
 */
import { MAX_CHANNEL_NAME_LENGTH } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { p, ref } from "../../params.js";

export default defineEndpoint({
  method: "PATCH",
  path: "/users/me/subscriptions/muted_topics",
  auth: "user",
  params: {
    stream_id: ref(p.int(), "channel").optional(),
    stream: ref(p.str({ maxLength: 4 * MAX_CHANNEL_NAME_LENGTH }), "channelName").optional(),
    // The engine enforces the 60-character limit; this bounds the work before it.
    topic: p.str({ maxLength: 600 }),
    op: p.oneOf(["add", "remove"] as const),
  },
  // Unmuting answers "Topic is not muted" for any channel it cannot act on: only muting is swept.
  testing: { sweepBases: [{ params: { topic: "t", op: "add" } }] },
  handler(ctx, input) {
    ctx.store.updateLegacyMutedTopic(ctx.user.id, {
      ...(input.stream_id !== undefined ? { channelId: input.stream_id } : {}),
      ...(input.stream !== undefined ? { channelName: input.stream } : {}),
      topic: input.topic,
      op: input.op,
    });
    return {};
  },
});
