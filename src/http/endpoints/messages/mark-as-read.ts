/**
 * @module http/endpoints/messages/mark-as-read
 * POST /mark_all_as_read — https://zulip.com/api/mark-all-as-read and
 * POST /mark_stream_as_read — https://zulip.com/api/mark-stream-as-read, deprecated
 * in favour of /messages/flags/narrow and still called by older clients.
 *
 * mark_all_as_read marks the caller's unread messages read, oldest first, at most
 * MAX_MARKED_PER_REQUEST per request, and answers `complete: false` when some remain
 * (Zulip stops after 50 seconds the same way; clients call again).
 */
import { defineEndpoint } from "../../endpoint.js";
import { p, ref } from "../../params.js";

/** Messages one mark_all_as_read request marks: ten writes of 5000, a few hundred milliseconds. */
export const MAX_MARKED_PER_REQUEST = 50_000;

export const markAllAsRead = defineEndpoint({
  method: "POST",
  path: "/mark_all_as_read",
  auth: "user",
  params: {},
  handler(ctx) {
    return ctx.store.markAllAsRead(ctx.user.id, MAX_MARKED_PER_REQUEST);
  },
});

export const markStreamAsRead = defineEndpoint({
  method: "POST",
  path: "/mark_stream_as_read",
  auth: "user",
  params: { stream_id: ref(p.int(), "channel") },
  // Concurrent flag changes share one fsync (group commit); the answer waits for it.
  async handler(ctx, input) {
    await ctx.store.markTopicAsReadGrouped(ctx.user.id, input.stream_id, null);
    return {};
  },
});
