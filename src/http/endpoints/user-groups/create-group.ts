/**
 * @module http/endpoints/user-groups/create-group
 * POST /user_groups/create — https://zulip.com/api/create-user-group
 * Each `can_*_group` is a group-setting value: a group ID or
 * {direct_members, direct_subgroups}. Settings not given take Zulip's defaults.
 */
import { GROUP_SETTINGS, type GroupSettingField, type GroupSettingValue } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { j, p, ref } from "../../params.js";
import { groupSettingFromWire } from "../../../wire/channel.js";
import { checkSettingSize, description, groupIdList, userIdList } from "./limits.js";

const setting = () => ref(p.json(j.groupSetting()), "groupSetting").optional();

export default defineEndpoint({
  method: "POST",
  path: "/user_groups/create",
  auth: "user",
  params: {
    name: p.str(),
    description: description(),
    members: userIdList(),
    subgroups: groupIdList().optional(),
    can_add_members_group: setting(),
    can_join_group: setting(),
    can_leave_group: setting(),
    can_manage_group: setting(),
    can_mention_group: setting(),
    can_remove_members_group: setting(),
  },
  testing: {
    sweepBases: [{ params: { name: (fixture) => fixture.fresh("group"), description: "d", members: "[]" } }],
    worst: {
      extra: [
        {
          label: "a name of 200,000 characters",
          params: () => ({ name: "x".repeat(200_000), description: "", members: "[]" }),
          status: 400,
          code: "BAD_REQUEST",
          msg: "User group name cannot exceed 100 characters.",
        },
      ],
    },
  },
  handler(ctx, input) {
    const settings: Partial<Record<GroupSettingField, GroupSettingValue>> = {};
    for (const spec of GROUP_SETTINGS) {
      const value = input[spec.wire as keyof typeof input];
      if (value === undefined || typeof value === "string" || Array.isArray(value)) continue;
      const setting = groupSettingFromWire(value);
      checkSettingSize(spec.wire, setting);
      settings[spec.field] = setting;
    }
    const group = ctx.store.createGroup(ctx.user.id, {
      name: input.name,
      description: input.description,
      members: input.members,
      subgroups: input.subgroups ?? [],
      settings,
    });
    return { group_id: group.id };
  },
});
