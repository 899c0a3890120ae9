/**
 * @module http/endpoints/user-groups/members
 * POST /user_groups/{id}/members (https://zulip.com/api/update-user-group-members),
 * GET /user_groups/{id}/members and GET /user_groups/{id}/members/{user_id}
 * (recursive through subgroups unless direct_member_only).
 */
import { BadRequestError } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { groupIdList, userIdList } from "./limits.js";
import { groupIdParam } from "./path.js";

export const updateMembersEndpoint = defineEndpoint({
  method: "POST",
  path: "/user_groups/:user_group_id/members",
  pathRefs: { user_group_id: "group" },
  auth: "user",
  params: {
    add: userIdList().default([]),
    delete: userIdList().default([]),
    add_subgroups: groupIdList().default([]),
    delete_subgroups: groupIdList().default([]),
  },
  testing: {
    sweepBases: [
      { params: { add: (fixture) => JSON.stringify([fixture.groupManager]) }, for: ["user_group_id"] },
      { params: { user_group_id: (fixture) => String(fixture.managedGroup) } },
    ],
  },
  handler(ctx, input) {
    ctx.store.updateGroupMembers(
      ctx.user.id,
      groupIdParam(ctx),
      input.add,
      input.delete,
      input.add_subgroups,
      input.delete_subgroups,
    );
    return {};
  },
});

export const getMembersEndpoint = defineEndpoint({
  method: "GET",
  path: "/user_groups/:user_group_id/members",
  pathRefs: { user_group_id: "group" },
  auth: "user",
  params: { direct_member_only: p.bool().default(false) },
  handler(ctx, input) {
    return { members: ctx.store.groupMembers(ctx.user.id, groupIdParam(ctx), input.direct_member_only) };
  },
});

export const isMemberEndpoint = defineEndpoint({
  method: "GET",
  path: "/user_groups/:user_group_id/members/:user_id",
  pathRefs: { user_group_id: "group", user_id: "user" },
  auth: "user",
  params: { direct_member_only: p.bool().default(false) },
  testing: {
    sweepBases: [
      { params: { user_id: (fixture) => String(fixture.groupManager) }, for: ["user_group_id"] },
      { params: { user_group_id: (fixture) => String(fixture.managedGroup) }, for: ["user_id"] },
    ],
  },
  handler(ctx, input) {
    const raw = ctx.pathParams["user_id"] ?? "";
    if (!/^\d{1,9}$/.test(raw)) throw new BadRequestError("No such user");
    return {
      is_user_group_member: ctx.store.isGroupMember(
        ctx.user.id,
        groupIdParam(ctx),
        Number(raw),
        input.direct_member_only,
      ),
    };
  },
});
