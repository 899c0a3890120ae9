/**
 * @module http/endpoints/subscriptions/get-streams
 * GET /streams — https://zulip.com/api/get-streams
 * Zulip's do_get_streams: the union of the requested classes (subscribed, public,
 * web-public, the bot owner's subscriptions, content-accessible), or every channel
 * with include_all (administrators only; include_all_active is its old name), then
 * only channels the caller can see (access.ts canSeeChannel), sorted by name.
 */
import { canAccessChannelHistory, canSeeChannel, isAdmin, isSubscribed } from "../../../engine/access.js";
import { BadRequestError } from "../../../engine/errors.js";
import type { Channel } from "../../../engine/types.js";
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { byName, channelToWire } from "../../views/channel.js";

export default defineEndpoint({
  method: "GET",
  path: "/streams",
  auth: "user",
  aliases: { include_all_active: "include_all" },
  params: {
    include_public: p.bool().default(true),
    include_web_public: p.bool().default(false),
    include_subscribed: p.bool().default(true),
    exclude_archived: p.bool().default(true),
    include_all: p.bool().default(false),
    include_default: p.bool().default(false),
    include_owner_subscribed: p.bool().default(false),
    include_can_access_content: p.bool().default(false),
  },
  handler(ctx, input) {
    const { store, user } = ctx;
    const state = store.state;
    if (input.include_all && !isAdmin(user)) throw new BadRequestError("User not authorized for this query");
    const owner = user.isBot && user.botOwnerId !== null ? state.users.get(user.botOwnerId) : undefined;
    const wanted = (channel: Channel): boolean => {
      if (input.include_all) return true;
      if (input.include_subscribed && isSubscribed(state, user.id, channel.id)) return true;
      if (input.include_public && !channel.inviteOnly) return true;
      if (input.include_web_public && channel.isWebPublic) return true;
      if (input.include_owner_subscribed && owner && isSubscribed(state, owner.id, channel.id)) return true;
      if (input.include_can_access_content && (isSubscribed(state, user.id, channel.id) || canAccessChannelHistory(state, user, channel))) return true;
      return false;
    };
    const channels: Channel[] = [];
    for (const channel of state.channels.values()) {
      if (channel.realmId !== user.realmId) continue;
      if (input.exclude_archived && channel.isArchived) continue;
      if (wanted(channel) && canSeeChannel(state, user, channel)) channels.push(channel);
    }
    return {
      streams: channels.sort(byName).map((channel) => ({
        ...channelToWire(store, channel),
        ...(input.include_default ? { is_default: channel.isDefault } : {}),
      })),
    };
  },
});
