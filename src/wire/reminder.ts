/**
 * @module wire/reminder
 * A reminder in Zulip's wire shape (its to_reminder_dict): GET /reminders, register's
 * reminders and the reminders add event. Always a direct message to oneself.
 */
import type { ScheduledMessage } from "../engine/index.js";

export function reminderToWire(reminder: ScheduledMessage): Record<string, unknown> {
  return {
    reminder_id: reminder.id,
    type: "private",
    to: [reminder.senderId],
    content: reminder.content,
    rendered_content: reminder.renderedContent,
    scheduled_delivery_timestamp: reminder.deliverAt,
    failed: reminder.failed,
    reminder_target_message_id: reminder.reminder?.messageId ?? 0,
  };
}
