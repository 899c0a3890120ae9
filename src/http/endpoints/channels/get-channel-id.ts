/**
 * @module http/endpoints/channels/get-channel-id
 * GET /get_stream_id — https://zulip.com/api/get-stream-id
 * A channel's ID by name (any letter case), for a caller with its content (Zulip's
 * access_stream_by_name): "Invalid channel name 'NAME'" otherwise, alike for channels
 * that exist and those that do not.
 */
import { MAX_CHANNEL_NAME_LENGTH } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { p, ref } from "../../params.js";

export default defineEndpoint({
  method: "GET",
  path: "/get_stream_id",
  auth: "user",
  params: {
    // Longer than any channel name can be (names are trimmed first), so nothing it refuses exists.
    stream: ref(p.str({ maxLength: 4 * MAX_CHANNEL_NAME_LENGTH }), "channelName"),
  },
  handler(ctx, input) {
    return { stream_id: ctx.store.channelIdByName(ctx.user.id, input.stream) };
  },
});
