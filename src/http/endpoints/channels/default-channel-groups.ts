/**
 * @module http/endpoints/channels/default-channel-groups
 * Default channel groups — https://zulip.com/api/create-default-stream-group and its
 * siblings: POST /default_stream_groups/create, PATCH /default_stream_groups/{group_id}
 * (new_group_name, new_description), PATCH /default_stream_groups/{group_id}/streams
 * (op add or remove, stream_names) and DELETE /default_stream_groups/{group_id}. Those who
 * manage default channels (administrators) change them, with Zulip's checks in its order
 * (the engine's actions/default-channel-groups); register's realm_default_stream_groups
 * lists them and every non-guest hears each change (`default_stream_groups`).
 */
import {
  BadRequestError,
  MAX_DEFAULT_CHANNEL_GROUP_DESCRIPTION_LENGTH,
  MAX_DEFAULT_CHANNEL_GROUP_NAME_LENGTH,
} from "../../../engine/index.js";
import { defineEndpoint, type AuthedContext } from "../../endpoint.js";
import { j, p, ref } from "../../params.js";

/** Channels one request names at most: far above a group's useful size. */
const MAX_CHANNEL_NAMES = 1000;

// Longer than the engine's limit, so that Zulip's own message ("... too long (limit: 60 characters)") answers.
const groupName = () => p.str({ maxLength: 4 * MAX_DEFAULT_CHANNEL_GROUP_NAME_LENGTH });
const description = () => p.str({ maxLength: MAX_DEFAULT_CHANNEL_GROUP_DESCRIPTION_LENGTH });
const channelNames = () => ref(p.json(j.stringList(), { maxItems: MAX_CHANNEL_NAMES }), "channelNameList");

function groupIdParam(ctx: AuthedContext): number {
  const raw = ctx.pathParams["group_id"] ?? "";
  if (!/^\d{1,9}$/.test(raw)) throw new BadRequestError("Invalid default channel group ID");
  return Number(raw);
}

export const createDefaultChannelGroup = defineEndpoint({
  method: "POST",
  path: "/default_stream_groups/create",
  auth: "user",
  params: { group_name: groupName(), description: description(), stream_names: channelNames() },
  testing: {
    notRefs: { group_name: "the new group's name, checked for uniqueness in the caller's realm only" },
    sweepBases: [{ params: { group_name: (f) => f.fresh("group"), description: "" } }],
  },
  handler(ctx, input) {
    ctx.store.createDefaultChannelGroup(ctx.user.id, {
      name: input.group_name,
      description: input.description,
      channelNames: input.stream_names,
    });
    return {};
  },
});

export const updateDefaultChannelGroup = defineEndpoint({
  method: "PATCH",
  path: "/default_stream_groups/:group_id",
  pathRefs: { group_id: "defaultChannelGroup" },
  auth: "user",
  params: { new_group_name: groupName().optional(), new_description: description().optional() },
  testing: {
    notRefs: { new_group_name: "the group's new name, checked for uniqueness in the caller's realm only" },
    sweepBases: [{ params: { new_description: "changed" } }],
  },
  handler(ctx, input) {
    ctx.store.updateDefaultChannelGroupInfo(ctx.user.id, groupIdParam(ctx), {
      name: input.new_group_name,
      description: input.new_description,
    });
    return {};
  },
});

export const updateDefaultChannelGroupChannels = defineEndpoint({
  method: "PATCH",
  path: "/default_stream_groups/:group_id/streams",
  pathRefs: { group_id: "defaultChannelGroup" },
  auth: "user",
  // Zulip checks op after the group and the channels: any string is taken here.
  params: { op: p.str({ maxLength: 100 }), stream_names: channelNames() },
  testing: {
    sweepBases: [
      { params: { op: "add", stream_names: "[]" }, for: ["group_id"] },
      { params: { op: "add", group_id: (f) => String(f.defaultChannelGroup) }, for: ["stream_names"] },
    ],
  },
  handler(ctx, input) {
    ctx.store.updateDefaultChannelGroupChannels(ctx.user.id, groupIdParam(ctx), input.op, input.stream_names);
    return {};
  },
});

export const removeDefaultChannelGroup = defineEndpoint({
  method: "DELETE",
  path: "/default_stream_groups/:group_id",
  pathRefs: { group_id: "defaultChannelGroup" },
  auth: "user",
  params: {},
  handler(ctx) {
    ctx.store.removeDefaultChannelGroup(ctx.user.id, groupIdParam(ctx));
    return {};
  },
});
