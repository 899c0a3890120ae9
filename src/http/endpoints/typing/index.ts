/**
 * @module http/endpoints/typing
 * Typing notifications.
 */
import type { Endpoint } from "../../endpoint.js";
import setTypingStatus from "./set-typing-status.js";

export const TYPING_ENDPOINTS: readonly Endpoint[] = [setTypingStatus];
