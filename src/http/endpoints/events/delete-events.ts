/**
 * @module http/endpoints/events/delete-events
 * DELETE /events — https://zulip.com/api/delete-queue
 * Deletes the caller's queue; BAD_EVENT_QUEUE_ID if it is unknown or already gone.
 */
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";

export default defineEndpoint({
  method: "DELETE",
  path: "/events",
  auth: "user",
  params: {
    queue_id: p.str({ maxLength: 64 }),
  },
  testing: {
    notRefs: { queue_id: "another user's queue answers exactly like an unknown one (test/realtime/queues.test.ts)" },
  },
  async handler(ctx, input) {
    // A queue held by another worker of `parley serve --workers` moves here first.
    await ctx.events.delete(ctx.user, input.queue_id);
    return {};
  },
});
