/**
 * @module http/endpoints/subscriptions/update-property
 * PATCH /users/me/subscriptions/{stream_id} — https://zulip.com/api/update-subscription-property
 * One property of one subscription: the single-channel form of POST
 * /users/me/subscriptions/properties (same properties, checks and events). `value`
 * is a JSON boolean, or else the text as sent (a color).
 */
import { BadRequestError } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";

export default defineEndpoint({
  method: "PATCH",
  path: "/users/me/subscriptions/:stream_id",
  pathRefs: { stream_id: "channel" },
  auth: "user",
  params: {
    property: p.str({ maxLength: 100 }),
    value: p.str({ maxLength: 100 }),
  },
  testing: { sweepBases: [{ params: { property: "pin_to_top", value: "true" } }] },
  handler(ctx, input) {
    const raw = ctx.pathParams["stream_id"] ?? "";
    if (!/^\d{1,9}$/.test(raw)) throw new BadRequestError("Invalid channel ID");
    const text = input.value.trim();
    const value = text === "true" ? true : text === "false" ? false : input.value;
    ctx.store.updateSubscriptionProperties(ctx.user.id, [{ channelId: Number(raw), property: input.property, value }]);
    return {};
  },
});
