/**
 * @module access
 * Permission rules, in one place so that every entry point (HTTP, embedders, tools)
 * applies the same ones: group-setting values with subgroup recursion, system-group
 * membership by role, channel visibility and history access, message access.
 */
import type { AccessReader } from "./directory.js";
import type { Attachment, Channel, GroupSettingValue, Message, Realm, User } from "./types.js";
import { ROLE } from "./types.js";
import { userFlagHas } from "./index/user-flag-holders.js";
import { isWithdrawn } from "./index/withdrawn-rows.js";

/** System groups every realm has, and the roles they contain. */
export const SYSTEM_GROUPS: readonly {
  readonly name: string;
  readonly maxRole: number | null;
  readonly description: string;
}[] = [
  { name: "role:internet", maxRole: ROLE.GUEST, description: "Everyone on the Internet" },
  { name: "role:everyone", maxRole: ROLE.GUEST, description: "Everyone including guests" },
  { name: "role:members", maxRole: ROLE.MEMBER, description: "Members of this organization" },
  { name: "role:fullmembers", maxRole: ROLE.MEMBER, description: "Full members of this organization" },
  {
    name: "role:moderators",
    maxRole: ROLE.MODERATOR,
    description: "Moderators of this organization, including administrators",
  },
  {
    name: "role:administrators",
    maxRole: ROLE.ADMINISTRATOR,
    description: "Administrators of this organization, including owners",
  },
  { name: "role:owners", maxRole: ROLE.OWNER, description: "Owners of this organization" },
  { name: "role:nobody", maxRole: null, description: "Nobody" },
];

const FULL_MEMBERS = "role:fullmembers";
const SECONDS_PER_DAY = 86_400;

/** The realm's waiting_period_threshold in days (0: everyone is a full member at once). */
export function waitingPeriodDays(realm: Realm): number {
  const days = realm.properties?.waitingPeriodThreshold;
  return typeof days === "number" ? days : 0;
}

/**
 * The time full membership is evaluated at: the realm's last promotion pass (Zulip
 * promotes once a day by cron; parley's server hourly, with events). Evaluating at the
 * pass, not at the request, keeps every client's group lists in step with the events.
 * PATCH /realm sets it with the threshold; a realm without one has threshold 0, where
 * the time does not matter.
 */
export function fullMembersAsOf(realm: Realm): number {
  return realm.fullMembersAsOf ?? Number.POSITIVE_INFINITY;
}

/**
 * Zulip's role:fullmembers: moderators and above, and members whose account is at least
 * waiting_period_threshold whole days old (UserProfile.is_provisional_member inverted).
 */
export function isFullMember(user: User, thresholdDays: number, asOf: number): boolean {
  if (user.role < ROLE.MEMBER) return true;
  if (user.role !== ROLE.MEMBER) return false;
  if (thresholdDays === 0) return true;
  return Math.floor((asOf - user.dateJoined) / SECONDS_PER_DAY) >= thresholdDays;
}

/** Whether `user` belongs to group `groupId`, following subgroups (cycles are cut). */
export function isGroupMember(state: AccessReader, groupId: number, user: User, visited = new Set<number>()): boolean {
  if (visited.has(groupId)) return false;
  visited.add(groupId);
  const group = state.groupDirectory.get(groupId);
  if (!group || group.realmId !== user.realmId || group.deactivated) return false;
  if (!user.isActive) return false;
  if (group.systemRole !== null) {
    const system = SYSTEM_GROUPS.find((g) => g.name === group.systemRole);
    if (system?.maxRole == null || user.role > system.maxRole) return false;
    if (group.systemRole !== FULL_MEMBERS) return true;
    const realm = state.realmDirectory.get(user.realmId);
    return realm === undefined || isFullMember(user, waitingPeriodDays(realm), fullMembersAsOf(realm));
  }
  if (group.members.includes(user.id)) return true;
  return group.subgroups.some((sub) => isGroupMember(state, sub, user, visited));
}

/**
 * The users isGroupMember counts in the group (active, of its realm, subgroups followed),
 * in one pass over its member lists: asking isGroupMember of each of a realm's 10,000 users
 * scans a 10,000-member list each time. A system group's members are its realm's users of
 * its roles, each asked (cheaply: no list to scan).
 */
