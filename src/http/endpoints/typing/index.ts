/**
 * @module http/endpoints/typing
 * Typing notifications: while composing, and while editing a message.
 */
import type { Endpoint } from "../../endpoint.js";
import setTypingStatus from "./set-typing-status.js";
import setTypingStatusForMessageEdit from "./set-typing-status-for-message-edit.js";

export const TYPING_ENDPOINTS: readonly Endpoint[] = [setTypingStatus, setTypingStatusForMessageEdit];
