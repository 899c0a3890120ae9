/**
 * @module actions/user-topics
 * Per-user topic visibility policies (POST /user_topics): 0 none, 1 muted,
 * 2 unmuted, 3 followed. Policies may be set for topics with no messages.
 */
import { BadRequestError } from "../errors.js";
import { type StoreState } from "../state.js";
import type { UserTopic, VisibilityPolicy } from "../types.js";
import { foldTopic } from "../index/keys.js";
import { exceedsCodePoints } from "../limits.js";
import { getVisibleChannel } from "./channels.js";
import { requireActiveUser } from "./users.js";
import { userAudience } from "../events/audience.js";

export const MAX_TOPIC_LENGTH = 60;

export function setTopicPolicy(state: StoreState, userId: number, channelId: number, topic: string, policy: number): void {
  const user = requireActiveUser(state, userId);
  const channel = getVisibleChannel(state, user, channelId);
  if (![0, 1, 2, 3].includes(policy)) throw new BadRequestError("Invalid visibility_policy");
  if (topic.includes("\0")) throw new BadRequestError("Topic must not contain null bytes");
  const realm = state.realms.get(user.realmId);
  const name = topic.trim() === realm?.emptyTopicDisplayName ? "" : topic.trim();
  if (exceedsCodePoints(name, MAX_TOPIC_LENGTH)) throw new BadRequestError(`topic is too long (limit: ${MAX_TOPIC_LENGTH} characters)`);
  const record: UserTopic = { userId, channelId: channel.id, topic: name, policy: policy as VisibilityPolicy, lastUpdated: state.now() };
  state.write((ctx) => {
    const k: [number, number, string] = [userId, channel.id, foldTopic(name)];
    if (policy === 0) state.tables.userTopics.removeSync(k);
    else state.tables.userTopics.putSync(k, record);
    ctx.afterCommit(() => state.indexUserTopic(record));
    ctx.emit({ type: "user_topic", userTopic: record }, () => userAudience(userId));
  });
}