export function groupMemberIds(state: AccessReader, groupId: number): Set<number> {
  const out = new Set<number>();
  const root = state.groupDirectory.get(groupId);
  if (!root) return out;
  const realmId = root.realmId;
  const visited = new Set<number>();
  const visit = (id: number): void => {
    if (visited.has(id)) return;
    visited.add(id);
    const group = state.groupDirectory.get(id);
    if (!group || group.realmId !== realmId || group.deactivated) return;
    if (group.systemRole !== null) {
      for (const userId of state.userDirectory.ofRealm(realmId)) {
        const user = state.userDirectory.get(userId);
        if (user && isGroupMember(state, id, user)) out.add(userId);
      }
      return;
    }
    for (const userId of group.members) {
      const user = state.userDirectory.get(userId);
      if (user?.isActive && user.realmId === realmId) out.add(userId);
    }
    for (const sub of group.subgroups) visit(sub);
  };
  visit(groupId);
  return out;
}

/** Whether `user` is allowed by a group-setting value. */
export function isAllowedBy(state: AccessReader, value: GroupSettingValue, user: User): boolean {
  if (typeof value === "number") return isGroupMember(state, value, user);
  if (!user.isActive) return false;
  if (value.directMembers.includes(user.id)) return true;
  const visited = new Set<number>();
  return value.directSubgroups.some((sub) => isGroupMember(state, sub, user, visited));
}

/** Every active user of the realm that a group-setting value allows (recursion included). */
export function membersOf(state: AccessReader, realmId: number, value: GroupSettingValue): number[] {
  const out: number[] = [];
  for (const id of state.userDirectory.ofRealm(realmId)) {
    const user = state.userDirectory.get(id);
    if (user && isAllowedBy(state, value, user)) out.push(user.id);
  }
  return out;
}

export function isSubscribed(state: AccessReader, userId: number, channelId: number): boolean {
  return state.channelDirectory.isSubscribed(userId, channelId);
}

export function isAdmin(user: User): boolean {
  return user.role <= ROLE.ADMINISTRATOR;
}

/** Zulip's can_admin_user: a bot's owner, or an administrator of the target's realm. */
export function canAdminUser(actor: User, target: User): boolean {
  if (target.botOwnerId === actor.id) return true;
  return isAdmin(actor) && actor.realmId === target.realmId;
}

/** Zulip's can_manage_default_streams: administrators. */
export function canManageDefaultChannels(user: User): boolean {
  return isAdmin(user);
}

/**
 * Zulip's can_access_stream_history: may the user read messages sent before they
 * joined? Private channels with shared history also to those with content access
 * through can_subscribe_group or can_add_subscribers_group.
 */
export function canAccessChannelHistory(state: AccessReader, user: User, channel: Channel): boolean {
  if (channel.realmId !== user.realmId) return false;
  if (channel.isWebPublic) return true;
  if (!channel.inviteOnly && user.role !== ROLE.GUEST) return true;
  if (!channel.historyPublicToSubscribers) return false;
  return isSubscribed(state, user.id, channel.id) || hasContentAccessViaGroups(state, user, channel);
}

/**
 * Zulip's has_metadata_access_to_channel_via_groups: membership of a setting that
 * grants a private channel's metadata (can_administer_channel_group,
 * can_add_subscribers_group, can_subscribe_group). All three exclude role:everyone,
 * so guests never get access this way.
 */
export function hasMetadataAccessViaGroups(state: AccessReader, user: User, channel: Channel): boolean {
  if (user.role === ROLE.GUEST || channel.realmId !== user.realmId) return false;
  return (
    isAllowedBy(state, channel.canAdministerChannelGroup, user) ||
    isAllowedBy(state, channel.canAddSubscribersGroup, user) ||
    isAllowedBy(state, channel.canSubscribeGroup, user)
  );
}

/**
 * Zulip's is_user_in_groups_granting_content_access: can_subscribe_group and
 * can_add_subscribers_group give a private channel's content without a subscription
 * (never to guests).
 */
export function hasContentAccessViaGroups(state: AccessReader, user: User, channel: Channel): boolean {
  if (user.role === ROLE.GUEST || channel.realmId !== user.realmId) return false;
  return (
    isAllowedBy(state, channel.canSubscribeGroup, user) || isAllowedBy(state, channel.canAddSubscribersGroup, user)
  );
}

