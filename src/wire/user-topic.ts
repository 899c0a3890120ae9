/**
 * @module wire/user-topic
 * A user's topic visibility policy in Zulip's shape (register's user_topics, user_topic events).
 */
import type { UserTopic } from "../engine/index.js";

/** One topic policy on the wire (also the user_topic event's fields). */
export function userTopicToWire(t: UserTopic): Record<string, unknown> {
  return { stream_id: t.channelId, topic_name: t.topic, last_updated: t.lastUpdated, visibility_policy: t.policy };
}
