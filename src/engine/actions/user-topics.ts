/**
 * @module actions/user-topics
 * Per-user topic visibility policies (POST /user_topics): 0 none, 1 muted,
 * 2 unmuted, 3 followed. Policies may be set for topics with no messages. Their
 * effects live where messages are read: is:muted, is:followed, in:home,
 * first_unread and the unread counts (narrow/plan.ts mutedSet): "unmuted" matters in
 * a muted channel, "muted" in an unmuted one, "followed" in both.
 *
 * Zulip's automatic policies apply on send (storeMessage calls autoPolicies inside the
 * message's write): a human sender's automatically_follow_topics_policy and
 * automatically_unmute_topics_in_muted_streams_policy (1 participation, 2 send,
 * 3 initiation, 4 never) may follow the topic or unmute it in a muted channel;
 * recipients mentioned by name with automatically_follow_topics_where_mentioned
 * follow it unless they muted or already follow it. Reacting counts as participation
 * (applyParticipationPolicy). A policy is never downgraded.
 */
import { canAccessChannelContent, isSubscribed } from "../access.js";
import { BadRequestError } from "../errors.js";
import { userAudience } from "../events/audience.js";
import { type StoreState, type WriteContext } from "../state.js";
import { type Channel, type User, type UserTopic, type VisibilityPolicy } from "../types.js";
import { foldTopic, key } from "../index/keys.js";
import { topicPolicyHolders } from "../index/topic-policy-holders.js";
import { exceedsCodePoints } from "../limits.js";
import { requireActiveUser } from "./users.js";

export const MAX_TOPIC_LENGTH = 60;

/** Zulip's UserProfile.AUTOMATICALLY_CHANGE_VISIBILITY_POLICY_* values. */
export const AUTO_POLICY = { ON_PARTICIPATION: 1, ON_SEND: 2, ON_INITIATION: 3, NEVER: 4 } as const;
const MUTED = 1;
const UNMUTED = 2;
const FOLLOWED = 3;

/**
 * The user's current policy for a topic (0 when none). A user the topic's holders do not
 * list has none, without a read: a send asks this of each user it may notify.
 */
export function topicPolicyOf(state: StoreState, userId: number, channelId: number, topic: string): number {
  if (!topicPolicyHolders(state.bitmaps, channelId, topic).has(userId)) return 0;
  return state.userTopics.policyOf(userId, channelId, topic);
}

/** The topic a policy request names: trimmed, the realm's empty-topic display name for "", checked. */
export function policyTopicName(state: StoreState, user: User, topic: string): string {
  if (topic.includes("\0")) throw new BadRequestError("Topic must not contain null bytes");
  const realm = state.realms.get(user.realmId);
  const name = topic.trim() === realm?.emptyTopicDisplayName ? "" : topic.trim();
  if (exceedsCodePoints(name, MAX_TOPIC_LENGTH))
    throw new BadRequestError(`topic is too long (limit: ${MAX_TOPIC_LENGTH} characters)`);
  return name;
}

export function setTopicPolicy(
  state: StoreState,
  userId: number,
  channelId: number,
  topic: string,
  policy: number,
): void {
  const user = requireActiveUser(state, userId);
  const channel = state.channels.get(channelId);
  // Zulip removes a policy in any channel of the realm (access may have been lost
  // since); setting one needs access to the channel's content.
  const allowed =
    channel !== undefined &&
    (policy === 0 ? channel.realmId === user.realmId : canAccessChannelContent(state, user, channel));
  if (![0, 1, 2, 3].includes(policy)) throw new BadRequestError("Invalid visibility_policy");
  if (!allowed) throw new BadRequestError("Invalid channel ID");
  const name = policyTopicName(state, user, topic);
  // Setting the current policy again (or removing none) changes nothing and tells no one.
  if (topicPolicyOf(state, user.id, channel.id, name) === policy) return;
  state.write((ctx) => writeTopicPolicy(state, ctx, user.id, channel.id, name, policy as VisibilityPolicy));
}

/**
 * Stores one policy inside an open write, with its event to the user. `legacyEvent`:
 * also the deprecated full muted_topics list (Zulip skips it where another change of
 * the same action sends it right after).
 */
