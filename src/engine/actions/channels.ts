/**
 * @module actions/channels
 * Channel creation and name lookup. Channels are usually created through subscribe
 * (Zulip creates unknown names), which calls checkNewChannel + channelRecord here.
 */
import { BadRequestError, ChannelNotFoundError, PermissionDeniedError } from "../errors.js";
import { canSeeChannel } from "../access.js";
import { channelKey, type StoreState } from "../state.js";
import type { Channel, ChannelPermissions, ChannelTopicsPolicy, GroupSettingValue, User } from "../types.js";
import { ROLE } from "../types.js";
import { systemGroupId } from "./realms.js";
import { exceedsCodePoints, MAX_LOOKUP_LENGTH } from "../limits.js";

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

/** Zulip's check_stream_name: the trimmed name, or a BadRequestError. */
export function checkChannelName(raw: string): string {
  const name = raw.trim();
  if (name.length === 0) throw new BadRequestError("Channel name can't be empty.");
  if (exceedsCodePoints(name, MAX_CHANNEL_NAME_LENGTH)) throw new BadRequestError(`Channel name too long (limit: ${MAX_CHANNEL_NAME_LENGTH} characters).`);
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

/** The channel by name in a realm, if any (case-insensitive). */
export function findChannelByName(state: StoreState, realmId: number, name: string): Channel | undefined {
  if (name.length > MAX_LOOKUP_LENGTH) return undefined;
  const id = state.channelByName.get(channelKey(realmId, name));
  return id === undefined ? undefined : state.channels.get(id);
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
export function newChannelRecord(state: StoreState, creator: User, rawName: string, options: NewChannelOptions, id: number): Channel {
  const name = checkChannelName(rawName);
  if (creator.role === ROLE.GUEST) throw new PermissionDeniedError("Insufficient permission");
  const description = (options.description ?? "").trim();
  if (description.length > MAX_CHANNEL_DESCRIPTION_LENGTH) {
    throw new BadRequestError(`Channel description too long (limit: ${MAX_CHANNEL_DESCRIPTION_LENGTH} characters).`);
  }
  const isWebPublic = options.isWebPublic ?? false;
  if (isWebPublic) {
    const realm = state.realms.get(creator.realmId);
    if (!realm?.enableSpectatorAccess) throw new BadRequestError("Web-public channels are not enabled.");
    if (creator.role > ROLE.MODERATOR) throw new PermissionDeniedError("Insufficient permission");
  }
  const inviteOnly = options.inviteOnly ?? false;
  if (inviteOnly && isWebPublic) throw new BadRequestError("A web-public channel cannot be private.");
  // Zulip: a private channel's history is protected unless asked; public channels always share it.
  const historyPublicToSubscribers = inviteOnly ? (options.historyPublicToSubscribers ?? false) : true;
  const realmId = creator.realmId;
  const group = (name: string): GroupSettingValue => systemGroupId(state, realmId, name);
  const permissions: ChannelPermissions = {
    canAddSubscribersGroup: group("role:nobody"),
    canRemoveSubscribersGroup: group("role:administrators"),
    canAdministerChannelGroup: { directMembers: [creator.id], directSubgroups: [] },
    canDeleteAnyMessageGroup: group("role:nobody"),
    canDeleteOwnMessageGroup: group("role:everyone"),
    canMoveMessagesOutOfChannelGroup: group("role:nobody"),
    canSendMessageGroup: group("role:everyone"),
    canSubscribeGroup: group("role:nobody"),
    ...options.permissions,
  };
  for (const value of Object.values(permissions)) checkGroupSettingValue(state, realmId, value);
  return {
    id,
    realmId,
    name,
    description,
    renderedDescription: description === "" ? "" : `<p>${escapeHtml(description)}</p>`,
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

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;" })[c] ?? c);
}
