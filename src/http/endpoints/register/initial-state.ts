/**
 * @module http/endpoints/register/initial-state
 * The sections of POST /register's initial state, each from engine state and queries.
 * Every function is read-only.
 */
import { ROLE, STOP_WORDS, type Realm, type Store, type User, type UserTopic } from "../../../engine/index.js";
import { userTopicToWire } from "../../../wire/user-topic.js";
import { botToWire } from "../../../wire/bot.js";
import { avatarSource, avatarUrl } from "../../../wire/avatar.js";
import { channelListJson, subscriptionListJson } from "../../views/channel-json.js";
import { scheduledMessageToWire } from "../../../wire/scheduled-message.js";
import {} from "../../../wire/user.js";
import { playgroundToWire } from "../../../wire/playground.js";
import { realmEmojiMapToWire } from "../../../wire/realm-emoji.js";
import { presencesToWire } from "../../../wire/presence.js";
import type { UserListCache } from "../../views/user-list-cache.js";
import { limitedGuestUserLists } from "../../views/limited-guest-users.js";
import type { ServerInfo } from "../../endpoint.js";
import type { GroupListCache } from "../../views/group-list-cache.js";

export interface StateOptions {
  readonly clientGravatar: boolean;
  readonly includeSubscribers: boolean;
  /** client_capabilities.empty_topic_name: show "" rather than the display name. */
  readonly emptyTopicName: boolean;
  readonly archivedChannels: boolean;
  readonly includeDeactivatedGroups: boolean;
  /** client_capabilities.user_list_incomplete: leave out users a limited guest may not see. */
  readonly userListIncomplete: boolean;
}

/** `realm_user`: realm_users, realm_non_active_users, cross_realm_bots and own-user fields. */
export function realmUserSection(
  store: Store,
  realm: Realm,
  user: User,
  options: StateOptions,
  userJson: UserListCache,
  server: ServerInfo,
): Record<string, unknown> {
  const rights = store.channelRights(user.id);
  // Zulip's register includes humans' profile_data, as realm_user add events do.
  const userOptions = { clientGravatar: options.clientGravatar, includeCustomProfileFields: true };
  const accessible = store.accessibleUserIds(user.id);
  const lists =
    accessible === null
      ? userJson.lists(user.realmId, userOptions)
      : limitedGuestUserLists(store, realm, server, accessible, {
          ...userOptions,
          placeholders: !options.userListIncomplete,
        });
  const ownAvatar = avatarUrl(user, false);
  return {
    realm_users: lists.active,
    realm_non_active_users: lists.inactive,
    cross_realm_bots: [],
    user_id: user.id,
    email: user.email,
    delivery_email: user.deliveryEmail,
    full_name: user.fullName,
    avatar_source: avatarSource(user),
    avatar_url: ownAvatar,
    avatar_url_medium: ownAvatar,
    is_admin: user.role <= ROLE.ADMINISTRATOR,
    is_owner: user.role === ROLE.OWNER,
    // Moderators and above since feature level 380.
    is_moderator: user.role <= ROLE.MODERATOR,
    is_guest: user.role === ROLE.GUEST,
    // What the engine enforces, from the realm's channel permission settings.
    can_create_public_streams: rights.createPublic,
    can_create_private_streams: rights.createPrivate,
    can_create_streams: rights.createPublic || rights.createPrivate,
    can_create_web_public_streams: rights.createWebPublic,
    can_subscribe_other_users: rights.subscribeOthers,
    can_invite_others_to_realm: store.canInviteByEmail(user.id),
  };
}

/** `realm_bot`: the bots the user owns, or every bot of the realm for an administrator. */
export function realmBotSection(store: Store, user: User): Record<string, unknown> {
  const isAdmin = user.role <= ROLE.ADMINISTRATOR;
  const bots = store.realmBots(user.realmId).filter((bot) => isAdmin || bot.botOwnerId === user.id);
  return { realm_bots: bots.map((bot) => botToWire(store, bot)) };
}

/** `recent_private_conversations`: the user's recent DM conversations, newest first. */
export function recentConversationsSection(store: Store, user: User): Record<string, unknown> {
  return {
    recent_private_conversations: store
      .recentConversations(user.id)
      .map((c) => ({ max_message_id: c.maxMessageId, user_ids: [...c.userIds] })),
  };
}

/** `muted_topics` (deprecated): [channel name, topic, muted at] for each muted topic. */
export function mutedTopicsSection(store: Store, realm: Realm, user: User): Record<string, unknown> {
  const muted: [string, string, number][] = [];
  for (const t of store.userTopics(user.id)) {
    const channel = store.getChannel(t.channelId);
    if (t.policy === 1 && channel)
      muted.push([channel.name, t.topic === "" ? realm.emptyTopicDisplayName : t.topic, t.lastUpdated]);
  }
  return { muted_topics: muted };
}

