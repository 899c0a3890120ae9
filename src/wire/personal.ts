/**
 * @module wire/personal
 * Wire shapes of a user's own drafts, saved snippets and navigation views (Zulip's Draft.to_dict,
 * SavedSnippet.to_api_dict and NavigationView.to_api_dict).
 */
import type { Draft, NavigationView, SavedSnippet } from "../engine/index.js";

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

export function navigationViewToWire(view: NavigationView): Record<string, unknown> {
  return { fragment: view.fragment, is_pinned: view.isPinned, name: view.name };
}
