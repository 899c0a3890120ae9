/**
 * @module http/endpoints/channels
 * Channel administration and lookups: creation, GET, PATCH and DELETE
 * /streams/{stream_id}, its members, GET /get_stream_id, default channels and default
 * channel groups, channel folders, and other users' subscriptions.
 */
import type { Endpoint } from "../../endpoint.js";
import archiveChannel from "./archive-channel.js";
import channelMembers from "./channel-members.js";
import {
  createChannelFolder,
  listChannelFolders,
  reorderChannelFolders,
  updateChannelFolder,
} from "./channel-folders.js";
import createChannel from "./create-channel.js";
import channelEmailAddress from "./email-address.js";
import { addDefaultChannel, removeDefaultChannel } from "./default-channels.js";
import {
  createDefaultChannelGroup,
  removeDefaultChannelGroup,
  updateDefaultChannelGroup,
  updateDefaultChannelGroupChannels,
} from "./default-channel-groups.js";
import getChannel from "./get-channel.js";
import getChannelId from "./get-channel-id.js";
import updateChannel from "./update-channel.js";
import { subscriptionStatus, userChannels } from "./user-channels.js";

export const CHANNEL_ENDPOINTS: readonly Endpoint[] = [
  createChannel,
  getChannel,
  updateChannel,
  archiveChannel,
  channelMembers,
  channelEmailAddress,
  getChannelId,
  addDefaultChannel,
  removeDefaultChannel,
  createDefaultChannelGroup,
  updateDefaultChannelGroup,
  updateDefaultChannelGroupChannels,
  removeDefaultChannelGroup,
  subscriptionStatus,
  userChannels,
  createChannelFolder,
  listChannelFolders,
  reorderChannelFolders,
  updateChannelFolder,
];
