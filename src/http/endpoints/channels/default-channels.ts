/**
 * @module http/endpoints/channels/default-channels
 * POST /default_streams and DELETE /default_streams — https://zulip.com/api/add-default-stream,
 * https://zulip.com/api/remove-default-stream. Administrators add a public channel
 * they can read to the channels new users join, or take one off; the engine's
 * setDefaultChannel decides, and every non-guest hears the new list (`default_streams`).
 */
import { defineEndpoint } from "../../endpoint.js";
import { p, ref } from "../../params.js";

const stream = () => ref(p.int(), "channel");

export const addDefaultChannel = defineEndpoint({
  method: "POST",
  path: "/default_streams",
  auth: "user",
  params: { stream_id: stream() },
  handler(ctx, input) {
    ctx.store.setDefaultChannel(ctx.user.id, input.stream_id, true);
    return {};
  },
});

export const removeDefaultChannel = defineEndpoint({
  method: "DELETE",
  path: "/default_streams",
  auth: "user",
  params: { stream_id: stream() },
  handler(ctx, input) {
    ctx.store.setDefaultChannel(ctx.user.id, input.stream_id, false);
    return {};
  },
});
