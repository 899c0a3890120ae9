/**
 * @module actions/groups
 * User groups as Zulip has them: creation, edits of name, description and the six
 * permission settings, members, subgroups, deactivation and reactivation.
 *
 * Who may change a group (Zulip's access_user_group_for_update): nobody edits a
 * system group; the realm's can_manage_all_groups (owners) and the group's
 * can_manage_group may do everything; otherwise the setting of the change decides —
 * can_add_members_group to add members or subgroups, can_join_group when adding only
 * oneself, can_remove_members_group to remove members, can_leave_group when removing
 * only oneself. Settings that do not allow role:everyone never grant guests anything.
 *
 * Subgroup changes refuse cycles, so membership recursion always terminates, and
 * every check reads membership live (access.ts), so a change counts at once.
 */
import { changedFields } from "../events/change-set.js";
import { isAllowedBy, membersOf } from "../access.js";
import { BadRequestError, GroupInUseError } from "../errors.js";
import { exceedsCodePoints } from "../limits.js";
import type { StoreState } from "../state.js";
import type { ChannelPermissions, GroupSettingValue, User, UserGroup } from "../types.js";
import { ROLE } from "../types.js";
import { channelGroupSettings } from "./channels.js";
import { systemGroupId } from "./realms.js";
import { requireActiveUser } from "./users.js";
import { realmAudience } from "../events/audience.js";
import type { UserGroupUpdate } from "../events/types.js";
import { hasRealmPermission } from "./realm-permissions.js";

export const MAX_GROUP_NAME_LENGTH = 100;
const INVALID_NAME_PREFIXES = ["@", "role:", "user:", "stream:", "channel:"];

/** The permission settings of a user group, in Zulip's order. */
export type GroupSettingField =
  | "canAddMembersGroup"
  | "canJoinGroup"
  | "canLeaveGroup"
  | "canManageGroup"
  | "canMentionGroup"
  | "canRemoveMembersGroup";

interface GroupSettingSpec {
  readonly field: GroupSettingField;
  /** Zulip's setting name (wire and error texts). */
  readonly wire: string;
  /** Zulip's allow_everyone_group: may it be role:everyone (and grant guests)? */
  readonly allowEveryone: boolean;
  /** Default of a user-created group: "creator" is an anonymous group of the creator. */
  readonly byDefault: "creator" | "role:nobody" | "role:everyone";
}

export const GROUP_SETTINGS: readonly GroupSettingSpec[] = [
  { field: "canAddMembersGroup", wire: "can_add_members_group", allowEveryone: false, byDefault: "creator" },
  { field: "canJoinGroup", wire: "can_join_group", allowEveryone: false, byDefault: "role:nobody" },
  { field: "canLeaveGroup", wire: "can_leave_group", allowEveryone: true, byDefault: "role:everyone" },
  { field: "canManageGroup", wire: "can_manage_group", allowEveryone: false, byDefault: "creator" },
  { field: "canMentionGroup", wire: "can_mention_group", allowEveryone: true, byDefault: "role:everyone" },
  { field: "canRemoveMembersGroup", wire: "can_remove_members_group", allowEveryone: false, byDefault: "role:nobody" },
];

function specOf(field: GroupSettingField): GroupSettingSpec {
  return GROUP_SETTINGS.find((s) => s.field === field)!;
}

function defaultSetting(
  state: StoreState,
  realmId: number,
  spec: GroupSettingSpec,
  creatorId: number | null,
  system: boolean,
): GroupSettingValue {
  if (system) return systemGroupId(state, realmId, "role:nobody");
  if (spec.byDefault === "creator")
    return creatorId === null
      ? systemGroupId(state, realmId, "role:nobody")
      : { directMembers: [creatorId], directSubgroups: [] };
  return systemGroupId(state, realmId, spec.byDefault);
}

/** A group's setting, with its default where an older record lacks it. */
export function groupSetting(state: StoreState, group: UserGroup, field: GroupSettingField): GroupSettingValue {
  return (
    group[field] ?? defaultSetting(state, group.realmId, specOf(field), group.creatorId, group.systemRole !== null)
  );
}

/** Every setting of a group, defaults filled in. */
export function groupSettings(state: StoreState, group: UserGroup): Record<GroupSettingField, GroupSettingValue> {
  const out = {} as Record<GroupSettingField, GroupSettingValue>;
  for (const spec of GROUP_SETTINGS) out[spec.field] = groupSetting(state, group, spec.field);
  return out;
}

