/**
 * @module actions/channels
 * Channel creation and name lookup. Channels are usually created through subscribe
 * (Zulip creates unknown names), which calls checkNewChannel + channelRecord here.
 */
import { BadRequestError, ChannelNotFoundError, PermissionDeniedError } from "../errors.js";
import { canCreateChannels, canSeeChannel, isAdmin } from "../access.js";
import type { StoreState } from "../state.js";
import type { Channel, ChannelPermissions, ChannelTopicsPolicy, GroupSettingValue, User } from "../types.js";
import { ROLE } from "../types.js";
import { systemGroupId } from "./realms.js";
import { renderContextFor } from "./render-context.js";
import { findChannelByName } from "./lookups.js";

export { findChannelByName };
import { exceedsCodePoints } from "../limits.js";

export const MAX_CHANNEL_NAME_LENGTH = 60;
export const MAX_CHANNEL_DESCRIPTION_LENGTH = 1024;

export interface NewChannelOptions {
  readonly description?: string;
  readonly inviteOnly?: boolean;
  readonly isWebPublic?: boolean;
  readonly historyPublicToSubscribers?: boolean;
  readonly isDefault?: boolean;
  readonly messageRetentionDays?: number | null;
  readonly topicsPolicy?: ChannelTopicsPolicy;
  readonly permissions?: Partial<ChannelPermissions>;
}

/** Each channel group setting's default system group (Zulip's stream_permission_group_settings). */
const DEFAULT_GROUPS: Readonly<Record<Exclude<keyof ChannelPermissions, "canAdministerChannelGroup">, string>> = {
  canAddSubscribersGroup: "role:nobody",
  canRemoveSubscribersGroup: "role:administrators",
  canDeleteAnyMessageGroup: "role:nobody",
  canDeleteOwnMessageGroup: "role:nobody",
  canMoveMessagesOutOfChannelGroup: "role:nobody",
  canMoveMessagesWithinChannelGroup: "role:nobody",
  canResolveTopicsGroup: "role:nobody",
  canCreateTopicGroup: "role:everyone",
  canSendMessageGroup: "role:everyone",
  canSubscribeGroup: "role:nobody",
};

/** Settings Zulip configures with allow_everyone_group=False (none allows role:internet). */
const EVERYONE_NOT_ALLOWED: ReadonlySet<keyof ChannelPermissions> = new Set([
  "canAddSubscribersGroup",
  "canAdministerChannelGroup",
  "canSubscribeGroup",
]);

/** A channel's group setting, with the default for settings older records lack. */
export function channelPermission(
  state: StoreState,
  channel: Channel,
  field: keyof ChannelPermissions,
): GroupSettingValue {
  const value = channel[field];
  if (value !== undefined) return value;
  return field === "canAdministerChannelGroup"
    ? systemGroupId(state, channel.realmId, "role:nobody")
    : systemGroupId(state, channel.realmId, DEFAULT_GROUPS[field]);
}

/** Every group setting of a channel, with defaults filled in for older records. */
export function channelGroupSettings(state: StoreState, channel: Channel): Required<ChannelPermissions> {
  const out = {} as Record<keyof ChannelPermissions, GroupSettingValue>;
  for (const field of [...Object.keys(DEFAULT_GROUPS), "canAdministerChannelGroup"] as (keyof ChannelPermissions)[])
    out[field] = channelPermission(state, channel, field);
  return out;
}

/** Zulip's system group -> stream_post_policy (1 everyone, 2 admins, 3 full members, 4 moderators). */
const POST_POLICY_BY_GROUP: ReadonlyMap<string, 1 | 2 | 3 | 4> = new Map([
  ["role:everyone", 1],
  ["role:administrators", 2],
  ["role:fullmembers", 3],
  ["role:moderators", 4],
]);

/**
 * Zulip's deprecated stream_post_policy, derived from can_send_message_group: the
 * matching system group's policy, "everyone" (1) for any other value.
 */
export function streamPostPolicy(state: StoreState, channel: Channel): 1 | 2 | 3 | 4 {
  const value = channel.canSendMessageGroup;
  const role = typeof value === "number" ? state.groups.get(value)?.systemRole : undefined;
  return (role != null ? POST_POLICY_BY_GROUP.get(role) : undefined) ?? 1;
}

/** Zulip's check_setting_configuration_for_system_groups for channel settings. */
function checkSystemGroupAllowed(state: StoreState, field: keyof ChannelPermissions, value: GroupSettingValue): void {
  if (typeof value !== "number") return;
  const role = state.groups.get(value)?.systemRole;
  const wire = field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  if (role === "role:internet") throw new BadRequestError(`'${wire}' setting cannot be set to 'role:internet' group.`);
  if (role === "role:everyone" && EVERYONE_NOT_ALLOWED.has(field))
    throw new BadRequestError(`'${wire}' setting cannot be set to 'role:everyone' group.`);
}

/** Zulip's check_stream_name: the trimmed name, or a BadRequestError. */
export function checkChannelName(raw: string): string {
  const name = raw.trim();
  if (name.length === 0) throw new BadRequestError("Channel name can't be empty.");
  if (exceedsCodePoints(name, MAX_CHANNEL_NAME_LENGTH))
    throw new BadRequestError(`Channel name too long (limit: ${MAX_CHANNEL_NAME_LENGTH} characters).`);
  let position = 0;
  for (const ch of name) {
    position++;
    const code = ch.codePointAt(0) ?? 0;
    if (code < 0x20 || code === 0x7f || (code >= 0xfdd0 && code <= 0xfdef) || (code & 0xfffe) === 0xfffe) {
      throw new BadRequestError(`Invalid character in channel name, at position ${position}.`);
    }
  }
  return name;
}

