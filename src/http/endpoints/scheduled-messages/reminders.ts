/**
 * @module http/endpoints/scheduled-messages/reminders
 * POST /reminders (https://zulip.com/api/create-message-reminder), GET /reminders
 * (https://zulip.com/api/get-reminders), DELETE /reminders/{reminder_id}
 * (https://zulip.com/api/delete-reminder). Reminders are scheduled messages that
 * Notification Bot delivers (the engine's actions/reminders); refusals in Zulip's order:
 * the time, then the message ("Invalid message(s)"), then the note's length.
 */
import { NotFoundError } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import type { SweepFixture } from "../../endpoint-testing.js";
import { p, ref } from "../../params.js";
import { realmUrl } from "../../realm-url.js";
import { reminderToWire } from "../../../wire/reminder.js";

const later = (fixture: SweepFixture) => fixture.later();

export const createReminderEndpoint = defineEndpoint({
  method: "POST",
  path: "/reminders",
  auth: "user",
  params: {
    message_id: ref(p.int(), "message"),
    scheduled_delivery_timestamp: p.int(),
    // Bounded after stripping, by the engine (Zulip's normalize_note_text), not here.
    note: p.str().optional(),
  },
  testing: { sweepBases: [{ params: { scheduled_delivery_timestamp: later } }] },
  handler(ctx, input) {
    const reminder = ctx.store.createReminder(ctx.user.id, {
      messageId: input.message_id,
      deliverAt: input.scheduled_delivery_timestamp,
      note: input.note ?? "",
      client: ctx.client,
      realmUrl: realmUrl(ctx.server, ctx.realm),
    });
    return { reminder_id: reminder.id };
  },
});

export const listRemindersEndpoint = defineEndpoint({
  method: "GET",
  path: "/reminders",
  auth: "user",
  params: {},
  handler(ctx) {
    return { reminders: ctx.store.reminders(ctx.user.id).map(reminderToWire) };
  },
});

export const deleteReminderEndpoint = defineEndpoint({
  method: "DELETE",
  path: "/reminders/:reminder_id",
  // A reminder is a scheduled message: others' (reminders or not) answer like one that does not exist.
  pathRefs: { reminder_id: "scheduledMessage" },
  auth: "user",
  params: {},
  handler(ctx) {
    const raw = ctx.pathParams["reminder_id"] ?? "";
    if (!/^\d{1,9}$/.test(raw)) throw new NotFoundError("Reminder does not exist");
    ctx.store.deleteReminder(ctx.user.id, Number(raw));
    return {};
  },
});
