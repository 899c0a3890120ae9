/**
 * @module http/endpoints/register/initial-state
 * The sections of POST /register's initial state, each from engine state and queries.
 * Every function is read-only.
 */
import { MAX_CHANNEL_DESCRIPTION_LENGTH, MAX_CHANNEL_NAME_LENGTH, MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH, ROLE, type Realm, type Store, type SubscribedChannel, type User, type UserTopic } from "../../../engine/index.js";
import { avatarUrl } from "../../views/avatar.js";
import { channelToWire, subscribersFor, subscriptionToWire } from "../../views/channel.js";
import { groupToWire } from "../../views/group.js";
import { scheduledMessageToWire } from "../../views/scheduled-message.js";
import { userToWire } from "../../views/user.js";

/** Upload limit we report (Zulip's historical default). */
export const MAX_FILE_UPLOAD_SIZE_MIB = 25;

export interface StateOptions {
  readonly clientGravatar: boolean;
  readonly includeSubscribers: boolean;
  /** client_capabilities.empty_topic_name: show "" rather than the display name. */
  readonly emptyTopicName: boolean;
  readonly archivedChannels: boolean;
  readonly includeDeactivatedGroups: boolean;
}

/** `realm`: organization settings and server limits. */
export function realmSection(realm: Realm, baseUrl: string): Record<string, unknown> {
  return {
    realm_name: realm.name,
    realm_description: "",
    realm_uri: baseUrl,
    realm_url: baseUrl,
    realm_date_created: realm.dateCreated,
    realm_empty_topic_display_name: realm.emptyTopicDisplayName,
    realm_topics_policy: realm.topicsPolicy,
    realm_mandatory_topics: realm.topicsPolicy === "disable_empty_topic",
    realm_enable_spectator_access: realm.enableSpectatorAccess,
    realm_new_stream_announcements_stream_id: realm.newChannelAnnouncementsChannelId ?? -1,
    realm_web_public_access_enabled: realm.enableSpectatorAccess,
    realm_is_zephyr_mirror_realm: false,
    realm_presence_disabled: true,
    realm_default_language: "en",
    max_message_length: MAX_MESSAGE_LENGTH,
    max_topic_length: MAX_TOPIC_LENGTH,
    max_stream_name_length: MAX_CHANNEL_NAME_LENGTH,
    max_stream_description_length: MAX_CHANNEL_DESCRIPTION_LENGTH,
    max_channel_folder_name_length: 60,
    max_channel_folder_description_length: 1024,
    max_file_upload_size_mib: MAX_FILE_UPLOAD_SIZE_MIB,
    max_bulk_new_subscription_messages: 100,
    event_queue_longpoll_timeout_seconds: 90,
    server_presence_ping_interval_seconds: 60,
    server_presence_offline_threshold_seconds: 140,
    server_typing_started_wait_period_milliseconds: 10000,
    server_typing_stopped_wait_period_milliseconds: 5000,
    server_typing_started_expiry_period_milliseconds: 15000,
    server_web_public_streams_enabled: false,
    server_avatar_changes_disabled: true,
    server_name_changes_disabled: false,
    server_needs_upgrade: false,
    server_inline_image_preview: false,
    server_inline_url_embed_preview: false,
    server_emoji_data_url: "",
    server_jitsi_server_url: null,
    server_can_summarize_topics: false,
    server_thumbnail_formats: [],
    server_report_message_types: [],
  };
}

