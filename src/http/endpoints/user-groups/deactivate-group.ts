/**
 * @module http/endpoints/user-groups/deactivate-group
 * POST /user_groups/{user_group_id}/deactivate — https://zulip.com/api/deactivate-user-group
 * Refused with CANNOT_DEACTIVATE_GROUP_IN_USE (and its `objections`) while the group
 * is a subgroup of an active group or used by a setting.
 */
import { defineEndpoint } from "../../endpoint.js";
import { groupIdParam } from "./path.js";

export default defineEndpoint({
  method: "POST",
  path: "/user_groups/:user_group_id/deactivate",
  pathRefs: { user_group_id: "group" },
  auth: "user",
  params: {},
  handler(ctx) {
    ctx.store.deactivateGroup(ctx.user.id, groupIdParam(ctx));
    return {};
  },
});
