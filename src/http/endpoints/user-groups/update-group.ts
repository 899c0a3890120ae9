/**
 * @module http/endpoints/user-groups/update-group
 * PATCH /user_groups/{user_group_id} — https://zulip.com/api/update-user-group
 * Settings come as {"new": value, "old": value?}; `old`, when given, must match the
 * current value. `deactivated` only reactivates (false).
 */
import { z } from "zod";
import { GROUP_SETTINGS, type GroupSettingField, type UpdateGroupInput } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { j, p, ref } from "../../params.js";
import { groupSettingFromWire } from "../../../wire/channel.js";
import { checkSettingSize, description } from "./limits.js";
import { groupIdParam } from "./path.js";

const changeSchema = z.object({ new: j.groupSetting(), old: j.groupSetting().optional() }).strict();
const change = () => ref(p.json(changeSchema), "groupSettingChange").optional();

export default defineEndpoint({
  method: "PATCH",
  path: "/user_groups/:user_group_id",
  pathRefs: { user_group_id: "group" },
  auth: "user",
  params: {
    name: p.str().optional(),
    description: description().optional(),
    deactivated: p.bool().optional(),
    can_add_members_group: change(),
    can_join_group: change(),
    can_leave_group: change(),
    can_manage_group: change(),
    can_mention_group: change(),
    can_remove_members_group: change(),
  },
  // Edits on a group that the sweep's member manages (the owner manages every group; the guest none).
  testing: {
    sweepBases: [
      { params: { description: "changed" }, for: ["user_group_id"] },
      { params: { user_group_id: (fixture) => String(fixture.managedGroup) } },
    ],
  },
  handler(ctx, input) {
    const settings: NonNullable<UpdateGroupInput["settings"]> = {};
    const out: Partial<
      Record<
        GroupSettingField,
        { new: ReturnType<typeof groupSettingFromWire>; old?: ReturnType<typeof groupSettingFromWire> }
      >
    > = settings;
    for (const spec of GROUP_SETTINGS) {
      const value = input[spec.wire as keyof typeof input];
      if (value === undefined || typeof value !== "object") continue;
      const next = groupSettingFromWire(value.new);
      checkSettingSize(`${spec.wire}["new"]`, next);
      out[spec.field] = { new: next, ...(value.old !== undefined ? { old: groupSettingFromWire(value.old) } : {}) };
    }
    ctx.store.updateGroup(ctx.user.id, groupIdParam(ctx), {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.deactivated !== undefined ? { deactivated: input.deactivated } : {}),
      settings,
    });
    return {};
  },
});