/** Zulip's user_has_permission_for_group_setting: guests never pass a setting that excludes everyone. */
function hasGroupPermission(state: StoreState, group: UserGroup, field: GroupSettingField, user: User): boolean {
  if (!specOf(field).allowEveryone && user.role === ROLE.GUEST) return false;
  return isAllowedBy(state, groupSetting(state, group, field), user);
}

/** The realm's can_manage_all_groups (owners by default). */
function canManageAllGroups(state: StoreState, user: User): boolean {
  return hasRealmPermission(state, user, "canManageAllGroups");
}

/** Zulip's check_user_group_name. */
export function checkGroupName(raw: string): string {
  if (raw.trim() === "") throw new BadRequestError("User group name can't be empty!");
  if (exceedsCodePoints(raw, MAX_GROUP_NAME_LENGTH))
    throw new BadRequestError(`User group name cannot exceed ${MAX_GROUP_NAME_LENGTH} characters.`);
  for (const prefix of INVALID_NAME_PREFIXES)
    if (raw.startsWith(prefix)) throw new BadRequestError(`User group name cannot start with '${prefix}'.`);
  return raw;
}

function checkNameFree(state: StoreState, realmId: number, name: string, exceptId: number | null): void {
  for (const g of state.groups.values()) {
    if (g.realmId === realmId && g.id !== exceptId && g.name.toLowerCase() === name.toLowerCase())
      throw new BadRequestError(`User group '${name}' already exists.`);
  }
}

/** A named group of the realm for reading or as a subgroup; "Invalid user group ID: N" otherwise. */
function requireGroupById(state: StoreState, realmId: number, groupId: number): UserGroup {
  const group = state.groups.get(groupId);
  if (!group || group.realmId !== realmId) throw new BadRequestError(`Invalid user group ID: ${groupId}`);
  return group;
}

/** Active users of the realm ("Invalid user ID: N" otherwise), as Zulip's user_ids_to_users. */
function requireActiveMembers(state: StoreState, realmId: number, ids: readonly number[]): number[] {
  for (const id of ids) {
    const user = state.users.get(id);
    if (!user || user.realmId !== realmId || !user.isActive) throw new BadRequestError(`Invalid user ID: ${id}`);
  }
  return [...new Set(ids)];
}

/** Zulip's access_user_group_api_value_for_setting + check_setting_configuration_for_system_groups. */
export function checkGroupSettingForGroup(
  state: StoreState,
  realmId: number,
  field: GroupSettingField,
  value: GroupSettingValue,
): GroupSettingValue {
  const spec = specOf(field);
  if (typeof value === "number") {
    const group = state.groups.get(value);
    if (!group || group.realmId !== realmId) throw new BadRequestError("Invalid user group");
    if (group.deactivated) throw new BadRequestError("User group is deactivated.");
    if (group.systemRole === "role:internet")
      throw new BadRequestError(`'${spec.wire}' setting cannot be set to 'role:internet' group.`);
    if (group.systemRole === "role:everyone" && !spec.allowEveryone)
      throw new BadRequestError(`'${spec.wire}' setting cannot be set to 'role:everyone' group.`);
    return value;
  }
  const members = requireActiveMembers(state, realmId, value.directMembers);
  const subgroups = [...new Set(value.directSubgroups)];
  for (const id of subgroups)
    if (requireGroupById(state, realmId, id).deactivated) throw new BadRequestError("User group is deactivated.");
  return { directMembers: members.sort((a, b) => a - b), directSubgroups: subgroups.sort((a, b) => a - b) };
}

export interface CreateGroupInput {
  readonly name: string;
  readonly description?: string;
  readonly members?: readonly number[];
  readonly subgroups?: readonly number[];
  readonly settings?: Partial<Record<GroupSettingField, GroupSettingValue>>;
  /** Older spelling kept for callers written before the other settings existed. */
  readonly canManageGroup?: GroupSettingValue;
  readonly canMentionGroup?: GroupSettingValue;
}

