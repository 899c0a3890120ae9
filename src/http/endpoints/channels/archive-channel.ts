/**
 * @module http/endpoints/channels/archive-channel
 * DELETE /streams/{stream_id} — https://zulip.com/api/archive-stream
 * Archives the channel (administrators and the channel's can_administer_channel_group;
 * the engine's archiveChannel). Unarchiving is PATCH with is_archived=false.
 */
import { defineEndpoint } from "../../endpoint.js";
import { channelIdParam } from "./path.js";

export default defineEndpoint({
  method: "DELETE",
  path: "/streams/:stream_id",
  pathRefs: { stream_id: "channel" },
  auth: "user",
  params: {},
  handler(ctx) {
    ctx.store.archiveChannel(ctx.user.id, channelIdParam(ctx));
    return {};
  },
});
