/**
 * @module http/endpoints/channels
 * Channel administration and lookups: GET, PATCH and DELETE /streams/{stream_id},
 * its members, and GET /get_stream_id.
 */
import type { Endpoint } from "../../endpoint.js";
import archiveChannel from "./archive-channel.js";
import channelMembers from "./channel-members.js";
import getChannel from "./get-channel.js";
import getChannelId from "./get-channel-id.js";
import updateChannel from "./update-channel.js";

export const CHANNEL_ENDPOINTS: readonly Endpoint[] = [
  getChannel,
  updateChannel,
  archiveChannel,
  channelMembers,
  getChannelId,
];
