/**
 * @module actions/move-topic-policies
 * What a move does to users' topic policies (Zulip's do_update_message, its user_topic
 * part). When the move took the whole topic (change_all, or nothing the mover can see
 * is left behind), every policy on the old topic goes with it: merged with one the user
 * already had on the target topic when that topic had messages (the more visible wins:
 * followed, unmuted, none, muted), copied over otherwise; users who can no longer read
 * the messages just lose theirs. A partial move instead applies the sender's "on
 * initiation" automation when the moved message now starts the target topic.
 */
import { RoaringBitmap32, type ReadonlyBitmap } from "../index/bitmap-store.js";
import { foldTopic, key } from "../index/keys.js";
import { topicPolicyHolders } from "../index/topic-policy-holders.js";
import type { StoreState } from "../state.js";
import type { Channel, Message, VisibilityPolicy } from "../types.js";
import type { WriteContext } from "../write-coordinator.js";
import { AUTO_POLICY, writeTopicPolicy } from "./user-topics.js";

const NONE = 0;
const MUTED = 1;
const UNMUTED = 2;
const FOLLOWED = 3;

/** Every user with a policy on the topic, by user (asking only the topic's policy holders). */
export function topicPolicies(state: StoreState, channel: Channel, topic: string): Map<number, VisibilityPolicy> {
  const out = new Map<number, VisibilityPolicy>();
  const folded = foldTopic(topic);
  for (const userId of topicPolicyHolders(state.bitmaps, channel.id, topic)) {
    const policy = state.userTopics.policyOfFolded(userId, channel.id, folded);
    if (policy !== NONE) out.set(userId, policy as VisibilityPolicy);
  }
  return out;
}

/** Zulip's get_visibility_policy_after_merge: the more visible policy wins. */
function merged(orig: number, target: number): VisibilityPolicy {
  const both = new Set([orig, target]);
  if (both.has(FOLLOWED)) return FOLLOWED;
  if (both.has(UNMUTED)) return UNMUTED;
  if (both.has(NONE)) return NONE;
  return MUTED;
}

export interface TopicMove {
  readonly from: Channel;
  readonly fromTopic: string;
  readonly to: Channel;
  readonly toTopic: string;
  /** Whether the target topic had messages before the move. */
  readonly targetHadMessages: boolean;
  /** Users who can no longer read the messages (channel moves only). */
  readonly losingAccess: ReadonlySet<number>;
}

/**
 * Moves the policies of the old topic to the new one (whole-topic moves). `before`
 * is topicPolicies of the old topic. A rename that only changes letter case keeps
 * every policy where it is: both names are one topic, whose policy Zulip would reset.
 */
export function migrateTopicPolicies(
  state: StoreState,
  ctx: WriteContext,
  move: TopicMove,
  before: ReadonlyMap<number, VisibilityPolicy>,
): void {
  const { from, to } = move;
  if (from.id === to.id && foldTopic(move.fromTopic) === foldTopic(move.toTopic)) return;
  const target = topicPolicies(state, to, move.toTopic);
  const users = new Set([...before.keys(), ...target.keys()]);
  for (const userId of [...users].sort((a, b) => a - b)) {
    const orig = before.get(userId) ?? NONE;
    const current = target.get(userId) ?? NONE;
    if (move.losingAccess.has(userId)) {
      // No policy in a channel the user cannot read (Zulip removes it).
      if (orig !== NONE) writeTopicPolicy(state, ctx, userId, from.id, move.fromTopic, NONE);
      continue;
    }
    if (orig !== NONE) writeTopicPolicy(state, ctx, userId, from.id, move.fromTopic, NONE, false);
    const next = move.targetHadMessages ? merged(orig, current) : (orig as VisibilityPolicy);
    if (next !== current) writeTopicPolicy(state, ctx, userId, to.id, move.toTopic, next);
  }
}

/**
 * Zulip's apply_automatic_unmute_follow_topics_policy for a partial move: the sender
 * of `target` (a human who can still read it) follows the target topic, or unmutes it
 * in a muted channel, when their automation is "on initiation" and `target` is now
 * the oldest message of that topic they can see. `earlier` holds the other messages of
 * the target topic the sender can see.
 */
export function applyInitiationPolicy(
  state: StoreState,
  ctx: WriteContext,
  target: Message,
  to: Channel,
  toTopic: string,
  earlier: ReadonlyBitmap,
  losingAccess: ReadonlySet<number>,
): void {
  const sender = state.users.get(target.senderId);
  if (!sender || sender.isBot || losingAccess.has(sender.id)) return;
  if (!earlier.isEmpty && earlier.minimum() < target.id) return;
  const settings = state.settingsOf(sender.id);
  const current = state.userTopics.policyOf(sender.id, to.id, toTopic);
  let next: VisibilityPolicy | null = null;
  if (settings.automatically_follow_topics_policy === AUTO_POLICY.ON_INITIATION) next = FOLLOWED;
  else if (settings.automatically_unmute_topics_in_muted_streams_policy === AUTO_POLICY.ON_INITIATION) {
    const sub = state.subsByUser.get(sender.id)?.get(to.id);
    if (sub?.active === true && sub.isMuted) next = UNMUTED;
  }
  if (next !== null && next !== current) writeTopicPolicy(state, ctx, sender.id, to.id, toTopic, next);
}

/** The topic's messages other than `moved` (after the move: those that were there before). */
export function otherMessagesOfTopic(
  state: StoreState,
  channelId: number,
  topic: string,
  moved: ReadonlyBitmap,
): ReadonlyBitmap {
  return RoaringBitmap32.andNot(state.bitmaps.get(key.channelTopic(channelId, topic)), moved);
}
