/**
 * @module http/endpoints/subscriptions/unsubscribe
 * DELETE /users/me/subscriptions — https://zulip.com/api/unsubscribe
 * Who may remove whom (administrators, bot owners, can_remove_subscribers_group) is
 * decided by the engine's unsubscribe.
 */
import { defineEndpoint } from "../../endpoint.js";
import { j, p, ref } from "../../params.js";
import { checkSubscriptionRows, MAX_SUBSCRIPTION_CHANNELS, MAX_SUBSCRIPTION_PRINCIPALS } from "./wire-params.js";

export default defineEndpoint({
  method: "DELETE",
  path: "/users/me/subscriptions",
  auth: "user",
  params: {
    subscriptions: ref(p.json(j.stringList(), { maxItems: MAX_SUBSCRIPTION_CHANNELS }), "channelNameList"),
    principals: ref(
      p.json(j.intOrStringList(), { maxItems: MAX_SUBSCRIPTION_PRINCIPALS }),
      "userListOrEmails",
    ).optional(),
  },
  testing: {
    sweepBases: [
      { params: {}, for: ["subscriptions"] },
      { params: { subscriptions: JSON.stringify(["general"]) }, for: ["principals"] },
    ],
  },
  handler(ctx, input) {
    checkSubscriptionRows(input.subscriptions.length, input.principals?.length);
    const result = ctx.store.unsubscribe(ctx.user.id, input.subscriptions, input.principals);
    return { removed: [...result.removed], not_removed: [...result.notRemoved] };
  },
});
