/**
 * @module http/endpoints/subscriptions/get-streams
 * GET /streams — https://zulip.com/api/get-streams
 * Zulip's do_get_streams: the union of the requested classes (subscribed, public,
 * web-public, the bot owner's subscriptions, content-accessible), or every channel
 * with include_all (administrators only; include_all_active is its old name), then
 * only channels the caller can see, sorted by name: the engine's getChannels.
 */
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { channelToWire } from "../../../wire/channel.js";

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
    const channels = ctx.store.getChannels(ctx.user.id, {
      includePublic: input.include_public,
      includeWebPublic: input.include_web_public,
      includeSubscribed: input.include_subscribed,
      excludeArchived: input.exclude_archived,
      includeAll: input.include_all,
      includeOwnerSubscribed: input.include_owner_subscribed,
      includeCanAccessContent: input.include_can_access_content,
    });
    return {
      streams: channels.map((channel) => ({
        ...channelToWire(ctx.store, channel),
        ...(input.include_default ? { is_default: channel.isDefault } : {}),
      })),
    };
  },
});