/**
 * May the user see that the channel exists (Zulip's user_has_metadata_access:
 * metadata, subscribe to it, name it in a narrow)? Web-public for all, subscribers,
 * public channels for non-guests, private ones also for administrators and for the
 * members of can_administer_channel_group, can_add_subscribers_group and
 * can_subscribe_group.
 */
export function canSeeChannel(state: AccessReader, user: User, channel: Channel): boolean {
  if (channel.realmId !== user.realmId) return false;
  if (channel.isWebPublic) return true;
  if (isSubscribed(state, user.id, channel.id)) return true;
  if (user.role === ROLE.GUEST) return false;
  if (!channel.inviteOnly || isAdmin(user)) return true;
  return hasMetadataAccessViaGroups(state, user, channel);
}

/**
 * Zulip's user_has_content_access (access_stream_by_id with require_content_access):
 * the channel's subscribers, non-guests for public channels, web-public for all, and
 * for private ones the members of can_subscribe_group and can_add_subscribers_group.
 */
export function canAccessChannelContent(state: AccessReader, user: User, channel: Channel): boolean {
  if (channel.realmId !== user.realmId) return false;
  if (channel.isWebPublic || isSubscribed(state, user.id, channel.id)) return true;
  if (user.role === ROLE.GUEST) return false;
  return !channel.inviteOnly || hasContentAccessViaGroups(state, user, channel);
}

/**
 * Zulip's can_administer_accessible_channel, for a user who has the channel's
 * metadata: administrators, and non-guest members of can_administer_channel_group.
 */
export function canAdministerChannel(state: AccessReader, user: User, channel: Channel): boolean {
  if (channel.realmId !== user.realmId || !user.isActive) return false;
  if (isAdmin(user)) return true;
  return user.role !== ROLE.GUEST && isAllowedBy(state, channel.canAdministerChannelGroup, user);
}

/** May the user list the channel's subscribers? Whoever may see the channel. */
export function canSeeSubscribers(state: AccessReader, user: User, channel: Channel): boolean {
  return canSeeChannel(state, user, channel);
}

/** Zulip's access_stream_for_send_message, minus the mirroring cases. */
export function canSendToChannel(state: AccessReader, user: User, channel: Channel): boolean {
  return sendRefusal(state, user, channel) === null;
}

/**
 * Why the user may not send to the channel, in Zulip's order: "group" when
 * can_send_message_group refuses them (a bot falls back on its owner), "access" when
 * the channel is archived, in another realm, or private and the sender (or a bot's
 * owner) is not subscribed; null when sending is allowed.
 */
export function sendRefusal(state: AccessReader, user: User, channel: Channel): "group" | "access" | null {
  if (channel.realmId !== user.realmId) return "access";
  if (!isAllowedBy(state, channel.canSendMessageGroup, user)) {
    const owner = user.isBot && user.botOwnerId !== null ? state.userDirectory.get(user.botOwnerId) : undefined;
    if (!owner || !isAllowedBy(state, channel.canSendMessageGroup, owner)) return "group";
  }
  if (channel.isArchived) return "access";
  if (channel.isWebPublic) return null;
  if (!channel.inviteOnly && user.role !== ROLE.GUEST) return null;
  if (isSubscribed(state, user.id, channel.id)) return null;
  if (user.isBot && user.botOwnerId !== null && isSubscribed(state, user.botOwnerId, channel.id)) return null;
  if (channel.historyPublicToSubscribers && hasContentAccessViaGroups(state, user, channel)) return null;
  return "access";
}

/**
 * Did the user receive the message (a UserMessage row created at send, or by moving it
 * into a channel they were subscribed to when it was sent) and keep its row?
 */
export function receivedAtSend(state: AccessReader, userId: number, message: Message): boolean {
  if (message.recipient.type === "channel") {
    if (isWithdrawn(state.bitmaps, userId, message.id)) return false;
    if (userFlagHas(state.bitmaps, userId, "granted", message.id)) return true;
  }
  if (message.senderId === userId) return true;
  if (message.recipient.type === "direct") {
    return state.conversations.get(message.recipient.conversationId)?.userIds.includes(userId) ?? false;
  }
  const sub = state.channelDirectory.subscription(userId, message.recipient.channelId);
  if (!sub) return false;
  return sub.intervals.some((iv) => message.id >= iv.from && (iv.to === null || message.id < iv.to));
}

