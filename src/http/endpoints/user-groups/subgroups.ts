/**
 * @module http/endpoints/user-groups/subgroups
 * POST /user_groups/{id}/subgroups (https://zulip.com/api/update-user-group-subgroups):
 * `add` and `delete` in one write; bots may call it (FL 496) and a deactivated group's
 * subgroups may change (FL 391). GET lists subgroups, recursive unless
 * direct_subgroup_only.
 */
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { groupIdList } from "./limits.js";
import { groupIdParam } from "./path.js";

export const updateSubgroupsEndpoint = defineEndpoint({
  method: "POST",
  path: "/user_groups/:user_group_id/subgroups",
  pathRefs: { user_group_id: "group" },
  auth: "user",
  params: {
    add: groupIdList().default([]),
    delete: groupIdList().default([]),
  },
  testing: {
    sweepBases: [
      { params: { delete: (fixture) => JSON.stringify([fixture.managedGroup]) }, for: ["user_group_id"] },
      { params: { user_group_id: (fixture) => String(fixture.managedGroup) } },
    ],
  },
  handler(ctx, input) {
    ctx.store.updateGroupSubgroups(ctx.user.id, groupIdParam(ctx), input.add, input.delete);
    return {};
  },
});

export const getSubgroupsEndpoint = defineEndpoint({
  method: "GET",
  path: "/user_groups/:user_group_id/subgroups",
  pathRefs: { user_group_id: "group" },
  auth: "user",
  params: { direct_subgroup_only: p.bool().default(false) },
  handler(ctx, input) {
    return { subgroups: ctx.store.groupSubgroups(ctx.user.id, groupIdParam(ctx), input.direct_subgroup_only) };
  },
});