export function createGroup(state: StoreState, actorId: number, input: CreateGroupInput): UserGroup {
  const actor = requireActiveUser(state, actorId);
  if (!hasRealmPermission(state, actor, "canCreateGroups")) throw new BadRequestError("Insufficient permission");
  const name = checkGroupName(input.name);
  checkNameFree(state, actor.realmId, name, null);
  const members = requireActiveMembers(state, actor.realmId, input.members ?? []);
  const subgroups = [...new Set(input.subgroups ?? [])];
  for (const id of subgroups)
    if (requireGroupById(state, actor.realmId, id).deactivated) throw new BadRequestError("User group is deactivated.");
  const given: Partial<Record<GroupSettingField, GroupSettingValue>> = { ...input.settings };
  if (input.canManageGroup !== undefined) given.canManageGroup = input.canManageGroup;
  if (input.canMentionGroup !== undefined) given.canMentionGroup = input.canMentionGroup;
  const settings = {} as Record<GroupSettingField, GroupSettingValue>;
  for (const spec of GROUP_SETTINGS) {
    const value = given[spec.field];
    settings[spec.field] =
      value === undefined
        ? defaultSetting(state, actor.realmId, spec, actor.id, false)
        : checkGroupSettingForGroup(state, actor.realmId, spec.field, value);
  }
  return state.write((ctx) => {
    const group: UserGroup = {
      id: state.allocate("nextGroupId"),
      realmId: actor.realmId,
      name,
      description: input.description ?? "",
      systemRole: null,
      members,
      subgroups,
      deactivated: false,
      ...settings,
      dateCreated: state.now(),
      creatorId: actor.id,
    };
    state.tables.groups.putSync(group.id, group);
    ctx.afterCommit(() => state.indexGroup(group));
    ctx.emit({ type: "user_group", op: "add", group, forReactivation: false }, () =>
      realmAudience(state, group.realmId),
    );
    return group;
  });
}

/** The group, if it belongs to the realm ("Invalid user group"). */
export function requireGroup(state: StoreState, realmId: number, groupId: number): UserGroup {
  const group = state.groups.get(groupId);
  if (!group || group.realmId !== realmId) throw new BadRequestError("Invalid user group");
  return group;
}

/** Zulip's access_user_group_for_update: the group if `actor` may change it through `field`. */
export function accessForUpdate(
  state: StoreState,
  actor: User,
  groupId: number,
  field: GroupSettingField,
  allowDeactivated: boolean,
): UserGroup {
  const group = requireGroup(state, actor.realmId, groupId);
  if (!allowDeactivated && group.deactivated) throw new BadRequestError("User group is deactivated.");
  if (group.systemRole !== null) throw new BadRequestError("Insufficient permission");
  if (canManageAllGroups(state, actor) || hasGroupPermission(state, group, "canManageGroup", actor)) return group;
  if (field !== "canManageGroup" && hasGroupPermission(state, group, field, actor)) return group;
  throw new BadRequestError("Insufficient permission");
}

/** Does `from` reach `target` through subgroup edges? */
function reaches(state: StoreState, from: number, target: number, seen = new Set<number>()): boolean {
  if (from === target) return true;
  if (seen.has(from)) return false;
  seen.add(from);
  return (state.groups.get(from)?.subgroups ?? []).some((s) => reaches(state, s, target, seen));
}

/**
 * POST /user_groups/{id}/subgroups: adds then removes direct subgroups, in one write
 * (Zulip's compose_views). Adding needs can_add_members_group, removing
 * can_manage_group; both work on a deactivated group (FL 391).
 */
export function updateSubgroups(
  state: StoreState,
  actorId: number,
  groupId: number,
  add: readonly number[],
  remove: readonly number[],
): void {
  const actor = requireActiveUser(state, actorId);
  if (add.length === 0 && remove.length === 0)
    throw new BadRequestError('Nothing to do. Specify at least one of "add" or "delete".');
  const group = planSubgroupChange(state, actor, groupId, add, remove);
  writeGroupChange(state, group, { subgroups: without(group.subgroups, remove, add) });
}

function planSubgroupChange(
  state: StoreState,
  actor: User,
  groupId: number,
  add: readonly number[],
  remove: readonly number[],
): UserGroup {
  let group = requireGroup(state, actor.realmId, groupId);
  if (add.length > 0) {
    for (const id of add) {
      const sub = requireGroupById(state, actor.realmId, id);
      if (sub.deactivated) throw new BadRequestError("User group is deactivated.");
    }
    group = accessForUpdate(state, actor, groupId, "canAddMembersGroup", true);
    const current = new Set(group.subgroups);
    for (const id of add)
      if (current.has(id)) throw new BadRequestError(`User group ${id} is already a subgroup of this group.`);
    if (add.some((id) => reaches(state, id, groupId)))
      throw new BadRequestError(`User group ${groupId} is already a subgroup of one of the passed subgroups.`);
  }
  if (remove.length > 0) {
    for (const id of remove) requireGroupById(state, actor.realmId, id);
    group = accessForUpdate(state, actor, groupId, "canManageGroup", true);
    const current = new Set(group.subgroups);
    for (const id of remove)
      if (!current.has(id)) throw new BadRequestError(`User group ${id} is not a subgroup of this group.`);
  }
  return group;
}

