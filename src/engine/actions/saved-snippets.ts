/**
 * @module actions/saved-snippets
 * Saved snippets (Zulip's zerver/actions/saved_snippets.py): a title of 1 to 60
 * characters and Markdown content of 1 to MAX_MESSAGE_LENGTH, both stripped of
 * surrounding whitespace first. Only their owner sees or changes them; another user's
 * snippet answers exactly like one that does not exist.
 */
import { userAudience } from "../events/audience.js";
import { BadRequestError, NotFoundError } from "../errors.js";
import { exceedsCodePoints } from "../limits.js";
import type { StoreState } from "../state.js";
import type { SavedSnippet, User } from "../types.js";
import { MAX_MESSAGE_LENGTH } from "./send-message.js";
import { requireActiveUser } from "./users.js";

/** Zulip's SavedSnippet.MAX_TITLE_LENGTH. */
export const MAX_SNIPPET_TITLE_LENGTH = 60;
export const SNIPPET_DOES_NOT_EXIST = "Saved snippet does not exist.";

/** Zulip's StringConstraints(min_length=1, max_length, strip_whitespace=True), with its texts. */
function checkText(name: "title" | "content", raw: string, max: number): string {
  const text = raw.trim();
  if (text.length === 0) throw new BadRequestError(`${name} cannot be blank`);
  if (exceedsCodePoints(text, max)) throw new BadRequestError(`${name} is too long (limit: ${max} characters)`);
  return text;
}

/** POST /saved_snippets. */
export function createSavedSnippet(state: StoreState, userId: number, title: string, content: string): SavedSnippet {
  const user = requireActiveUser(state, userId);
  const checkedTitle = checkText("title", title, MAX_SNIPPET_TITLE_LENGTH);
  const checkedContent = checkText("content", content, MAX_MESSAGE_LENGTH);
  return state.write((ctx) => {
    const snippet: SavedSnippet = {
      id: state.allocate("nextSavedSnippetId"),
      userId: user.id,
      title: checkedTitle,
      content: checkedContent,
      dateCreated: state.now(),
    };
    state.tables.savedSnippets.putSync(snippet.id, snippet);
    ctx.afterCommit(() => state.indexSavedSnippet(snippet));
    ctx.emit({ type: "saved_snippets", op: "add", snippet }, () => userAudience(user.id));
    return snippet;
  });
}

function requireOwnSnippet(state: StoreState, user: User, id: number): SavedSnippet {
  const snippet = state.snippetsByUser.get(user.id)?.get(id);
  if (!snippet) throw new NotFoundError(SNIPPET_DOES_NOT_EXIST);
  return snippet;
}

/** PATCH /saved_snippets/{id}: nothing to change is a success without an event, as in Zulip. */
export function editSavedSnippet(
  state: StoreState,
  userId: number,
  id: number,
  changes: { readonly title?: string; readonly content?: string },
): void {
  const user = requireActiveUser(state, userId);
  if (changes.title === undefined && changes.content === undefined) return;
  const title = changes.title === undefined ? undefined : checkText("title", changes.title, MAX_SNIPPET_TITLE_LENGTH);
  const content = changes.content === undefined ? undefined : checkText("content", changes.content, MAX_MESSAGE_LENGTH);
  const current = requireOwnSnippet(state, user, id);
  const next: SavedSnippet = { ...current, title: title ?? current.title, content: content ?? current.content };
  state.write((ctx) => {
    state.tables.savedSnippets.putSync(next.id, next);
    ctx.afterCommit(() => state.indexSavedSnippet(next));
    ctx.emit({ type: "saved_snippets", op: "update", snippet: next }, () => userAudience(user.id));
  });
}

/** DELETE /saved_snippets/{id}. */
export function deleteSavedSnippet(state: StoreState, userId: number, id: number): void {
  const user = requireActiveUser(state, userId);
  const current = requireOwnSnippet(state, user, id);
  state.write((ctx) => {
    state.tables.savedSnippets.removeSync(current.id);
    ctx.afterCommit(() => state.unindexSavedSnippet(user.id, current.id));
    ctx.emit({ type: "saved_snippets", op: "remove", userId: user.id, snippetId: current.id }, () =>
      userAudience(user.id),
    );
  });
}

/** GET /saved_snippets and register's `saved_snippets`: the user's own, oldest first. */
export function listSavedSnippets(state: StoreState, userId: number): SavedSnippet[] {
  return [...(state.snippetsByUser.get(userId)?.values() ?? [])].sort((a, b) => a.id - b.id);
}
