/**
 * @module http/endpoints/subscriptions/update-subscriptions
 * PATCH /users/me/subscriptions — https://zulip.com/api/update-subscriptions
 * Zulip's update_subscriptions_backend: `add` (as subscribe's `subscriptions`, unknown
 * names created) and `delete` (as unsubscribe's), for the caller, answered together
 * ({subscribed, already_subscribed, removed, not_removed}). Every name to delete is
 * checked before anything is added, so a refusal changes nothing (Zulip rolls the
 * request back as one transaction).
 *
 * Deviation: an item's `color` is checked and ignored, as in subscribe.
 */
import { z } from "zod";
import { BadRequestError } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { compoundRef, j, p, ref } from "../../params.js";
import { MAX_NEW_CHANNELS_PER_REQUEST, MAX_SUBSCRIPTION_CHANNELS } from "./wire-params.js";

const item = z.object({ name: z.string(), description: z.string().optional(), color: z.string().optional() });

/** Map of user ID -> channel names, keyed by the ID as a string. */
function byUser(map: ReadonlyMap<number, readonly string[]>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [userId, names] of map) out[String(userId)] = [...names];
  return out;
}

export default defineEndpoint({
  method: "PATCH",
  path: "/users/me/subscriptions",
  auth: "user",
  params: {
    add: compoundRef(p.json(z.array(item), { maxItems: MAX_SUBSCRIPTION_CHANNELS }), ["channelName"]).optional(),
    delete: ref(p.json(j.stringList(), { maxItems: MAX_SUBSCRIPTION_CHANNELS }), "channelNameList").optional(),
  },
  testing: {
    probes: { add: [{ names: "channelName", label: "name", encode: (name) => JSON.stringify([{ name }]) }] },
    sweepExceptions: [
      {
        param: "add",
        scenario: "bob: private places",
        reason:
          "as subscribe: an unused name is created, a private channel's name is refused " +
          "('Unable to access channel (NAME).').",
      },
    ],
  },
  handler(ctx, input) {
    const add = input.add ?? [];
    const remove = input.delete ?? [];
    if (add.length === 0 && remove.length === 0)
      throw new BadRequestError('Nothing to do. Specify at least one of "add" or "delete".');
    for (const { color } of add)
      if (color !== undefined && !/^#([a-fA-F0-9]{3,6})$/.test(color))
        throw new BadRequestError("add.color is not a valid hex color code");
    if (remove.length > 0) ctx.store.checkUnsubscribe(ctx.user.id, remove);
    const added =
      add.length === 0
        ? null
        : ctx.store.subscribe(ctx.user.id, {
            channels: add.map((s) =>
              s.description === undefined
                ? { name: s.name }
                : { name: s.name, description: s.description.replace(/\r?\n/g, " ") },
            ),
            creationMessages: { announce: false },
            maxNewChannels: MAX_NEW_CHANNELS_PER_REQUEST,
          });
    const removed = remove.length === 0 ? null : ctx.store.unsubscribe(ctx.user.id, remove);
    return {
      subscribed: added ? byUser(added.subscribed) : {},
      already_subscribed: added ? byUser(added.alreadySubscribed) : {},
      removed: removed ? [...removed.removed] : [],
      not_removed: removed ? [...removed.notRemoved] : [],
    };
  },
});
