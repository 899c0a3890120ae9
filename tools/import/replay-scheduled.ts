/**
 * @module import/replay-scheduled
 * Scheduled messages and reminders (zerver_scheduledmessage) in every state the export
 * has them: pending ones due at their time, failed ones with their failure_message,
 * delivered ones with the message they became (delivered_message, when that message was
 * carried), reminders (delivery_type 2) with their target message and note. Written
 * through the engine's import action as the sender, checked as a send now; before
 * archiving (a message scheduled to a channel archived later was made while it was
 * active) and deactivations.
 */
import { addressee, attempt, type SettingsReplay } from "./settings-replay.js";

/** Zulip's ScheduledMessage.REMIND. */
const REMIND = 2;

export function replayScheduledMessages(c: SettingsReplay, membersOfRecipient: Map<number, number[]>): void {
  for (const m of c.data.scheduledMessages) {
    const sender = c.users.get(m.sender);
    if (sender === undefined) continue;
    const example = `scheduled message ${m.id}`;
    const to = addressee(c, sender, m.recipient, membersOfRecipient);
    const isReminder = m.delivery_type === REMIND;
    const target =
      m.reminder_target_message_id === null || m.reminder_target_message_id === undefined
        ? undefined
        : c.messages.get(m.reminder_target_message_id);
    if (to === null || (isReminder && target === undefined)) {
      c.skip(
        to === null
          ? "scheduled message to a recipient that was not imported"
          : "reminder of a message that was not imported",
        example,
      );
      continue;
    }
    const delivered =
      m.delivered_message === null || m.delivered_message === undefined ? null : c.messages.get(m.delivered_message);
    const client =
      m.sending_client === null || m.sending_client === undefined ? undefined : c.data.clients.get(m.sending_client);
    attempt(c, isReminder ? "reminders" : "scheduled messages", example, () =>
      c.store.importScheduledMessage(sender, {
        to:
          to.type === "channel"
            ? { type: "channel", channelId: to.channelId, topic: m.subject ?? "" }
            : { type: "direct", userIds: to.userIds },
        content: c.rewriteContent(m.content),
        deliverAt: m.scheduled_timestamp,
        readBySender: m.read_by_sender === true,
        client: client ?? "internal",
        failed: m.failed === true,
        failureMessage: m.failure_message ?? null,
        delivered: m.delivered === true,
        deliveredMessageId: delivered ?? null,
        ...(isReminder && target !== undefined
          ? { reminder: { messageId: target, note: m.reminder_note ?? "", realmUrl: m.reminder_realm_url ?? "" } }
          : {}),
      }),
    );
  }
}