/** `realm_user`: realm_users, realm_non_active_users, cross_realm_bots and own-user fields. */
export function realmUserSection(store: Store, user: User, options: StateOptions): Record<string, unknown> {
  const userOptions = { clientGravatar: options.clientGravatar, includeCustomProfileFields: false };
  const users = store.realmUsers(user.realmId);
  const ownAvatar = avatarUrl(user, false);
  return {
    realm_users: users.filter((u) => u.isActive).map((u) => userToWire(u, userOptions)),
    realm_non_active_users: users.filter((u) => !u.isActive).map((u) => userToWire(u, userOptions)),
    cross_realm_bots: [],
    user_id: user.id,
    email: user.email,
    delivery_email: user.deliveryEmail,
    full_name: user.fullName,
    avatar_source: "G",
    avatar_url: ownAvatar,
    avatar_url_medium: ownAvatar,
    is_admin: user.role <= ROLE.ADMINISTRATOR,
    is_owner: user.role === ROLE.OWNER,
    is_moderator: user.role === ROLE.MODERATOR,
    is_guest: user.role === ROLE.GUEST,
    role: user.role,
  };
}

/** `subscription`: subscriptions, unsubscribed, never_subscribed (sorted by name). */
export function subscriptionSection(store: Store, user: User, options: StateOptions): Record<string, unknown> {
  const lists = store.subscriptionLists(user.id, options.archivedChannels);
  const subscription = (s: SubscribedChannel) => subscriptionToWire(store, user, s.subscription, s.channel, options.includeSubscribers);
  return {
    subscriptions: lists.subscribed.map(subscription),
    unsubscribed: lists.unsubscribed.map(subscription),
    never_subscribed: lists.neverSubscribed.map((channel) => {
      const wire = channelToWire(store, channel);
      if (options.includeSubscribers) {
        const subscribers = subscribersFor(store, user, channel);
        if (subscribers) wire["subscribers"] = subscribers;
      }
      return wire;
    }),
  };
}

/** `stream`: the channels the user can see (BasicChannel). */
export function streamSection(store: Store, user: User, options: StateOptions): Record<string, unknown> {
  return { streams: store.visibleChannels(user.id, options.archivedChannels).map((c) => channelToWire(store, c)) };
}

/** `default_streams`: IDs of the realm's default channels (FL 330). */
export function defaultStreamsSection(store: Store, user: User): Record<string, unknown> {
  return { realm_default_streams: store.defaultChannelIds(user.id) };
}

/** `realm_user_groups`. System groups list their role-derived members; no deactivated groups unless asked. */
export function userGroupsSection(store: Store, user: User, options: StateOptions): Record<string, unknown> {
  return { realm_user_groups: store.userGroups(user.id, options.includeDeactivatedGroups).map((g) => groupToWire(store, g.group, g.members)) };
}

/** One topic policy on the wire (also the user_topic event's fields). */
export function userTopicToWire(t: UserTopic): Record<string, unknown> {
  return { stream_id: t.channelId, topic_name: t.topic, last_updated: t.lastUpdated, visibility_policy: t.policy };
}

/** `user_topic`: the user's topic visibility policies. */
export function userTopicSection(store: Store, user: User): Record<string, unknown> {
  return { user_topics: store.userTopics(user.id).map(userTopicToWire) };
}

/** `unread_msgs` in Zulip's wire shape, from the engine's unread summary. */
export function unreadSection(store: Store, realm: Realm, user: User, options: StateOptions): Record<string, unknown> {
  const u = store.unreadSummary(user.id);
  return {
    unread_msgs: {
      count: u.count,
      pms: u.pms.map((pm) => ({ other_user_id: pm.otherUserId, sender_id: pm.otherUserId, unread_message_ids: [...pm.unreadMessageIds] })),
      streams: u.streams.map((s) => ({
        stream_id: s.streamId,
        topic: s.topic === "" && !options.emptyTopicName ? realm.emptyTopicDisplayName : s.topic,
        unread_message_ids: [...s.unreadMessageIds],
      })),
      huddles: u.huddles.map((h) => ({ user_ids_string: h.userIdsString, unread_message_ids: [...h.unreadMessageIds] })),
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
export function scheduledMessagesSection(store: Store, realm: Realm, user: User, options: StateOptions): Record<string, unknown> {
  return { scheduled_messages: store.scheduledMessages(user.id).map((s) => scheduledMessageToWire(s, realm, options.emptyTopicName)) };
}
