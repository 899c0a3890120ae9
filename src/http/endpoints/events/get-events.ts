/**
 * @module http/endpoints/events/get-events
 * GET /events — https://zulip.com/api/get-events
 * Long-polls the caller's queue: acknowledges up to last_event_id, answers at once
 * when events are waiting (or with dont_block), else when one arrives or a heartbeat
 * falls due (45–55 s). 400 BAD_EVENT_QUEUE_ID for an unknown, collected, deleted or
 * foreign queue. Deviations: a queue_id is required (Zulip can create a queue
 * implicitly from register-style parameters; clients do not rely on it), and a backlog
 * over ~1 MB of events is answered in parts, oldest first (realtime/hub.ts,
 * MAX_POLL_ANSWER_CHARS): the next poll gets the rest at once.
 */
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { RawJson } from "../../respond.js";

export default defineEndpoint({
  method: "GET",
  path: "/events",
  auth: "user",
  params: {
    queue_id: p.str({ maxLength: 64 }),
    // -1 (register's last_event_id) acknowledges nothing.
    last_event_id: p.int({ min: -1 }).optional(),
    dont_block: p.bool().default(false),
  },
  testing: {
    notRefs: {
      queue_id: "another user's queue answers exactly like an unknown one (test/realtime/queues.test.ts)",
      last_event_id: "a position in the caller's own queue",
    },
  },
  async handler(ctx, input) {
    const json = await ctx.events.poll(
      ctx.user,
      { queueId: input.queue_id, lastEventId: input.last_event_id, dontBlock: input.dont_block },
      ctx.signal,
    );
    return { events: new RawJson([Buffer.from(json)]), queue_id: input.queue_id };
  },
});
