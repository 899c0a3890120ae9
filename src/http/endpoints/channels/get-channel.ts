/**
 * @module http/endpoints/channels/get-channel
 * GET /streams/{stream_id} — https://zulip.com/api/get-stream-by-id
 * The channel for anyone with its metadata (Zulip's access_stream_by_id without
 * content access): subscribers, non-guests for public channels, administrators and
 * the channel's permission groups for private ones; archived channels too (Zulip
 * since feature level 480).
 */
import { defineEndpoint } from "../../endpoint.js";
import { channelToWire } from "../../../wire/channel.js";
import { channelIdParam } from "./path.js";

export default defineEndpoint({
  method: "GET",
  path: "/streams/:stream_id",
  pathRefs: { stream_id: "channel" },
  auth: "user",
  params: {},
  handler(ctx) {
    return { stream: channelToWire(ctx.store, ctx.store.channelForViewer(ctx.user.id, channelIdParam(ctx))) };
  },
});
