/**
 * @module actions/notification-triggers
 * The one decision behind mobile push and missed-message email (Zulip's
 * UserMessageNotificationsData): whether a recipient is away, and which trigger, in
 * Zulip's order of precedence, makes a message notifiable for them. Push and email read
 * the same flags, policies and away test; they differ only in which settings apply.
 *
 * Alert words are a trigger here although Zulip's server notifies them on desktops only
 * (zulip/zulip#13127): they follow the setting Zulip's settings page names "DMs,
 * mentions, and alerts" (enable_offline_*_notifications), after the mentions in precedence.
 */
import { OFFLINE_THRESHOLD_SECS } from "./presence.js";
import type { Settings } from "../settings/defaults.js";
import type { StoreState } from "../state.js";
import type { Channel, EmailTrigger, Message, PushTrigger, User } from "../types.js";
import { topicPolicyOf } from "./user-topics.js";

export type NotificationMedium = "push" | "email";

export interface TriggerDecision<T extends PushTrigger | EmailTrigger> {
  readonly trigger: T;
  readonly mentionedGroupId: number | null;
}

type TriggerOf<M extends NotificationMedium> = M extends "push" ? PushTrigger : EmailTrigger;

/**
 * Zulip's "user is away" test: no presence in the last OFFLINE_THRESHOLD_SECS. Email
 * goes only to users away; push also to users here with enable_online_push_notifications.
 */
export function recentlyActive(state: StoreState, userId: number): boolean {
  const last = state.presence.get(userId)?.lastActive ?? null;
  return last !== null && state.now() - last < OFFLINE_THRESHOLD_SECS;
}

/** The setting of "DMs, mentions, and alerts" for the medium. */
export function offlineEnabled(settings: Settings, medium: NotificationMedium): boolean {
  return medium === "push" ? settings.enable_offline_push_notifications : settings.enable_offline_email_notifications;
}

/** A direct message's trigger for one of its participants (not the sender), or null. */
export function directTrigger<M extends NotificationMedium>(
  settings: Settings,
  medium: M,
): TriggerDecision<TriggerOf<M>> | null {
  return offlineEnabled(settings, medium)
    ? { trigger: "direct_message" as TriggerOf<M>, mentionedGroupId: null }
    : null;
}

/** The trigger for one recipient of a channel message, or null. `flags` are the user's flags on it. */
export function channelTrigger<M extends NotificationMedium>(
  state: StoreState,
  user: User,
  settings: Settings,
  message: Message,
  channel: Channel,
  flags: readonly string[],
  medium: M,
): TriggerDecision<TriggerOf<M>> | null {
  const decide = (trigger: PushTrigger | EmailTrigger, mentionedGroupId: number | null = null) => ({
    trigger: trigger as TriggerOf<M>,
    mentionedGroupId,
  });
  const sub = state.subsByUser.get(user.id)?.get(channel.id);
  if (!sub) return null;
  const policy = topicPolicyOf(state, user.id, channel.id, message.topic);
  const followed = policy === 3;
  const muted = policy === 1 || (sub.isMuted && policy !== 2 && !followed);
  const offline = offlineEnabled(settings, medium);
  if (offline && flags.includes("mentioned")) return decide("mentioned");
  if (offline && flags.includes("group_mentioned"))
    return decide("mentioned", smallestMentionedGroup(state, user, message));
  const wildcardNotify = sub.notifications?.wildcard_mentions_notify ?? settings.wildcard_mentions_notify;
  const topicWildcard = flags.includes("topic_wildcard_mentioned");
  const streamWildcard = message.wildcard === "stream";
  if (offline && followed && settings.enable_followed_topic_wildcard_mentions_notify) {
    if (topicWildcard) return decide("topic_wildcard_mentioned_in_followed_topic");
    if (streamWildcard) return decide("stream_wildcard_mentioned_in_followed_topic");
  }
  if (offline && !muted && wildcardNotify) {
    if (topicWildcard) return decide("topic_wildcard_mentioned");
    if (streamWildcard) return decide("stream_wildcard_mentioned");
  }
  if (offline && flags.includes("has_alert_word")) return decide("alert_word");
  if (medium === "push") {
    if (followed && settings.enable_followed_topic_push_notifications) return decide("followed_topic_push_notify");
    if (!muted && (sub.notifications?.push_notifications ?? settings.enable_stream_push_notifications))
      return decide("stream_push_notify");
    return null;
  }
  if (followed && settings.enable_followed_topic_email_notifications) return decide("followed_topic_email_notify");
  return null;
}

/** Zulip's get_mentioned_user_group: of the mentioned groups the user is in, the one with the fewest members. */
function smallestMentionedGroup(state: StoreState, user: User, message: Message): number | null {
  let best: { id: number; size: number } | null = null;
  for (const groupId of message.mentionedGroupIds) {
    // The cached set: counting a 10,000-member group for each of its 10,000 mentioned members was O(n³).
    const members = state.groupMembers(groupId);
    if (!members.has(user.id)) continue;
    const size = members.size;
    if (best === null || size < best.size || (size === best.size && groupId < best.id)) best = { id: groupId, size };
  }
  return best?.id ?? null;
}
