/**
 * @module http/endpoints/subscriptions/update-properties
 * POST /users/me/subscriptions/properties — https://zulip.com/api/update-subscription-settings
 * `subscription_data`: [{stream_id, property, value}], property one of color,
 * is_muted, in_home_view (deprecated inverse), pin_to_top, desktop_notifications,
 * audible_notifications, push_notifications, email_notifications,
 * wildcard_mentions_notify. Checked and applied by the engine
 * (actions/subscriptions.ts), all or nothing.
 */
import { z } from "zod";
import { defineEndpoint } from "../../endpoint.js";
import { compoundRef, p } from "../../params.js";

/** Zulip has about ten properties per channel; a client changing many channels at once stays far below this. */
const MAX_CHANGES = 1000;

const change = z.object({
  stream_id: z.number().int(),
  property: z.string().max(100),
  value: z.union([z.boolean(), z.string().max(100)]),
});

export default defineEndpoint({
  method: "POST",
  path: "/users/me/subscriptions/properties",
  auth: "user",
  params: {
    subscription_data: compoundRef(p.json(z.array(change), { maxItems: MAX_CHANGES }), ["channel"]),
  },
  testing: {
    probes: {
      subscription_data: [
        {
          names: "channel",
          label: "stream_id",
          encode: (id) => JSON.stringify([{ stream_id: id, property: "pin_to_top", value: true }]),
        },
      ],
    },
  },
  handler(ctx, input) {
    ctx.store.updateSubscriptionProperties(
      ctx.user.id,
      input.subscription_data.map((c) => ({ channelId: c.stream_id, property: c.property, value: c.value })),
    );
    return {};
  },
});