/** A channel the user can see, by ID; STREAM_DOES_NOT_EXIST otherwise (no existence leak). */
export function getVisibleChannel(state: StoreState, user: User, channelId: number): Channel {
  const channel = state.channels.get(channelId);
  if (!channel || !canSeeChannel(state, user, channel)) throw new ChannelNotFoundError({ id: channelId });
  return channel;
}

/** A channel the user can see, by name. */
export function getVisibleChannelByName(state: StoreState, user: User, name: string): Channel {
  const channel = findChannelByName(state, user.realmId, name);
  if (!channel || !canSeeChannel(state, user, channel)) throw new ChannelNotFoundError({ name });
  return channel;
}

/** Validates and builds (does not store) a new channel record created by `creator`. */
export function newChannelRecord(
  state: StoreState,
  creator: User,
  rawName: string,
  options: NewChannelOptions,
  id: number,
): Channel {
  const name = checkChannelName(rawName);
  if (!canCreateChannels(creator)) throw new PermissionDeniedError("Insufficient permission");
  const description = (options.description ?? "").trim();
  if (description.length > MAX_CHANNEL_DESCRIPTION_LENGTH) {
    throw new BadRequestError(`Channel description too long (limit: ${MAX_CHANNEL_DESCRIPTION_LENGTH} characters).`);
  }
  const isWebPublic = options.isWebPublic ?? false;
  const inviteOnly = options.inviteOnly ?? false;
  // Zulip's check_channel_creation_permissions, in its order.
  if (options.isDefault === true) {
    if (!isAdmin(creator)) throw new PermissionDeniedError("Insufficient permission");
    if (inviteOnly) throw new BadRequestError("A default channel cannot be private.");
  }
  if (isWebPublic) {
    const realm = state.realms.get(creator.realmId);
    if (!realm?.enableSpectatorAccess) throw new BadRequestError("Web-public channels are not enabled.");
    if (creator.role > ROLE.MODERATOR) throw new PermissionDeniedError("Insufficient permission");
  }
  if (options.messageRetentionDays != null && creator.role !== ROLE.OWNER)
    throw new PermissionDeniedError("Must be an organization owner", "UNAUTHORIZED_PRINCIPAL");
  if (inviteOnly && isWebPublic) throw new BadRequestError("A web-public channel cannot be private.");
  // Zulip: a private channel's history is protected unless asked; public channels always share it.
  const historyPublicToSubscribers = inviteOnly ? (options.historyPublicToSubscribers ?? false) : true;
  const realmId = creator.realmId;
  const group = (name: string): GroupSettingValue => systemGroupId(state, realmId, name);
  for (const [field, value] of Object.entries(options.permissions ?? {}) as [
    keyof ChannelPermissions,
    GroupSettingValue,
  ][]) {
    checkSystemGroupAllowed(state, field, value);
  }
  const permissions: Required<ChannelPermissions> = {
    canAddSubscribersGroup: group(DEFAULT_GROUPS.canAddSubscribersGroup),
    canRemoveSubscribersGroup: group(DEFAULT_GROUPS.canRemoveSubscribersGroup),
    canAdministerChannelGroup: { directMembers: [creator.id], directSubgroups: [] },
    canDeleteAnyMessageGroup: group(DEFAULT_GROUPS.canDeleteAnyMessageGroup),
    canDeleteOwnMessageGroup: group(DEFAULT_GROUPS.canDeleteOwnMessageGroup),
    canMoveMessagesOutOfChannelGroup: group(DEFAULT_GROUPS.canMoveMessagesOutOfChannelGroup),
    canMoveMessagesWithinChannelGroup: group(DEFAULT_GROUPS.canMoveMessagesWithinChannelGroup),
    canResolveTopicsGroup: group(DEFAULT_GROUPS.canResolveTopicsGroup),
    canCreateTopicGroup: group(DEFAULT_GROUPS.canCreateTopicGroup),
    canSendMessageGroup: group(DEFAULT_GROUPS.canSendMessageGroup),
    canSubscribeGroup: group(DEFAULT_GROUPS.canSubscribeGroup),
    ...options.permissions,
  };
  for (const value of Object.values(permissions)) checkGroupSettingValue(state, realmId, value);
  return {
    id,
    realmId,
    name,
    description,
    // Zulip renders channel descriptions as Markdown, like messages.
    renderedDescription: description === "" ? "" : state.renderer(description, renderContextFor(state, creator)).html,
    inviteOnly,
    isWebPublic,
    historyPublicToSubscribers,
    topicsPolicy: options.topicsPolicy ?? "inherit",
    messageRetentionDays: options.messageRetentionDays ?? null,
    dateCreated: state.now(),
    creatorId: creator.id,
    isArchived: false,
    isDefault: options.isDefault ?? false,
    firstMessageId: null,
    ...permissions,
  };
}

/** A group-setting value must name groups and users of the realm. */
export function checkGroupSettingValue(state: StoreState, realmId: number, value: GroupSettingValue): void {
  const groups = typeof value === "number" ? [value] : value.directSubgroups;
  for (const id of groups) {
    const group = state.groups.get(id);
    if (!group || group.realmId !== realmId) throw new BadRequestError(`Invalid user group ID: ${id}`);
  }
  if (typeof value !== "number") {
    for (const id of value.directMembers) {
      const user = state.users.get(id);
      if (!user || user.realmId !== realmId) throw new BadRequestError(`Invalid user ID: ${id}`);
    }
  }
}
