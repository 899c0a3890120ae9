/**
 * @module wire/channel
 * Zulip's channel objects from engine records: the basic channel (GET /streams,
 * /register streams and never_subscribed) and the Subscription object (GET
 * /users/me/subscriptions, /register subscriptions and unsubscribed). Keep in step
 * with BasicChannel and Subscription in the API spec.
 *
 * Deviations: no traffic statistics
 * (stream_weekly_traffic null, is_recently_active true), per-subscription
 * notification settings always null (inherit). stream_post_policy and
 * is_announcement_only are derived from can_send_message_group, as in Zulip.
 */
import type { Store } from "../engine/index.js";
import type {
  Channel,
  ChannelFolder,
  DefaultChannelGroup,
  GroupSettingValue,
  Subscription,
  User,
} from "../engine/index.js";

/** A group-setting value on the wire: a group ID or {direct_members, direct_subgroups}. */
export function groupSettingToWire(
  value: GroupSettingValue,
): number | { direct_members: number[]; direct_subgroups: number[] } {
  return typeof value === "number"
    ? value
    : { direct_members: [...value.directMembers], direct_subgroups: [...value.directSubgroups] };
}

/** A group-setting value from the wire. */
export function groupSettingFromWire(
  value: number | { direct_members: number[]; direct_subgroups: number[] },
): GroupSettingValue {
  return typeof value === "number"
    ? value
    : { directMembers: value.direct_members, directSubgroups: value.direct_subgroups };
}

/** Zulip's ChannelFolder object. */
export function channelFolderToWire(folder: ChannelFolder): Record<string, unknown> {
  return {
    id: folder.id,
    name: folder.name,
    order: folder.order,
    date_created: folder.dateCreated,
    creator_id: folder.creatorId,
    description: folder.description,
    rendered_description: folder.renderedDescription,
    is_archived: folder.isArchived,
  };
}

/** Zulip's DefaultStreamGroup.to_dict: its channels as basic channel objects, by name. */
export function defaultChannelGroupToWire(store: Store, group: DefaultChannelGroup): Record<string, unknown> {
  const channels = group.channelIds
    .map((id) => store.getChannel(id))
    .filter((c): c is Channel => c !== undefined)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    name: group.name,
    id: group.id,
    description: group.description,
    streams: channels.map((c) => channelToWire(store, c)),
  };
}

/** The basic channel object (BasicChannel). */
export function channelToWire(store: Store, channel: Channel): Record<string, unknown> {
  const groups = store.channelGroupSettings(channel);
  const postPolicy = store.streamPostPolicy(channel);
  return {
    stream_id: channel.id,
    name: channel.name,
    description: channel.description,
    rendered_description: channel.renderedDescription,
    date_created: channel.dateCreated,
    creator_id: channel.creatorId,
    invite_only: channel.inviteOnly,
    is_web_public: channel.isWebPublic,
    is_archived: channel.isArchived,
    history_public_to_subscribers: channel.historyPublicToSubscribers,
    first_message_id: channel.firstMessageId,
    folder_id: channel.folderId ?? null,
    topics_policy: channel.topicsPolicy,
    is_recently_active: true,
    message_retention_days: channel.messageRetentionDays,
    stream_post_policy: postPolicy,
    is_announcement_only: postPolicy === 2,
    stream_weekly_traffic: null,
    subscriber_count: store.subscriberCount(channel.id),
    can_add_subscribers_group: groupSettingToWire(groups.canAddSubscribersGroup),
    can_remove_subscribers_group: groupSettingToWire(groups.canRemoveSubscribersGroup),
    can_administer_channel_group: groupSettingToWire(groups.canAdministerChannelGroup),
    can_create_topic_group: groupSettingToWire(groups.canCreateTopicGroup),
    can_delete_any_message_group: groupSettingToWire(groups.canDeleteAnyMessageGroup),
    can_delete_own_message_group: groupSettingToWire(groups.canDeleteOwnMessageGroup),
    can_move_messages_out_of_channel_group: groupSettingToWire(groups.canMoveMessagesOutOfChannelGroup),
    can_move_messages_within_channel_group: groupSettingToWire(groups.canMoveMessagesWithinChannelGroup),
    can_resolve_topics_group: groupSettingToWire(groups.canResolveTopicsGroup),
    can_send_message_group: groupSettingToWire(groups.canSendMessageGroup),
    can_subscribe_group: groupSettingToWire(groups.canSubscribeGroup),
  };
}

/** Subscriber IDs for a viewer, or undefined when the viewer may not list them (the engine decides). */
export function subscribersFor(store: Store, viewer: User, channel: Channel): readonly number[] | undefined {
  return store.subscribersVisibleTo(viewer.id, channel.id);
}

/** A Subscription object: the channel plus the user's personal settings. */
export function subscriptionToWire(
  store: Store,
  viewer: User,
  sub: Subscription,
  channel: Channel,
  includeSubscribers: boolean,
): Record<string, unknown> {
  return { ...channelToWire(store, channel), ...subscriberFields(store, viewer, sub, channel, includeSubscribers) };
}

/** What a Subscription object adds to the channel: the user's settings, and subscribers when asked and visible. */
export function subscriberFields(
  store: Store,
  viewer: User,
  sub: Subscription,
  channel: Channel,
  includeSubscribers: boolean,
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    color: sub.color,
    is_muted: sub.isMuted,
    in_home_view: !sub.isMuted,
    pin_to_top: sub.pinToTop,
    desktop_notifications: sub.notifications?.desktop_notifications ?? null,
    email_notifications: sub.notifications?.email_notifications ?? null,
    push_notifications: sub.notifications?.push_notifications ?? null,
    audible_notifications: sub.notifications?.audible_notifications ?? null,
    wildcard_mentions_notify: sub.notifications?.wildcard_mentions_notify ?? null,
  };
  if (includeSubscribers) {
    const subscribers = subscribersFor(store, viewer, channel);
    if (subscribers) out["subscribers"] = subscribers;
  }
  return out;
}

/** Zulip sorts channel lists by name. */
export function byName<T extends { readonly name: string }>(a: T, b: T): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