/** Does the user have a row for the message (received, or a materialised historical row)? */
export function hasRow(state: AccessReader, userId: number, message: Message): boolean {
  return receivedAtSend(state, userId, message) || userFlagHas(state.bitmaps, userId, "historical", message.id);
}

/** Zulip's has_message_access: a row, or a channel message whose history the user may read. */
export function canAccessMessage(state: AccessReader, user: User, message: Message): boolean {
  if (message.realmId !== user.realmId) return false;
  if (hasRow(state, user.id, message)) return true;
  if (message.recipient.type !== "channel") return false;
  const channel = state.channelDirectory.get(message.recipient.channelId);
  return channel !== undefined && canAccessChannelHistory(state, user, channel);
}

/**
 * Zulip's access_message for a change (is_modifying_message): a direct message for its
 * participants; a channel message only while its channel is not archived, and then by
 * Zulip's has_message_access, where (unlike canAccessMessage) a row alone does not keep
 * a message of a channel the user has left: public channels for non-guests, channels
 * with shared history for subscribers, protected history for subscribers who received it.
 */
export function canChangeMessage(state: AccessReader, user: User, message: Message): boolean {
  if (message.realmId !== user.realmId) return false;
  if (message.recipient.type === "direct") return receivedAtSend(state, user.id, message);
  const channel = state.channelDirectory.get(message.recipient.channelId);
  if (!channel || channel.realmId !== user.realmId || channel.isArchived) return false;
  if (!channel.inviteOnly && user.role !== ROLE.GUEST) return true;
  if (!isSubscribed(state, user.id, channel.id)) return false;
  return channel.historyPublicToSubscribers || hasRow(state, user.id, message);
}

/** The messages that link an attachment and still exist. */
function linkingMessages(state: AccessReader, attachment: Attachment): Message[] {
  const out: Message[] = [];
  for (const id of attachment.messageIds) {
    const message = state.messageRecord(id);
    if (message) out.push(message);
  }
  return out;
}

/**
 * Zulip's validate_attachment_request: may `viewer` (null: a visitor without
 * credentials, in realm `realmId`) download the file? The uploader always may; anyone
 * else only through a message that links it:
 * - a direct message they are a participant of;
 * - a channel message of a public channel, for non-guests of the realm;
 * - a channel message they received and whose channel they are still subscribed to;
 * - any message of a channel they are subscribed to whose history is public to subscribers, or
 *   whose content can_subscribe_group or can_add_subscribers_group gives them.
 * Visitors without credentials only for files linked from web-public channels of a
 * realm that allows spectators. Publicity is evaluated live, not cached on the record
 * as Zulip does, so a channel made private stops sharing its files at once.
 */
export function canDownloadAttachment(
  state: AccessReader,
  viewer: User | null,
  realmId: number,
  attachment: Attachment,
): boolean {
  if (attachment.realmId !== realmId) return false;
  if (viewer === null) {
    const realm = state.realmDirectory.get(realmId);
    if (!realm?.enableSpectatorAccess) return false;
    return linkingMessages(state, attachment).some(
      (m) => m.recipient.type === "channel" && state.channelDirectory.get(m.recipient.channelId)?.isWebPublic === true,
    );
  }
  if (viewer.realmId !== attachment.realmId || !viewer.isActive) return false;
  if (viewer.id === attachment.ownerId) return true;
  for (const message of linkingMessages(state, attachment)) {
    if (message.recipient.type === "direct") {
      if (hasRow(state, viewer.id, message)) return true;
      continue;
    }
    const channel = state.channelDirectory.get(message.recipient.channelId);
    if (!channel || channel.realmId !== viewer.realmId) continue;
    if (!channel.inviteOnly && viewer.role !== ROLE.GUEST) return true;
    if (!isSubscribed(state, viewer.id, channel.id)) {
      if (channel.historyPublicToSubscribers && hasContentAccessViaGroups(state, viewer, channel)) return true;
      continue;
    }
    if (channel.historyPublicToSubscribers || hasRow(state, viewer.id, message)) return true;
  }
  return false;
}
