/**
 * @module http/endpoints/channels/user-channels
 * GET /users/{user_id}/subscriptions/{stream_id} — https://zulip.com/api/get-subscription-status
 * and GET /users/{user_id}/channels — https://zulip.com/api/get-user-channels.
 * Another user's subscriptions, as far as the caller may see the channels: whether
 * they are subscribed to one (a channel whose metadata the caller has), and the IDs of
 * their channels the caller can see (every one, for administrators). Bots are users
 * here (Zulip since feature level 458); deactivated users are "No such user".
 */
import { BadRequestError } from "../../../engine/index.js";
import { defineEndpoint, type AuthedContext } from "../../endpoint.js";
import { channelIdParam } from "./path.js";

function userIdParam(ctx: AuthedContext): number {
  const raw = ctx.pathParams["user_id"] ?? "";
  if (!/^\d{1,9}$/.test(raw)) throw new BadRequestError("No such user");
  return Number(raw);
}

export const subscriptionStatus = defineEndpoint({
  method: "GET",
  path: "/users/:user_id/subscriptions/:stream_id",
  pathRefs: { user_id: "user", stream_id: "channel" },
  auth: "user",
  params: {},
  handler(ctx) {
    return { is_subscribed: ctx.store.isUserSubscribed(ctx.user.id, userIdParam(ctx), channelIdParam(ctx)) };
  },
});

export const userChannels = defineEndpoint({
  method: "GET",
  path: "/users/:user_id/channels",
  pathRefs: { user_id: "user" },
  auth: "user",
  params: {},
  handler(ctx) {
    return { subscribed_channel_ids: ctx.store.userChannelIds(ctx.user.id, userIdParam(ctx)) };
  },
});
