/**
 * @module wire/group
 * A user group in Zulip's wire shape (UserGroupDict): register's realm_user_groups,
 * GET /user_groups and the user_group add event.
 */
import type { Store, UserGroup } from "../engine/index.js";
import { groupSettingToWire } from "./channel.js";

export function groupToWire(store: Store, group: UserGroup, members: readonly number[]): Record<string, unknown> {
  const s = store.groupSettings(group);
  return {
    id: group.id,
    name: group.name,
    description: group.description,
    members: [...members],
    direct_subgroup_ids: [...group.subgroups].sort((a, b) => a - b),
    creator_id: group.creatorId,
    date_created: group.dateCreated,
    is_system_group: group.systemRole !== null,
    can_add_members_group: groupSettingToWire(s.canAddMembersGroup),
    can_join_group: groupSettingToWire(s.canJoinGroup),
    can_leave_group: groupSettingToWire(s.canLeaveGroup),
    can_manage_group: groupSettingToWire(s.canManageGroup),
    can_mention_group: groupSettingToWire(s.canMentionGroup),
    can_remove_members_group: groupSettingToWire(s.canRemoveMembersGroup),
    deactivated: group.deactivated,
  };
}
