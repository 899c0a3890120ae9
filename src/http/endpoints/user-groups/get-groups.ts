/**
 * @module http/endpoints/user-groups/get-groups
 * GET /user_groups — https://zulip.com/api/get-user-groups
 * The realm's groups sorted by ID, system groups included; deactivated ones only with
 * include_deactivated_groups.
 */
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";

export default defineEndpoint({
  method: "GET",
  path: "/user_groups",
  auth: "user",
  params: { include_deactivated_groups: p.bool().default(false) },
  handler(ctx, input) {
    return { user_groups: ctx.groupJson.list(ctx.user, input.include_deactivated_groups) };
  },
});
