/**
 * @module http/endpoints/messages
 * Message endpoints: send, fetch, fetch one, edit, edit history (and its deletion), delete, report,
 * flags by IDs and by narrow, mark topic read, submessages (widget events).
 */
import type { Endpoint } from "../../endpoint.js";
import deleteMessage from "./delete-message.js";
import deleteMessageHistory from "./delete-message-history.js";
import getMessage from "./get-message.js";
import getMessages from "./get-messages.js";
import markTopicAsRead from "./mark-topic-as-read.js";
import matchesNarrow from "./matches-narrow.js";
import { markAllAsRead, markStreamAsRead } from "./mark-as-read.js";
import messageHistory from "./message-history.js";
import readReceipts from "./read-receipts.js";
import reportMessage from "./report-message.js";
import renderMessage from "./render-message.js";
import { addReactionEndpoint, removeReactionEndpoint } from "./reactions.js";
import sendMessage from "./send-message.js";
import submessage from "./submessage.js";
import updateFlagsNarrow from "./update-flags-narrow.js";
import updateFlags from "./update-flags.js";
import updateMessage from "./update-message.js";

export const MESSAGE_ENDPOINTS: readonly Endpoint[] = [
  sendMessage,
  renderMessage,
  matchesNarrow,
  getMessages,
  getMessage,
  updateMessage,
  messageHistory,
  deleteMessageHistory,
  readReceipts,
  reportMessage,
  deleteMessage,
  updateFlags,
  updateFlagsNarrow,
  markTopicAsRead,
  markStreamAsRead,
  markAllAsRead,
  addReactionEndpoint,
  removeReactionEndpoint,
  submessage,
];
