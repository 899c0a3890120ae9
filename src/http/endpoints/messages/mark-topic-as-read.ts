/**
 * @module http/endpoints/messages/mark-topic-as-read
 * POST /mark_topic_as_read (deprecated in favour of /messages/flags/narrow)
 * — https://zulip.com/api/mark-topic-as-read. The empty-topic display name means "".
 */
import { defineEndpoint } from "../../endpoint.js";
import { p, ref } from "../../params.js";

export default defineEndpoint({
  method: "POST",
  path: "/mark_topic_as_read",
  auth: "user",
  params: {
    stream_id: ref(p.int(), "channel"),
    topic_name: p.str(),
  },
  testing: { sweepBases: [{ params: { topic_name: "t" } }] },
  // Concurrent flag changes share one fsync (group commit); the answer waits for it.
  async handler(ctx, input) {
    await ctx.store.markTopicAsReadGrouped(ctx.user.id, input.stream_id, input.topic_name);
    return {};
  },
});
