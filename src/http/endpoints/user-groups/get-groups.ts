/**
 * @module http/endpoints/user-groups/get-groups
 * GET /user_groups — https://zulip.com/api/get-user-groups
 * The realm's groups sorted by ID, system groups included; deactivated ones only with
 * include_deactivated_groups.
 */
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { groupToWire } from "../../views/group.js";

export default defineEndpoint({
  method: "GET",
  path: "/user_groups",
  auth: "user",
  params: { include_deactivated_groups: p.bool().default(false) },
  handler(ctx, input) {
    return { user_groups: ctx.store.userGroups(ctx.user.id, input.include_deactivated_groups).map((g) => groupToWire(ctx.store, g.group, g.members)) };
  },
});
