/**
 * @module wire/scheduled-message
 * A scheduled message in Zulip's wire shape: GET /scheduled_messages, register's
 * scheduled_messages and the scheduled_messages events. `type` is "stream" or
 * "private" on the wire whatever spelling the client scheduled with.
 */
import type { Realm, ScheduledMessage } from "../engine/index.js";

export function scheduledMessageToWire(
  scheduled: ScheduledMessage,
  realm: Realm | undefined,
  emptyTopicName: boolean,
): Record<string, unknown> {
  const r = scheduled.recipient;
  const base = { scheduled_message_id: scheduled.id };
  const common = {
    content: scheduled.content,
    rendered_content: scheduled.renderedContent,
    scheduled_delivery_timestamp: scheduled.deliverAt,
    failed: scheduled.failed,
  };
  if (r.type === "direct") return { ...base, to: [...r.userIds], type: "private", ...common };
  const topic = r.topic === "" && !emptyTopicName ? (realm?.emptyTopicDisplayName ?? "") : r.topic;
  return { ...base, to: r.channelId, type: "stream", topic, ...common };
}
