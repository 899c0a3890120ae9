/**
 * @module http/endpoints/scheduled-messages
 * Scheduled messages: create, edit, list, delete. Delivery is src/scheduler's.
 */
import type { Endpoint } from "../../endpoint.js";
import createScheduledMessage from "./create-scheduled-message.js";
import editScheduledMessage from "./edit-scheduled-message.js";
import { deleteScheduledMessageEndpoint, listScheduledMessagesEndpoint } from "./list-delete.js";

export const SCHEDULED_MESSAGE_ENDPOINTS: readonly Endpoint[] = [
  createScheduledMessage,
  editScheduledMessage,
  listScheduledMessagesEndpoint,
  deleteScheduledMessageEndpoint,
];
