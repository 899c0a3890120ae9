/**
 * @module actions/channel-permissions
 * The organization's channel permissions (Zulip's realm settings
 * can_create_public_channel_group, can_create_private_channel_group,
 * can_create_web_public_channel_group, can_add_subscribers_group,
 * can_set_topics_policy_group and can_set_delete_message_policy_group), as PATCH
 * /realm stores them: what channel creation, subscribing others and channel settings
 * check, and what register's can_create_*_streams and can_subscribe_other_users say.
 */
import { isAdmin } from "../access.js";
import type { StoreState } from "../state.js";
import { ROLE, type User } from "../types.js";
import { hasRealmPermission } from "./realm-permissions.js";

/** Zulip's can_create_public_streams / can_create_private_streams. */
export function canCreateChannel(state: StoreState, user: User, inviteOnly: boolean): boolean {
  return hasRealmPermission(state, user, inviteOnly ? "canCreatePrivateChannelGroup" : "canCreatePublicChannelGroup");
}

/**
 * Zulip's can_create_web_public_streams (the realm must also allow spectators). The
 * realm setting's default is moderators here (Zulip's: owners), as register says.
 */
export function canCreateWebPublicChannel(state: StoreState, user: User): boolean {
  return hasRealmPermission(state, user, "canCreateWebPublicChannelGroup");
}

/** Zulip's can_subscribe_others_to_all_accessible_streams (the realm's can_add_subscribers_group). */
export function canSubscribeOthersEverywhere(state: StoreState, user: User): boolean {
  return hasRealmPermission(state, user, "canAddSubscribersGroup");
}

/** Zulip's can_set_topics_policy: administrators, and the realm's can_set_topics_policy_group. */
export function canSetTopicsPolicy(state: StoreState, user: User): boolean {
  return isAdmin(user) || hasRealmPermission(state, user, "canSetTopicsPolicyGroup");
}

/** Zulip's can_set_delete_message_policy, for channels' can_delete_* settings. */
export function canSetChannelDeletePolicy(state: StoreState, user: User): boolean {
  return hasRealmPermission(state, user, "canSetDeleteMessagePolicyGroup");
}

/** What register's own-user fields say the user may do with channels. */
export interface ChannelRights {
  readonly createPublic: boolean;
  readonly createPrivate: boolean;
  readonly createWebPublic: boolean;
  readonly subscribeOthers: boolean;
}

export function channelRights(state: StoreState, user: User): ChannelRights {
  const realm = state.realms.get(user.realmId);
  return {
    createPublic: canCreateChannel(state, user, false),
    createPrivate: canCreateChannel(state, user, true),
    createWebPublic: (realm?.enableSpectatorAccess ?? false) && canCreateWebPublicChannel(state, user),
    subscribeOthers: user.role !== ROLE.GUEST && (canSubscribeOthersEverywhere(state, user) || isAdmin(user)),
  };
}
