/**
 * @module actions/groups
 * User groups: creation, members and subgroups (POST /user_groups/{id}/subgroups).
 * Subgroup changes refuse cycles, so membership recursion always terminates.
 */
import { isAdmin, isAllowedBy } from "../access.js";
import { BadRequestError, clip, PermissionDeniedError } from "../errors.js";
import type { StoreState } from "../state.js";
import type { GroupSettingValue, UserGroup } from "../types.js";
import { checkGroupSettingValue } from "./channels.js";
import { systemGroupId } from "./realms.js";
import { requireActiveUser } from "./users.js";
import { realmAudience } from "../events/audience.js";

export interface CreateGroupInput {
  readonly name: string;
  readonly description?: string;
  readonly members?: readonly number[];
  readonly subgroups?: readonly number[];
  readonly canManageGroup?: GroupSettingValue;
  readonly canMentionGroup?: GroupSettingValue;
}

export function createGroup(state: StoreState, actorId: number, input: CreateGroupInput): UserGroup {
  const actor = requireActiveUser(state, actorId);
  if (actor.role > 400) throw new PermissionDeniedError("Insufficient permission");
  const name = input.name.trim();
  if (name.length === 0 || name.length > 100) throw new BadRequestError("Invalid user group name");
  if (name.startsWith("role:")) throw new BadRequestError("User group name cannot start with 'role:'");
  for (const g of state.groups.values()) {
    if (g.realmId === actor.realmId && g.name.toLowerCase() === name.toLowerCase()) throw new BadRequestError(`User group '${clip(name)}' already exists.`);
  }
  const members = [...new Set(input.members ?? [])];
  checkGroupSettingValue(state, actor.realmId, { directMembers: members, directSubgroups: input.subgroups ?? [] });
  return state.write((ctx) => {
    const group: UserGroup = {
      id: state.allocate("nextGroupId"),
      realmId: actor.realmId,
      name,
      description: input.description ?? "",
      systemRole: null,
      members,
      subgroups: [...new Set(input.subgroups ?? [])],
      deactivated: false,
      canManageGroup: input.canManageGroup ?? { directMembers: [actor.id], directSubgroups: [] },
      canMentionGroup: input.canMentionGroup ?? systemGroupId(state, actor.realmId, "role:everyone"),
      dateCreated: state.now(),
      creatorId: actor.id,
    };
    state.tables.groups.putSync(group.id, group);
    ctx.afterCommit(() => state.indexGroup(group));
    ctx.emit({ type: "user_group", op: "add", group }, () => realmAudience(state, group.realmId));
    return group;
  });
}

/** The group, if it belongs to the realm. */
export function requireGroup(state: StoreState, realmId: number, groupId: number): UserGroup {
  const group = state.groups.get(groupId);
  if (!group || group.realmId !== realmId) throw new BadRequestError("Invalid user group");
  return group;
}

function checkCanManage(state: StoreState, actorId: number, group: UserGroup): void {
  const actor = requireActiveUser(state, actorId);
  if (group.systemRole !== null) throw new BadRequestError("Insufficient permission");
  if (!isAdmin(actor) && !isAllowedBy(state, group.canManageGroup, actor)) throw new PermissionDeniedError("Insufficient permission");
}

/** Adds and removes direct subgroups. */
export function updateSubgroups(state: StoreState, actorId: number, groupId: number, add: readonly number[], remove: readonly number[]): void {
  const actor = requireActiveUser(state, actorId);
  const group = requireGroup(state, actor.realmId, groupId);
  checkCanManage(state, actorId, group);
  for (const id of add) {
    requireGroup(state, actor.realmId, id);
    if (group.subgroups.includes(id)) throw new BadRequestError(`User group ${id} is already a subgroup of this group.`);
    if (id === groupId || reaches(state, id, groupId)) throw new BadRequestError(`User group ${id} is already a supergroup of this group.`);
  }
  for (const id of remove) {
    if (!group.subgroups.includes(id)) throw new BadRequestError(`User group ${id} is not a subgroup of this group.`);
  }
  const next: UserGroup = { ...group, subgroups: [...group.subgroups.filter((s) => !remove.includes(s)), ...new Set(add)] };
  state.write((ctx) => {
    state.tables.groups.putSync(next.id, next);
    ctx.afterCommit(() => state.indexGroup(next));
    const added = next.subgroups.filter((s) => !group.subgroups.includes(s));
    const removed = group.subgroups.filter((s) => !next.subgroups.includes(s));
    if (added.length > 0) ctx.emit({ type: "user_group", op: "add_subgroups", groupId, subgroupIds: added }, () => realmAudience(state, group.realmId));
    if (removed.length > 0) ctx.emit({ type: "user_group", op: "remove_subgroups", groupId, subgroupIds: removed }, () => realmAudience(state, group.realmId));
  });
}

/** Adds and removes direct members. */
export function updateMembers(state: StoreState, actorId: number, groupId: number, add: readonly number[], remove: readonly number[]): void {
  const actor = requireActiveUser(state, actorId);
  const group = requireGroup(state, actor.realmId, groupId);
  checkCanManage(state, actorId, group);
  checkGroupSettingValue(state, actor.realmId, { directMembers: [...add, ...remove], directSubgroups: [] });
  const next: UserGroup = { ...group, members: [...new Set([...group.members.filter((m) => !remove.includes(m)), ...add])] };
  state.write((ctx) => {
    state.tables.groups.putSync(next.id, next);
    ctx.afterCommit(() => state.indexGroup(next));
    const added = next.members.filter((m) => !group.members.includes(m));
    const removed = group.members.filter((m) => !next.members.includes(m));
    if (added.length > 0) ctx.emit({ type: "user_group", op: "add_members", groupId, userIds: added }, () => realmAudience(state, group.realmId));
    if (removed.length > 0) ctx.emit({ type: "user_group", op: "remove_members", groupId, userIds: removed }, () => realmAudience(state, group.realmId));
  });
}

/** Does `from` reach `target` through subgroup edges? */
function reaches(state: StoreState, from: number, target: number, seen = new Set<number>()): boolean {
  if (from === target) return true;
  if (seen.has(from)) return false;
  seen.add(from);
  return (state.groups.get(from)?.subgroups ?? []).some((s) => reaches(state, s, target, seen));
}
