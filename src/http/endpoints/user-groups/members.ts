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
  auth: "user",
  params: {
    add: userIdList().default([]),
    delete: userIdList().default([]),
    add_subgroups: groupIdList().default([]),
    delete_subgroups: groupIdList().default([]),
  },
  handler(ctx, input) {
    ctx.store.updateGroupMembers(ctx.user.id, groupIdParam(ctx), input.add, input.delete, input.add_subgroups, input.delete_subgroups);
    return {};
  },
});

export const getMembersEndpoint = defineEndpoint({
  method: "GET",
  path: "/user_groups/:user_group_id/members",
  auth: "user",
  params: { direct_member_only: p.bool().default(false) },
  handler(ctx, input) {
    return { members: ctx.store.groupMembers(ctx.user.id, groupIdParam(ctx), input.direct_member_only) };
  },
});

export const isMemberEndpoint = defineEndpoint({
  method: "GET",
  path: "/user_groups/:user_group_id/members/:user_id",
  auth: "user",
  params: { direct_member_only: p.bool().default(false) },
  handler(ctx, input) {
    const raw = ctx.pathParams["user_id"] ?? "";
    if (!/^\d{1,9}$/.test(raw)) throw new BadRequestError("No such user");
    return { is_user_group_member: ctx.store.isGroupMember(ctx.user.id, groupIdParam(ctx), Number(raw), input.direct_member_only) };
  },
});
