/**
 * @module http/endpoints/subscriptions/get-subscriptions
 * GET /users/me/subscriptions — https://zulip.com/api/get-subscriptions
 * The caller's active subscriptions, sorted by channel name.
 * Deviation: include_subscribers=partial is served like true (full lists).
 */
import type { Store, User } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { subscriptionToWire } from "../../../wire/channel.js";
import { includeSubscribers } from "./wire-params.js";

/** Subscription objects for the user's active subscriptions, by channel name. */
export function subscriptionList(
  store: Store,
  user: User,
  withSubscribers: boolean,
  includeArchived: boolean,
): Record<string, unknown>[] {
  return store
    .subscriptionLists(user.id, includeArchived)
    .subscribed.map((s) => subscriptionToWire(store, user, s.subscription, s.channel, withSubscribers));
}

export default defineEndpoint({
  method: "GET",
  path: "/users/me/subscriptions",
  auth: "user",
  params: {
    include_subscribers: includeSubscribers().default(false),
  },
  handler(ctx, input) {
    return { subscriptions: subscriptionList(ctx.store, ctx.user, input.include_subscribers, true) };
  },
});
