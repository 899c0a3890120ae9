/**
 * @module actions/default-channel-groups
 * Default channel groups (Zulip's DefaultStreamGroup, actions/default_streams.py and the
 * default_stream_group views): named sets of channels new users may pick at signup.
 * Managed by those who manage default channels (administrators); every change sends
 * the realm's whole list, by name, to its non-guests (`default_stream_groups`). The
 * groups live on the realm's record; archiving a channel takes it out of them.
 */
import { canManageDefaultChannels } from "../access.js";
import { realmAudience } from "../events/audience.js";
import { BadRequestError, PermissionDeniedError, clip } from "../errors.js";
import type { StoreState, WriteContext } from "../state.js";
import { ROLE, type Channel, type DefaultChannelGroup, type Realm, type User } from "../types.js";
import { accessChannelByName } from "./channels.js";
import { requireActiveUser } from "./lookups.js";
import { defaultChannelGroupsOf } from "../queries/default-channel-groups.js";

/** Zulip's DefaultStreamGroup.MAX_NAME_LENGTH. */
export const MAX_DEFAULT_CHANNEL_GROUP_NAME_LENGTH = 60;
/** Zulip's DefaultStreamGroup.description column (max_length 1024). */
export const MAX_DEFAULT_CHANNEL_GROUP_DESCRIPTION_LENGTH = 1024;

/** What register's realm_default_stream_groups holds for `user`: nothing for guests, as in Zulip. */
export function defaultChannelGroupsFor(state: StoreState, userId: number): readonly DefaultChannelGroup[] {
  const user = state.users.get(userId);
  const realm = user && state.realms.get(user.realmId);
  if (!user || !realm || user.role === ROLE.GUEST) return [];
  return defaultChannelGroupsOf(realm);
}

/** POST /default_stream_groups/create (Zulip's create_default_stream_group). */
export function createDefaultChannelGroup(
  state: StoreState,
  actorId: number,
  input: { readonly name: string; readonly description: string; readonly channelNames: readonly string[] },
): DefaultChannelGroup {
  const actor = requireManager(state, actorId);
  const channels = input.channelNames.map((name) => accessChannelByName(state, actor, name));
  for (const channel of channels) if (channel.isDefault) throw isDefaultError(channel, input.name);
  checkGroupName(input.name);
  const realm = state.realms.get(actor.realmId)!;
  const groups = realm.defaultChannelGroups ?? [];
  if (groups.some((g) => g.name === input.name)) throw existsError(input.name);
  return state.write((ctx) => {
    const group: DefaultChannelGroup = {
      id: state.allocate("nextDefaultChannelGroupId"),
      name: input.name,
      description: input.description,
      channelIds: [...new Set(channels.map((c) => c.id))],
    };
    writeGroupsInTxn(state, ctx, realm, [...groups, group]);
    return group;
  });
}

/** PATCH /default_stream_groups/{group_id} (Zulip's update_default_stream_group_info). */
export function updateDefaultChannelGroupInfo(
  state: StoreState,
  actorId: number,
  groupId: number,
  input: { readonly name?: string | undefined; readonly description?: string | undefined },
): void {
  const actor = requireManager(state, actorId);
  // Zulip's test is falsiness: empty strings count as not given.
  if (!input.name && !input.description)
    throw new BadRequestError('You must pass "new_description" or "new_group_name".');
  const { realm, group } = accessGroup(state, actor, groupId);
  let next = group;
  if (input.name !== undefined) {
    if (group.name === input.name)
      throw new BadRequestError(`This default channel group is already named '${clip(input.name)}'`);
    if ((realm.defaultChannelGroups ?? []).some((g) => g.name === input.name)) throw existsError(input.name);
    // Zulip checks the name only at creation (its database refuses a long one with an error 500).
    checkGroupName(input.name);
    next = { ...next, name: input.name };
  }
  if (input.description !== undefined) next = { ...next, description: input.description };
  replaceGroup(state, realm, next);
}

/** PATCH /default_stream_groups/{group_id}/streams (Zulip's update_default_stream_group_streams). */
export function updateDefaultChannelGroupChannels(
  state: StoreState,
  actorId: number,
  groupId: number,
  op: string,
  channelNames: readonly string[],
): void {
  const actor = requireManager(state, actorId);
  const { realm, group } = accessGroup(state, actor, groupId);
  const channels = channelNames.map((name) => accessChannelByName(state, actor, name));
  const ids = new Set(group.channelIds);
  if (op === "add") {
    for (const channel of channels) {
      if (channel.isDefault) throw isDefaultError(channel, group.name);
      if (ids.has(channel.id))
        throw new BadRequestError(
          `Channel '${channel.name}' is already present in default channel group '${group.name}'`,
        );
      ids.add(channel.id);
    }
    replaceGroup(state, realm, { ...group, channelIds: [...ids] });
  } else if (op === "remove") {
    for (const channel of channels)
      if (!ids.has(channel.id))
        throw new BadRequestError(`Channel '${channel.name}' is not present in default channel group '${group.name}'`);
    const removed = new Set(channels.map((c) => c.id));
    replaceGroup(state, realm, { ...group, channelIds: group.channelIds.filter((id) => !removed.has(id)) });
  } else {
    throw new BadRequestError('Invalid value for "op". Specify one of "add" or "remove".');
  }
}

