/**
 * @module actions/render-preview
 * POST /messages/render (compose preview): the content rendered as a send would render it, with the sender's realm
 * lookups (mentions, channel links, custom emoji, upload previews), storing nothing.
 */
import type { StoreState } from "../state.js";
import type { User } from "../types.js";
import { normalizeContent } from "./send-message.js";
import { renderContextFor } from "./render-context.js";

export function renderPreview(state: StoreState, sender: User, content: string): string {
  // Zulip renders an empty draft to nothing rather than refusing it as a send would.
  if (content.trim() === "") return "";
  // Cut like a send, so a preview costs what a send does and shows what the send would store.
  return state.renderer(normalizeContent(content), renderContextFor(state, sender)).html;
}
