/**
 * @module actions/channels
 * Channel creation and name lookup. Channels are usually created through subscribe
 * (Zulip creates unknown names), which calls checkNewChannel + channelRecord here.
 */
import {
  BadRequestError,
  ChannelNotFoundError,
  clip,
  IncompatibleParametersError,
  OrganizationOwnerRequiredError,
  PermissionDeniedError,
} from "../errors.js";
import { canAccessChannelContent, canSeeChannel, isAdmin, isAllowedBy, sendRefusal } from "../access.js";
import { createHash } from "node:crypto";
import { key } from "../index/keys.js";
import {
  canCreateChannel,
  canCreateWebPublicChannel,
  canSetChannelDeletePolicy,
  canSetTopicsPolicy,
} from "./channel-permissions.js";
import type { StoreState } from "../state.js";
import type {
  Channel,
  ChannelFolder,
  ChannelPermissions,
  ChannelTopicsPolicy,
  GroupSettingValue,
  User,
} from "../types.js";
import { ROLE } from "../types.js";
import { realmUuid, systemGroupId } from "./realms.js";
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
  /** The channel folder it starts in. */
  readonly folderId?: number;
}

export type ChannelGroupField = keyof ChannelPermissions;

/** One channel group setting: its wire name, whether role:everyone may hold it, its default. */
export interface ChannelGroupSettingSpec {
  readonly field: ChannelGroupField;
  readonly wire: string;
  /** Zulip's allow_everyone_group (no setting allows role:internet). */
  readonly allowEveryone: boolean;
  /** A system group, or "creator": an anonymous group of the channel's creator. */
  readonly byDefault: string;
}

/** Zulip's Stream.stream_permission_group_settings. */
export const CHANNEL_GROUP_SETTINGS: readonly ChannelGroupSettingSpec[] = [
  {
    field: "canAddSubscribersGroup",
    wire: "can_add_subscribers_group",
    allowEveryone: false,
    byDefault: "role:nobody",
  },
  {
    field: "canAdministerChannelGroup",
    wire: "can_administer_channel_group",
    allowEveryone: false,
    byDefault: "creator",
  },
  { field: "canCreateTopicGroup", wire: "can_create_topic_group", allowEveryone: true, byDefault: "role:everyone" },
  {
    field: "canDeleteAnyMessageGroup",
    wire: "can_delete_any_message_group",
    allowEveryone: true,
    byDefault: "role:nobody",
  },
  {
    field: "canDeleteOwnMessageGroup",
    wire: "can_delete_own_message_group",
    allowEveryone: true,
    byDefault: "role:nobody",
  },
  {
    field: "canMoveMessagesOutOfChannelGroup",
    wire: "can_move_messages_out_of_channel_group",
    allowEveryone: true,
    byDefault: "role:nobody",
  },
  {
    field: "canMoveMessagesWithinChannelGroup",
    wire: "can_move_messages_within_channel_group",
    allowEveryone: true,
    byDefault: "role:nobody",
  },
  {
    field: "canRemoveSubscribersGroup",
    wire: "can_remove_subscribers_group",
    allowEveryone: true,
    byDefault: "role:administrators",
  },
  { field: "canResolveTopicsGroup", wire: "can_resolve_topics_group", allowEveryone: true, byDefault: "role:nobody" },
  { field: "canSendMessageGroup", wire: "can_send_message_group", allowEveryone: true, byDefault: "role:everyone" },
  { field: "canSubscribeGroup", wire: "can_subscribe_group", allowEveryone: false, byDefault: "role:nobody" },
];

const SPEC_BY_FIELD: ReadonlyMap<ChannelGroupField, ChannelGroupSettingSpec> = new Map(
  CHANNEL_GROUP_SETTINGS.map((spec) => [spec.field, spec]),
);

function specOf(field: ChannelGroupField): ChannelGroupSettingSpec {
  return SPEC_BY_FIELD.get(field)!;
}

/** Zulip's stream_permission_group_settings_requiring_content_access. */
export const SETTINGS_REQUIRING_CONTENT_ACCESS: ReadonlySet<ChannelGroupField> = new Set([
  "canAddSubscribersGroup",
  "canSubscribeGroup",
]);