/**
 * POST /user_groups/{id}/members: adds and removes direct members (and, as Zulip's
 * endpoint does, subgroups), all in one write.
 */
export function updateMembers(
  state: StoreState,
  actorId: number,
  groupId: number,
  add: readonly number[],
  remove: readonly number[],
  addSubgroups: readonly number[] = [],
  removeSubgroups: readonly number[] = [],
): void {
  const actor = requireActiveUser(state, actorId);
  if (add.length === 0 && remove.length === 0 && addSubgroups.length === 0 && removeSubgroups.length === 0) {
    throw new BadRequestError(
      'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".',
    );
  }
  let group = requireGroup(state, actor.realmId, groupId);
  if (add.length > 0) {
    requireActiveMembers(state, actor.realmId, add);
    const joiningSelf = add.length === 1 && add[0] === actor.id;
    group = joinOrAdd(state, actor, groupId, joiningSelf);
    const current = new Set(group.members);
    for (const id of add)
      if (current.has(id)) throw new BadRequestError(`User ${id} is already a member of this group`);
  }
  if (remove.length > 0) {
    for (const id of remove) {
      const user = state.users.get(id);
      if (!user || user.realmId !== actor.realmId) throw new BadRequestError(`Invalid user ID: ${id}`);
    }
    const leavingSelf = remove.length === 1 && remove[0] === actor.id;
    group = leavingSelf
      ? leaveOrRemove(state, actor, groupId)
      : accessForUpdate(state, actor, groupId, "canRemoveMembersGroup", true);
    const current = new Set(group.members);
    for (const id of remove)
      if (!current.has(id)) throw new BadRequestError(`There is no member '${id}' in this user group`);
  }
  if (addSubgroups.length > 0 || removeSubgroups.length > 0)
    group = planSubgroupChange(state, actor, groupId, addSubgroups, removeSubgroups);
  writeGroupChange(state, group, {
    members: without(group.members, remove, add),
    subgroups: without(group.subgroups, removeSubgroups, addSubgroups),
  });
}

/** Adding only oneself tries can_join_group first, then can_add_members_group. */
function joinOrAdd(state: StoreState, actor: User, groupId: number, self: boolean): UserGroup {
  if (self) {
    try {
      return accessForUpdate(state, actor, groupId, "canJoinGroup", true);
    } catch {
      // Falls through to the general rule, whose error is the one reported.
    }
  }
  return accessForUpdate(state, actor, groupId, "canAddMembersGroup", true);
}

/** Removing only oneself tries can_leave_group first, then can_remove_members_group. */
function leaveOrRemove(state: StoreState, actor: User, groupId: number): UserGroup {
  try {
    return accessForUpdate(state, actor, groupId, "canLeaveGroup", true);
  } catch {
    return accessForUpdate(state, actor, groupId, "canRemoveMembersGroup", true);
  }
}

/** `ids` less `remove`, then `add` (once each). Sets, not `includes`: lists run to 10,000 IDs. */
function without(ids: readonly number[], remove: readonly number[], add: readonly number[]): number[] {
  const removed = new Set(remove);
  return [...ids.filter((id) => !removed.has(id)), ...new Set(add)];
}

/** `after` less `before`, in `after`'s order. */
function added(before: readonly number[], after: readonly number[]): number[] {
  const had = new Set(before);
  return after.filter((id) => !had.has(id));
}

