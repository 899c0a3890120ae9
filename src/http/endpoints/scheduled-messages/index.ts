/**
 * @module http/endpoints/scheduled-messages
 * Scheduled messages: create, edit, list, delete; reminders (scheduled messages Notification
 * Bot sends): create, list, delete. Delivery is src/scheduler's.
 */
import type { Endpoint } from "../../endpoint.js";
import createScheduledMessage from "./create-scheduled-message.js";
import editScheduledMessage from "./edit-scheduled-message.js";
import { deleteScheduledMessageEndpoint, listScheduledMessagesEndpoint } from "./list-delete.js";
import { createReminderEndpoint, deleteReminderEndpoint, listRemindersEndpoint } from "./reminders.js";

export const SCHEDULED_MESSAGE_ENDPOINTS: readonly Endpoint[] = [
  createScheduledMessage,
  editScheduledMessage,
  listScheduledMessagesEndpoint,
  deleteScheduledMessageEndpoint,
  createReminderEndpoint,
  listRemindersEndpoint,
  deleteReminderEndpoint,
];
