/**
 * @module wire/attachment
 * Zulip's Attachment.to_dict: GET /attachments entries and `attachment` events.
 * Since feature level 472 the linking messages are a flat `message_ids` list.
 */
import type { Attachment } from "../engine/index.js";

export function attachmentToWire(attachment: Attachment): Record<string, unknown> {
  return {
    id: attachment.id,
    name: attachment.name,
    path_id: attachment.pathId,
    size: attachment.size,
    // Milliseconds, as Zulip sends it.
    create_time: attachment.createTime * 1000,
    message_ids: attachment.messageIds,
  };
}