/** Writes new members and subgroups, emitting one event per kind of change. */
function writeGroupChange(
  state: StoreState,
  group: UserGroup,
  change: { members?: number[]; subgroups?: number[] },
): void {
  const next: UserGroup = { ...group, ...change };
  state.write((ctx) => {
    state.tables.groups.putSync(next.id, next);
    ctx.afterCommit(() => state.indexGroup(next));
    ctx.changed({ kind: "group", id: next.id, fields: changedFields(group, next) });
    const audience = () => realmAudience(state, group.realmId);
    const addedMembers = added(group.members, next.members);
    const removedMembers = added(next.members, group.members);
    const addedSubgroups = added(group.subgroups, next.subgroups);
    const removedSubgroups = added(next.subgroups, group.subgroups);
    if (addedMembers.length > 0)
      ctx.emit({ type: "user_group", op: "add_members", groupId: group.id, userIds: addedMembers }, audience);
    if (removedMembers.length > 0)
      ctx.emit({ type: "user_group", op: "remove_members", groupId: group.id, userIds: removedMembers }, audience);
    if (addedSubgroups.length > 0)
      ctx.emit({ type: "user_group", op: "add_subgroups", groupId: group.id, subgroupIds: addedSubgroups }, audience);
    if (removedSubgroups.length > 0)
      ctx.emit(
        { type: "user_group", op: "remove_subgroups", groupId: group.id, subgroupIds: removedSubgroups },
        audience,
      );
  });
}

export interface UpdateGroupInput {
  readonly name?: string;
  readonly description?: string;
  /** Only false does anything: it reactivates a deactivated group. */
  readonly deactivated?: boolean;
  /** New values, each with the value the client believes is current (optimistic check). */
  readonly settings?: Partial<
    Record<GroupSettingField, { readonly new: GroupSettingValue; readonly old?: GroupSettingValue }>
  >;
}

function sameSetting(a: GroupSettingValue, b: GroupSettingValue): boolean {
  if (typeof a === "number" || typeof b === "number") return a === b;
  const sorted = (xs: readonly number[]) => [...new Set(xs)].sort((x, y) => x - y).join(",");
  return sorted(a.directMembers) === sorted(b.directMembers) && sorted(a.directSubgroups) === sorted(b.directSubgroups);
}

/** PATCH /user_groups/{id}: name, description, reactivation and settings, under can_manage_group. */
export function updateGroup(state: StoreState, actorId: number, groupId: number, input: UpdateGroupInput): void {
  const actor = requireActiveUser(state, actorId);
  const settings = Object.entries(input.settings ?? {}) as [
    GroupSettingField,
    { new: GroupSettingValue; old?: GroupSettingValue },
  ][];
  if (
    input.name === undefined &&
    input.description === undefined &&
    input.deactivated === undefined &&
    settings.length === 0
  )
    throw new BadRequestError("No new data supplied");
  const group = accessForUpdate(state, actor, groupId, "canManageGroup", true);
  const data: { -readonly [K in keyof UserGroupUpdate]: UserGroupUpdate[K] } = {};
  const next: UserGroup = { ...group };
  if (input.name !== undefined && input.name !== group.name) {
    next.name = checkGroupName(input.name);
    checkNameFree(state, actor.realmId, next.name, group.id);
    data.name = next.name;
  }
  if (input.description !== undefined && input.description !== group.description)
    next.description = data.description = input.description;
  for (const [field, change] of settings) {
    const current = groupSetting(state, group, field);
    if (change.old !== undefined && !sameSetting(change.old, current))
      throw new BadRequestError("'old' value does not match the expected value.");
    const value = checkGroupSettingForGroup(state, actor.realmId, field, change.new);
    if (sameSetting(value, current)) continue;
    next[field] = data[field] = value;
  }
  const reactivate = input.deactivated === false && group.deactivated;
  if (reactivate) {
    next.deactivated = false;
    data.deactivated = false;
  }
  if (Object.keys(data).length === 0) return;
  state.write((ctx) => {
    state.tables.groups.putSync(next.id, next);
    ctx.afterCommit(() => state.indexGroup(next));
    ctx.emit({ type: "user_group", op: "update", groupId: group.id, data }, () => realmAudience(state, group.realmId));
    if (reactivate)
      ctx.emit({ type: "user_group", op: "add", group: next, forReactivation: true }, () =>
        realmAudience(state, group.realmId),
      );
  });
}

/**
 * POST /user_groups/{id}/deactivate (Zulip's access_user_group_for_deactivation):
 * refused while the group is an active group's subgroup or is used, directly or in an
 * anonymous value, by a channel's or an active group's setting.
 */
