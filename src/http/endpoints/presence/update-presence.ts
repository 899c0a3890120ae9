/**
 * @module http/endpoints/presence/update-presence
 * POST /users/me/presence — https://zulip.com/api/update-presence
 * Records the caller's status (in memory; see engine actions/presence.ts for
 * durability), then answers with the realm's presence unless ping_only: by user ID
 * when last_update_id or slim_presence is given, else by email. `new_user_input`
 * feeds Zulip's activity analytics, which parley does not keep: accepted, unused.
 */
import { BadRequestError, clip } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { presencesToWire } from "../../../wire/presence.js";

export default defineEndpoint({
  method: "POST",
  path: "/users/me/presence",
  auth: "user",
  params: {
    status: p.str(),
    ping_only: p.bool().default(false),
    new_user_input: p.bool().default(false),
    slim_presence: p.bool().default(false),
    last_update_id: p.int().optional(),
    history_limit_days: p.int({ min: 0 }).optional(),
  },
  testing: { notRefs: { last_update_id: "a position in the presence history the caller polls, not an object" } },
  handler(ctx, input) {
    if (input.status !== "active" && input.status !== "idle")
      throw new BadRequestError(`Invalid status: ${clip(input.status)}`);
    ctx.store.updatePresence(ctx.user.id, input.status);
    if (input.ping_only) return {};
    const listing = ctx.store.realmPresence(ctx.user.id, {
      lastUpdateId: input.last_update_id ?? null,
      historyLimitDays: input.history_limit_days ?? null,
    });
    const slim = input.slim_presence || input.last_update_id !== undefined;
    return {
      presences: presencesToWire(listing, slim),
      server_timestamp: Date.now() / 1000,
      presence_last_update_id: listing.lastUpdateId,
    };
  },
});