/** DELETE /default_stream_groups/{group_id} (Zulip's remove_default_stream_group). */
export function removeDefaultChannelGroup(state: StoreState, actorId: number, groupId: number): void {
  const actor = requireManager(state, actorId);
  const { realm, group } = accessGroup(state, actor, groupId);
  state.write((ctx) => {
    writeGroupsInTxn(
      state,
      ctx,
      realm,
      (realm.defaultChannelGroups ?? []).filter((g) => g.id !== group.id),
    );
  });
}

/**
 * Inside an open write that archives `channel`: the realm's record without the channel in
 * any group (Zulip's do_deactivate_stream), with the event when a group held it.
 * Answers the realm to store (the same object when nothing changed).
 */
export function withoutArchivedChannelInTxn(
  state: StoreState,
  ctx: WriteContext,
  realm: Realm,
  channelId: number,
): Realm {
  const groups = realm.defaultChannelGroups ?? [];
  if (!groups.some((g) => g.channelIds.includes(channelId))) return realm;
  const next = groups.map((g) =>
    g.channelIds.includes(channelId) ? { ...g, channelIds: g.channelIds.filter((id) => id !== channelId) } : g,
  );
  const nextRealm: Realm = { ...realm, defaultChannelGroups: next };
  emitGroups(state, ctx, nextRealm);
  return nextRealm;
}

function requireManager(state: StoreState, actorId: number): User {
  const actor = requireActiveUser(state, actorId);
  if (!canManageDefaultChannels(actor))
    throw new PermissionDeniedError("You do not have permission to change default channels.");
  return actor;
}

/** Zulip's access_default_stream_group_by_id: another realm's group is one that does not exist. */
function accessGroup(state: StoreState, actor: User, groupId: number): { realm: Realm; group: DefaultChannelGroup } {
  const realm = state.realms.get(actor.realmId)!;
  const group = (realm.defaultChannelGroups ?? []).find((g) => g.id === groupId);
  if (!group) throw new BadRequestError(`Default channel group with id '${groupId}' does not exist.`);
  return { realm, group };
}

/** Zulip's check_default_stream_group_name. */
function checkGroupName(name: string): void {
  if (name.trim() === "") throw new BadRequestError(`Invalid default channel group name '${clip(name)}'`);
  if ([...name].length > MAX_DEFAULT_CHANNEL_GROUP_NAME_LENGTH)
    throw new BadRequestError(
      `Default channel group name too long (limit: ${MAX_DEFAULT_CHANNEL_GROUP_NAME_LENGTH} characters)`,
    );
  if (name.includes("\0"))
    throw new BadRequestError(`Default channel group name '${clip(name)}' contains NULL (0x00) characters.`);
}

const isDefaultError = (channel: Channel, groupName: string) =>
  new BadRequestError(`'${channel.name}' is a default channel and cannot be added to '${clip(groupName)}'`);
const existsError = (name: string) => new BadRequestError(`Default channel group '${clip(name)}' already exists`);

function replaceGroup(state: StoreState, realm: Realm, group: DefaultChannelGroup): void {
  const groups = (realm.defaultChannelGroups ?? []).map((g) => (g.id === group.id ? group : g));
  state.write((ctx) => writeGroupsInTxn(state, ctx, realm, groups));
}

function writeGroupsInTxn(
  state: StoreState,
  ctx: WriteContext,
  realm: Realm,
  groups: readonly DefaultChannelGroup[],
): void {
  const next: Realm = { ...realm, defaultChannelGroups: groups };
  state.tables.realms.putSync(realm.id, next);
  ctx.afterCommit(() => state.indexRealm(next));
  emitGroups(state, ctx, next);
}

/** Zulip's notify_default_stream_groups: the whole list to the realm's non-guests. */
function emitGroups(state: StoreState, ctx: WriteContext, realm: Realm): void {
  ctx.changed({ kind: "realm", id: realm.id, fields: ["defaultChannelGroups"] });
  ctx.emit({ type: "default_stream_groups", realmId: realm.id, groups: defaultChannelGroupsOf(realm) }, () =>
    realmAudience(state, realm.id, (u) => u.role !== ROLE.GUEST),
  );
}