export function writeTopicPolicy(
  state: StoreState,
  ctx: WriteContext,
  userId: number,
  channelId: number,
  topic: string,
  policy: VisibilityPolicy,
  legacyEvent = true,
): void {
  const record: UserTopic = { userId, channelId, topic, policy, lastUpdated: state.now() };
  const k: [number, number, string] = [userId, channelId, foldTopic(topic)];
  if (policy === 0) state.tables.userTopics.removeSync(k);
  else {
    state.tables.userTopics.putSync(k, record);
    state.bitmaps.add(key.topicPolicyHolders(channelId, topic), userId);
  }
  // Now, not after the commit: later reads in this write (a move's resolve notice asks
  // who follows the topic it just made the sender follow) must see it; a failed write
  // clears the whole cache (forgetUncommitted).
  state.userTopics.apply(record);
  // Zulip sends the deprecated full list first (queues that asked for user_topic skip it).
  if (legacyEvent) ctx.emit({ type: "muted_topics", userId }, () => userAudience(userId));
  ctx.emit({ type: "user_topic", userTopic: record }, () => userAudience(userId));
}

/**
 * Zulip's automatic policies for a channel message being stored in this write (call
 * before the message is indexed: "initiation" means no earlier message in the topic).
 * Returns the sender's new policy when it changed (POST /messages'
 * automatic_new_visibility_policy).
 */
export function applyAutomaticPolicies(
  state: StoreState,
  ctx: WriteContext,
  sender: User,
  channel: Channel,
  topic: string,
  mentionedUserIds: readonly number[],
): 2 | 3 | null {
  let senderPolicy: 2 | 3 | null = null;
  if (!sender.isBot && sender.realmId === channel.realmId) {
    const settings = state.settingsOf(sender.id);
    const follow = settings.automatically_follow_topics_policy;
    const unmute = settings.automatically_unmute_topics_in_muted_streams_policy;
    if (!(follow === AUTO_POLICY.NEVER && unmute === AUTO_POLICY.NEVER)) {
      const current = topicPolicyOf(state, sender.id, channel.id, topic);
      const channelMuted =
        state.subsByUser.get(sender.id)?.get(channel.id)?.isMuted === true &&
        isSubscribed(state, sender.id, channel.id);
      const initiates = state.bitmaps.isEmpty(key.channelTopic(channel.id, topic));
      const applies = (p: unknown) =>
        p === AUTO_POLICY.ON_SEND ||
        p === AUTO_POLICY.ON_PARTICIPATION ||
        (p === AUTO_POLICY.ON_INITIATION && initiates);
      let next: 2 | 3 | null = null;
      if (current !== FOLLOWED) {
        if (applies(follow)) next = FOLLOWED;
        else if (channelMuted && applies(unmute)) next = UNMUTED;
      }
      if (next !== null && next !== current) {
        writeTopicPolicy(state, ctx, sender.id, channel.id, topic, next);
        senderPolicy = next;
      }
    }
  }
  for (const userId of new Set(mentionedUserIds)) {
    if (userId === sender.id) continue;
    const user = state.users.get(userId);
    if (!user || !user.isActive || user.isBot || !isSubscribed(state, userId, channel.id)) continue;
    if (!state.settingsOf(userId).automatically_follow_topics_where_mentioned) continue;
    const current = topicPolicyOf(state, userId, channel.id, topic);
    if (current === MUTED || current === FOLLOWED) continue;
    writeTopicPolicy(state, ctx, userId, channel.id, topic, FOLLOWED);
  }
  return senderPolicy;
}

/**
 * Zulip's participation rule (do_add_reaction): reacting follows the topic for users
 * whose automatically_follow_topics_policy is "participation", or unmutes it in a muted
 * channel for those whose unmute policy is; never downgrades. Inside the reaction's write.
 */
export function applyParticipationPolicy(
  state: StoreState,
  ctx: WriteContext,
  user: User,
  channel: Channel,
  topic: string,
): void {
  if (user.isBot || user.realmId !== channel.realmId) return;
  const settings = state.settingsOf(user.id);
  const current = topicPolicyOf(state, user.id, channel.id, topic);
  if (current === FOLLOWED) return;
  const channelMuted =
    isSubscribed(state, user.id, channel.id) && state.subsByUser.get(user.id)?.get(channel.id)?.isMuted === true;
  let next: 2 | 3 | null = null;
  if (settings.automatically_follow_topics_policy === AUTO_POLICY.ON_PARTICIPATION) next = FOLLOWED;
  else if (
    channelMuted &&
    settings.automatically_unmute_topics_in_muted_streams_policy === AUTO_POLICY.ON_PARTICIPATION
  )
    next = UNMUTED;
  if (next !== null && next !== current) writeTopicPolicy(state, ctx, user.id, channel.id, topic, next);
}