/** `stop_words`: the words full-text search ignores. */
export function stopWordsSection(): Record<string, unknown> {
  return { stop_words: [...STOP_WORDS] };
}

/** `subscription`: subscriptions, unsubscribed, never_subscribed (sorted by name), as cached channel JSON. */
export function subscriptionSection(store: Store, user: User, options: StateOptions): Record<string, unknown> {
  const lists = store.subscriptionLists(user.id, options.archivedChannels);
  return {
    subscriptions: subscriptionListJson(store, user, lists.subscribed, options.includeSubscribers),
    unsubscribed: subscriptionListJson(store, user, lists.unsubscribed, options.includeSubscribers),
    never_subscribed: channelListJson(store, user, lists.neverSubscribed, options.includeSubscribers),
  };
}

/** `stream`: the channels the user can see (BasicChannel), as cached channel JSON. */
export function streamSection(store: Store, user: User, options: StateOptions): Record<string, unknown> {
  return { streams: channelListJson(store, user, store.visibleChannels(user.id, options.archivedChannels), false) };
}

/** `default_streams`: IDs of the realm's default channels (FL 330). */
export function defaultStreamsSection(store: Store, user: User): Record<string, unknown> {
  return { realm_default_streams: store.defaultChannelIds(user.id) };
}

/** `realm_user_groups`. System groups list their role-derived members; no deactivated groups unless asked. */
export function userGroupsSection(
  user: User,
  options: StateOptions,
  groupJson: GroupListCache,
): Record<string, unknown> {
  return { realm_user_groups: groupJson.list(user, options.includeDeactivatedGroups) };
}

/**
 * `user_topic`: the user's topic visibility policies (the empty topic by its display name unless the client knows it).
 */
export function userTopicSection(
  store: Store,
  realm: Realm,
  user: User,
  options: StateOptions,
): Record<string, unknown> {
  const shown = (t: UserTopic) =>
    t.topic === "" && !options.emptyTopicName ? { ...t, topic: realm.emptyTopicDisplayName } : t;
  return { user_topics: store.userTopics(user.id).map((t) => userTopicToWire(shown(t))) };
}

/** `unread_msgs` in Zulip's wire shape, from the engine's unread summary. */
export function unreadSection(store: Store, realm: Realm, user: User, options: StateOptions): Record<string, unknown> {
  const u = store.unreadSummary(user.id);
  return {
    unread_msgs: {
      count: u.count,
      pms: u.pms.map((pm) => ({
        other_user_id: pm.otherUserId,
        sender_id: pm.otherUserId,
        unread_message_ids: [...pm.unreadMessageIds],
      })),
      streams: u.streams.map((s) => ({
        stream_id: s.streamId,
        topic: s.topic === "" && !options.emptyTopicName ? realm.emptyTopicDisplayName : s.topic,
        unread_message_ids: [...s.unreadMessageIds],
      })),
      huddles: u.huddles.map((h) => ({
        user_ids_string: h.userIdsString,
        unread_message_ids: [...h.unreadMessageIds],
      })),
      mentions: [...u.mentions],
      old_unreads_missing: u.oldUnreadsMissing,
    },
  };
}

/** `starred_messages`: IDs of the user's starred messages, ascending. */
export function starredSection(store: Store, user: User): Record<string, unknown> {
  return { starred_messages: store.starredMessageIds(user.id) };
}

/** `scheduled_messages`: the user's undelivered scheduled messages, by delivery time. */
export function scheduledMessagesSection(
  store: Store,
  realm: Realm,
  user: User,
  options: StateOptions,
): Record<string, unknown> {
  return {
    scheduled_messages: store
      .scheduledMessages(user.id)
      .map((s) => scheduledMessageToWire(s, realm, options.emptyTopicName)),
  };
}

/** `presence`: who is online, in the slim (by ID) or legacy (by email) format. */
export function presenceSection(
  store: Store,
  user: User,
  slim: boolean,
  lastUpdateId: number | undefined,
  historyLimitDays: number | undefined,
): Record<string, unknown> {
  const listing = store.realmPresence(user.id, {
    lastUpdateId: lastUpdateId ?? null,
    historyLimitDays: historyLimitDays ?? null,
  });
  return {
    presences: presencesToWire(listing, slim),
    presence_last_update_id: listing.lastUpdateId,
    server_timestamp: Date.now() / 1000,
  };
}

/** `realm_emoji`: the realm's custom emoji by ID, deactivated ones too (as Zulip's get_emoji). */
export function realmEmojiSection(store: Store, realm: Realm): Record<string, unknown> {
  return { realm_emoji: realmEmojiMapToWire(store.realmEmoji(realm.id)) };
}

/** `realm_playgrounds`: the realm's code playgrounds. */
export function playgroundsSection(store: Store, realm: Realm): Record<string, unknown> {
  return { realm_playgrounds: store.realmPlaygrounds(realm.id).map(playgroundToWire) };
}