/** Zulip's stream_permission_group_settings_granting_metadata_access. */
export const SETTINGS_GRANTING_METADATA_ACCESS: ReadonlySet<ChannelGroupField> = new Set([
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
  const byDefault = specOf(field).byDefault;
  return systemGroupId(state, channel.realmId, byDefault === "creator" ? "role:nobody" : byDefault);
}

/** Every group setting of a channel, with defaults filled in for older records. */
export function channelGroupSettings(state: StoreState, channel: Channel): Required<ChannelPermissions> {
  const out = {} as Record<keyof ChannelPermissions, GroupSettingValue>;
  for (const { field } of CHANNEL_GROUP_SETTINGS) out[field] = channelPermission(state, channel, field);
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

/**
 * Zulip's parse_group_setting_value: an anonymous value of one subgroup and no members
 * is that group, and an empty one is role:nobody.
 */
export function normalizeGroupSetting(state: StoreState, realmId: number, value: GroupSettingValue): GroupSettingValue {
  if (typeof value === "number") return value;
  if (value.directMembers.length === 0 && value.directSubgroups.length === 1) return value.directSubgroups[0]!;
  if (value.directMembers.length === 0 && value.directSubgroups.length === 0)
    return systemGroupId(state, realmId, "role:nobody");
  return value;
}

/** Zulip's are_both_group_setting_values_equal (anonymous values compare as sets). */
export function sameGroupSetting(a: GroupSettingValue, b: GroupSettingValue): boolean {
  if (typeof a === "number" || typeof b === "number") return a === b;
  const sorted = (xs: readonly number[]) => [...new Set(xs)].sort((x, y) => x - y).join(",");
  return sorted(a.directMembers) === sorted(b.directMembers) && sorted(a.directSubgroups) === sorted(b.directSubgroups);
}

/**
 * Zulip's access_user_group_for_setting for a channel setting: normalized, naming
 * groups of the realm that are not deactivated and its active users, and no system
 * group the setting excludes (role:internet always, role:everyone where not allowed).
 */
export function checkChannelGroupSetting(
  state: StoreState,
  realmId: number,
  field: ChannelGroupField,
  raw: GroupSettingValue,
): GroupSettingValue {
  const value = normalizeGroupSetting(state, realmId, raw);
  const spec = specOf(field);
  if (typeof value === "number") {
    const group = state.groups.get(value);
    if (!group || group.realmId !== realmId) throw new BadRequestError(`Invalid user group ID: ${value}`);
    if (group.deactivated) throw new BadRequestError("User group is deactivated.");
    if (group.systemRole === "role:internet")
      throw new BadRequestError(`'${spec.wire}' setting cannot be set to 'role:internet' group.`);
    if (group.systemRole === "role:everyone" && !spec.allowEveryone)
      throw new BadRequestError(`'${spec.wire}' setting cannot be set to 'role:everyone' group.`);
    return value;
  }
  for (const id of value.directSubgroups) {
    const group = state.groups.get(id);
    if (!group || group.realmId !== realmId) throw new BadRequestError(`Invalid user group ID: ${id}`);
    if (group.deactivated) throw new BadRequestError("User group is deactivated.");
  }
  for (const id of value.directMembers) {
    const user = state.users.get(id);
    if (!user || user.realmId !== realmId || !user.isActive) throw new BadRequestError(`Invalid user ID: ${id}`);
  }
  const sorted = (xs: readonly number[]) => [...new Set(xs)].sort((a, b) => a - b);
  return { directMembers: sorted(value.directMembers), directSubgroups: sorted(value.directSubgroups) };
}

/**
 * Zulip's validate_can_create_topic_group_setting_for_protected_history_streams: a
 * channel with protected history lets everyone start topics, so its
 * can_create_topic_group must be role:everyone itself.
 */
export function checkTopicCreationForProtectedHistory(
  state: StoreState,
  realmId: number,
  historyPublicToSubscribers: boolean,
  canCreateTopicGroup: GroupSettingValue,
): void {
  if (historyPublicToSubscribers) return;
  if (canCreateTopicGroup !== systemGroupId(state, realmId, "role:everyone"))
    throw new IncompatibleParametersError(["history_public_to_subscribers", "can_create_topic_group"]);
}

/** The system group settings whose change needs can_set_delete_message_policy_group. */
export const DELETE_POLICY_SETTINGS: ReadonlySet<ChannelGroupField> = new Set([
  "canDeleteAnyMessageGroup",
  "canDeleteOwnMessageGroup",
]);

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
  const inviteOnly = options.inviteOnly ?? false;
  if (!canCreateChannel(state, creator, inviteOnly)) throw new PermissionDeniedError("Insufficient permission");
  const description = (options.description ?? "").trim();
  if (description.length > MAX_CHANNEL_DESCRIPTION_LENGTH) {
    throw new BadRequestError(`Channel description too long (limit: ${MAX_CHANNEL_DESCRIPTION_LENGTH} characters).`);
  }
  const isWebPublic = options.isWebPublic ?? false;
  // Zulip's check_channel_creation_permissions, in its order.
  if (options.isDefault === true) {
    if (!isAdmin(creator)) throw new PermissionDeniedError("Insufficient permission");
    if (inviteOnly) throw new BadRequestError("A default channel cannot be private.");
  }
  if (isWebPublic) {
    const realm = state.realms.get(creator.realmId);
    if (!realm?.enableSpectatorAccess) throw new BadRequestError("Web-public channels are not enabled.");
    if (!canCreateWebPublicChannel(state, creator)) throw new PermissionDeniedError("Insufficient permission");
  }
  if (options.messageRetentionDays != null && creator.role !== ROLE.OWNER) throw new OrganizationOwnerRequiredError();
  if (inviteOnly && isWebPublic) throw new BadRequestError("A web-public channel cannot be private.");
  // Zulip: a private channel's history is protected unless asked; public channels always share it.
  const historyPublicToSubscribers = inviteOnly ? (options.historyPublicToSubscribers ?? false) : true;
  const topicsPolicy = options.topicsPolicy ?? "inherit";
  if (topicsPolicy !== "inherit" && !canSetTopicsPolicy(state, creator))
    throw new PermissionDeniedError("Insufficient permission");
  const realmId = creator.realmId;
  if (options.folderId !== undefined) requireChannelFolder(state, realmId, options.folderId);
  const permissions = {} as Record<ChannelGroupField, GroupSettingValue>;
  for (const spec of CHANNEL_GROUP_SETTINGS) {
    const given = options.permissions?.[spec.field];
    if (given === undefined) {
      permissions[spec.field] =
        spec.byDefault === "creator"
          ? { directMembers: [creator.id], directSubgroups: [] }
          : systemGroupId(state, realmId, spec.byDefault);
      continue;
    }
    const value = checkChannelGroupSetting(state, realmId, spec.field, given);
    if (
      DELETE_POLICY_SETTINGS.has(spec.field) &&
      value !== systemGroupId(state, realmId, "role:nobody") &&
      !canSetChannelDeletePolicy(state, creator)
    )
      throw new PermissionDeniedError("Insufficient permission");
    permissions[spec.field] = value;
  }
  if (options.permissions?.canCreateTopicGroup !== undefined)
    checkTopicCreationForProtectedHistory(state, realmId, historyPublicToSubscribers, permissions.canCreateTopicGroup);
  return {
    id,
    realmId,
    name,
    description,
    // Zulip renders channel descriptions as Markdown, like messages.
    renderedDescription: renderChannelDescription(state, creator, description),
    inviteOnly,
    isWebPublic,
    historyPublicToSubscribers,
    topicsPolicy,
    messageRetentionDays: options.messageRetentionDays ?? null,
    dateCreated: state.now(),
    creatorId: creator.id,
    isArchived: false,
    isDefault: options.isDefault ?? false,
    firstMessageId: null,
    ...(options.folderId !== undefined ? { folderId: options.folderId } : {}),
    ...permissions,
  };
}

/** A channel folder of the realm by ID (Zulip's get_channel_folder_by_id): "Invalid channel folder ID" otherwise. */
export function requireChannelFolder(state: StoreState, realmId: number, folderId: number): ChannelFolder {
  const folder = state.channelFolders.get(folderId);
  if (!folder || folder.realmId !== realmId) throw new BadRequestError("Invalid channel folder ID");
  return folder;
}

/** Zulip's render_stream_description: Markdown, as messages are rendered. */
export function renderChannelDescription(state: StoreState, actor: User, description: string): string {
  return description === "" ? "" : state.renderer(description, renderContextFor(state, actor)).html;
}

/**
 * Zulip's access_stream_by_id: the channel, for a user who has its metadata (or, with
 * `content`, its content) and, unless `archived` is allowed, while it is not archived;
 * "Invalid channel ID" otherwise, as for a channel that does not exist.
 */
export function accessChannelById(
  state: StoreState,
  user: User,
  channelId: number,
  options: { readonly content: boolean; readonly archived?: boolean },
): Channel {
  const channel = state.channels.get(channelId);
  const reachable =
    channel !== undefined &&
    (options.archived === true || !channel.isArchived) &&
    (options.content ? canAccessChannelContent(state, user, channel) : canSeeChannel(state, user, channel));
  if (!reachable) throw new BadRequestError("Invalid channel ID");
  return channel;
}

/** Zulip's access_stream_by_name (content access, not archived): "Invalid channel name 'NAME'" otherwise. */
export function accessChannelByName(state: StoreState, user: User, name: string): Channel {
  const channel = findChannelByName(state, user.realmId, name.trim());
  if (!channel || channel.isArchived || !canAccessChannelContent(state, user, channel))
    throw new BadRequestError(`Invalid channel name '${clip(name)}'`);
  return channel;
}

/**
 * Zulip's check_for_can_create_topic_group_violation: a topic the channel has no
 * message in yet needs can_create_topic_group (a bot may use its owner's).
 */
export function checkTopicCreation(state: StoreState, user: User, channel: Channel, topic: string): void {
  const group = channelPermission(state, channel, "canCreateTopicGroup");
  if (group === systemGroupId(state, channel.realmId, "role:everyone")) return;
  if (!state.bitmaps.isEmpty(key.channelTopic(channel.id, topic))) return;
  if (isAllowedBy(state, group, user)) return;
  const owner = user.isBot && user.botOwnerId !== null ? state.users.get(user.botOwnerId) : undefined;
  if (owner && isAllowedBy(state, group, owner)) return;
  throw new BadRequestError("You do not have permission to create new topics in this channel.");
}

/** Zulip's access_user_by_id for reading (bots included, deactivated users not): "No such user" otherwise. */
function accessUserForViewer(state: StoreState, viewer: User, userId: number): User {
  const target = state.users.get(userId);
  if (!target || target.realmId !== viewer.realmId || !target.isActive) throw new BadRequestError("No such user");
  return target;
}

/** GET /users/{user_id}/subscriptions/{stream_id}: is the user subscribed to a channel the viewer can see? */
export function isUserSubscribed(state: StoreState, viewer: User, userId: number, channelId: number): boolean {
  const target = accessUserForViewer(state, viewer, userId);
  const channel = accessChannelById(state, viewer, channelId, { content: false });
  return state.subscribers.get(channel.id)?.has(target.id) ?? false;
}

/**
 * GET /users/{user_id}/channels: the channels the user is subscribed to whose
 * metadata the viewer has (all of them, for administrators), by ID.
 */
export function userChannelIds(state: StoreState, viewer: User, userId: number): number[] {
  const target = accessUserForViewer(state, viewer, userId);
  const out: number[] = [];
  for (const [channelId, sub] of state.subsByUser.get(target.id) ?? []) {
    const channel = state.channels.get(channelId);
    if (sub.active && channel && canSeeChannel(state, viewer, channel)) out.push(channelId);
  }
  return out.sort((a, b) => a - b);
}

/**
 * GET /streams/{stream_id}/email_address: the token of the channel's email address for
 * `senderId` (Zulip's get_channel_email_token), for a caller who may post there (Zulip
 * since feature level 448). The sender is the caller, a bot the caller owns (any bot,
 * for administrators), or null for Zulip's email gateway bot. parley receives no mail:
 * the token is derived (stable per realm, channel and sender) and nothing is stored.
 */
export function channelEmailToken(
  state: StoreState,
  viewer: User,
  channelId: number,
  senderId: number | null,
): { channel: Channel; token: string } {
  const channel = accessChannelById(state, viewer, channelId, { content: true });
  if (sendRefusal(state, viewer, channel) !== null)
    throw new BadRequestError("You do not have permission to post in this channel.");
  if (senderId !== null && senderId !== viewer.id) {
    const bot = state.users.get(senderId);
    if (!bot || bot.realmId !== viewer.realmId || !bot.isBot || !bot.isActive) throw new BadRequestError("No such bot");
    if (bot.botOwnerId !== viewer.id && !isAdmin(viewer)) throw new PermissionDeniedError("Insufficient permission");
  }
  const realm = state.realms.get(channel.realmId)!;
  const token = createHash("sha256")
    .update(`parley-channel-email:${realmUuid(realm)}:${channel.id}:${senderId ?? "gateway"}`)
    .digest("hex")
    .slice(0, 32);
  return { channel, token };
}
