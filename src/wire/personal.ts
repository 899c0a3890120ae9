/**
 * @module wire/personal
 * Wire shapes of a user's own drafts and saved snippets (Zulip's Draft.to_dict and
 * SavedSnippet.to_api_dict).
 */
import type { Draft, SavedSnippet } from "../engine/index.js";

export function draftToWire(draft: Draft): Record<string, unknown> {
  // Zulip sends whole seconds: int(last_edit_time.timestamp()).
  return {
    id: draft.id,
    type: draft.type,
    to: [...draft.to],
    topic: draft.topic,
    content: draft.content,
    timestamp: Math.trunc(draft.lastEditTime),
  };
}

export function savedSnippetToWire(snippet: SavedSnippet): Record<string, unknown> {
  return { id: snippet.id, title: snippet.title, content: snippet.content, date_created: snippet.dateCreated };
}
