/**
 * @module http/endpoints/user-topics/update-user-topic
 * POST /user_topics — https://zulip.com/api/update-user-topic
 * visibility_policy 0 (none), 1 (muted), 2 (unmuted), 3 (followed); the topic need
 * not have messages; the realm's empty-topic display name means the empty topic.
 * Rules in the engine (actions/user-topics.ts).
 */
import { defineEndpoint } from "../../endpoint.js";
import { p, ref } from "../../params.js";

export default defineEndpoint({
  method: "POST",
  path: "/user_topics",
  auth: "user",
  params: {
    stream_id: ref(p.int(), "channel"),
    // The engine enforces the 60-character limit; this bounds the work before it.
    topic: p.str({ maxLength: 600 }),
    visibility_policy: p.int(),
  },
  // Removing a policy (0) is allowed in any channel of the caller's realm by Zulip's design: only setting one is swept.
  testing: {
    sweepBases: [
      { params: { topic: "t", visibility_policy: "1" } },
      { params: { topic: "t", visibility_policy: "3" } },
    ],
  },
  handler(ctx, input) {
    ctx.store.setTopicPolicy(ctx.user.id, input.stream_id, input.topic, input.visibility_policy);
    return {};
  },
});
