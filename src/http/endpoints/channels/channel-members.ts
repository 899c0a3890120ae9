/**
 * @module http/endpoints/channels/channel-members
 * GET /streams/{stream_id}/members — https://zulip.com/api/get-subscribers
 * The channel's active subscribers, for anyone with its metadata.
 */
import { defineEndpoint } from "../../endpoint.js";
import { channelIdParam } from "./path.js";

export default defineEndpoint({
  method: "GET",
  path: "/streams/:stream_id/members",
  pathRefs: { stream_id: "channel" },
  auth: "user",
  params: {},
  handler(ctx) {
    return { subscribers: [...ctx.store.channelMembers(ctx.user.id, channelIdParam(ctx))] };
  },
});