export function deactivateGroup(state: StoreState, actorId: number, groupId: number): void {
  const actor = requireActiveUser(state, actorId);
  const group = accessForUpdate(state, actor, groupId, "canManageGroup", false);
  const objections = groupObjections(state, group);
  if (objections.length > 0) throw new GroupInUseError(objections);
  const next: UserGroup = { ...group, deactivated: true };
  state.write((ctx) => {
    state.tables.groups.putSync(next.id, next);
    ctx.afterCommit(() => state.indexGroup(next));
    ctx.emit({ type: "user_group", op: "update", groupId: group.id, data: { deactivated: true } }, () =>
      realmAudience(state, group.realmId),
    );
    ctx.emit({ type: "user_group", op: "remove", groupId: group.id }, () => realmAudience(state, group.realmId));
  });
}

function usesGroup(value: GroupSettingValue, groupId: number): boolean {
  return typeof value === "number" ? value === groupId : value.directSubgroups.includes(groupId);
}

function snake(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function groupObjections(state: StoreState, group: UserGroup): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const supergroups: number[] = [];
  for (const g of state.groups.values())
    if (g.realmId === group.realmId && !g.deactivated && g.subgroups.includes(group.id)) supergroups.push(g.id);
  if (supergroups.length > 0) out.push({ type: "subgroup", supergroup_ids: supergroups.sort((a, b) => a - b) });
  for (const channel of [...state.channels.values()].sort((a, b) => a.id - b.id)) {
    if (channel.realmId !== group.realmId || channel.isArchived) continue;
    const settings = Object.entries(channelGroupSettings(state, channel))
      .filter(([, v]) => usesGroup(v, group.id))
      .map(([k]) => snake(k as keyof ChannelPermissions));
    if (settings.length > 0) out.push({ type: "channel", channel_id: channel.id, settings });
  }
  for (const g of [...state.groups.values()].sort((a, b) => a.id - b.id)) {
    if (g.realmId !== group.realmId || g.deactivated) continue;
    const settings = GROUP_SETTINGS.filter((s) => usesGroup(groupSetting(state, g, s.field), group.id)).map(
      (s) => s.wire,
    );
    if (settings.length > 0) out.push({ type: "user_group", group_id: g.id, settings });
  }
  return out;
}

/** GET /user_groups/{id}/members: active members, recursive unless direct only. */
export function groupMembers(state: StoreState, viewerId: number, groupId: number, directOnly: boolean): number[] {
  const viewer = requireActiveUser(state, viewerId);
  const group = requireGroup(state, viewer.realmId, groupId);
  return memberIds(state, group, directOnly);
}

function memberIds(state: StoreState, group: UserGroup, directOnly: boolean): number[] {
  // System groups take their members from roles (access.ts), direct or not.
  if (group.systemRole !== null) return membersOf(state, group.realmId, group.id).sort((a, b) => a - b);
  const ids = new Set<number>();
  for (const id of group.members) if (state.users.get(id)?.isActive) ids.add(id);
  // Read through the subgroups rather than isGroupMember(group): a deactivated group still lists its own.
  if (!directOnly)
    for (const sub of group.subgroups) for (const id of membersOf(state, group.realmId, sub)) ids.add(id);
  return [...ids].sort((a, b) => a - b);
}

/** GET /user_groups/{id}/members/{user_id}. */
export function isGroupMemberQuery(
  state: StoreState,
  viewerId: number,
  groupId: number,
  userId: number,
  directOnly: boolean,
): boolean {
  const viewer = requireActiveUser(state, viewerId);
  const group = requireGroup(state, viewer.realmId, groupId);
  const user = state.users.get(userId);
  if (!user || user.realmId !== viewer.realmId) throw new BadRequestError("No such user");
  return memberIds(state, group, directOnly).includes(userId);
}

/** GET /user_groups/{id}/subgroups: direct subgroups, or every recursive one (strict). */
export function groupSubgroups(state: StoreState, viewerId: number, groupId: number, directOnly: boolean): number[] {
  const viewer = requireActiveUser(state, viewerId);
  const group = requireGroup(state, viewer.realmId, groupId);
  if (directOnly) return [...group.subgroups].sort((a, b) => a - b);
  const seen = new Set<number>();
  const walk = (id: number) => {
    for (const sub of state.groups.get(id)?.subgroups ?? []) {
      if (seen.has(sub) || sub === group.id) continue;
      seen.add(sub);
      walk(sub);
    }
  };
  walk(group.id);
  return [...seen].sort((a, b) => a - b);
}
