/**
 * @module http/endpoints/subscriptions/get-subscriptions
 * GET /users/me/subscriptions — https://zulip.com/api/get-subscriptions
 * The caller's active subscriptions, sorted by channel name.
 * Deviation: include_subscribers=partial is served like true (full lists).
 */
import type { Store } from "../../../engine/index.js";
import type { User } from "../../../engine/types.js";
import { defineEndpoint } from "../../endpoint.js";
import { byName, subscriptionToWire } from "../../views/channel.js";
import { includeSubscribers } from "./wire-params.js";

/** Subscription objects for the user's active (or, with active false, past) subscriptions. */
export function subscriptionList(store: Store, user: User, active: boolean, withSubscribers: boolean, includeArchived: boolean): Record<string, unknown>[] {
  const out: { name: string; wire: Record<string, unknown> }[] = [];
  for (const sub of store.state.subsByUser.get(user.id)?.values() ?? []) {
    if (sub.active !== active) continue;
    const channel = store.state.channels.get(sub.channelId);
    if (!channel || (!includeArchived && channel.isArchived)) continue;
    out.push({ name: channel.name, wire: subscriptionToWire(store, user, sub, channel, withSubscribers) });
  }
  return out.sort(byName).map((s) => s.wire);
}

export default defineEndpoint({
  method: "GET",
  path: "/users/me/subscriptions",
  auth: "user",
  params: {
    include_subscribers: includeSubscribers().default(false),
  },
  handler(ctx, input) {
    return { subscriptions: subscriptionList(ctx.store, ctx.user, true, input.include_subscribers, true) };
  },
});
