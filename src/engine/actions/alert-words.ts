/**
 * @module actions/alert-words
 * Alert words (Zulip's zerver/views/alert_words.py, lib/alert_words.py): each user's
 * words, kept as typed and distinct case-insensitively; adding and removing answer the
 * whole list and send it in an alert_words event to the user. The realm's matcher
 * (index/entities/alert-words.ts) is rebuilt at the next send after a change; sends
 * and content edits set has_alert_word through alertedReceivers.
 */
import { userAudience } from "../events/audience.js";
import { BadRequestError } from "../errors.js";
import type { StoreState, WriteContext } from "../state.js";
import type { AlertWordsRecord, User } from "../types.js";

/** Zulip's AlertWord.word max_length. */
export const MAX_ALERT_WORD_LENGTH = 100;

/** Zulip's clean_alert_words: stripped, empty ones dropped. */
function cleaned(words: readonly string[]): string[] {
  words.forEach((word, i) => {
    // Zulip checks the length as given, before stripping, in code points.
    if ([...word].length > MAX_ALERT_WORD_LENGTH)
      throw new BadRequestError(`alert_words[${i}] is too long (limit: ${MAX_ALERT_WORD_LENGTH} characters)`);
  });
  return words.map((w) => w.trim()).filter((w) => w !== "");
}

function putRecord(state: StoreState, ctx: WriteContext, record: AlertWordsRecord): void {
  if (record.words.length === 0) state.tables.alertWords.removeSync(record.userId);
  else state.tables.alertWords.putSync(record.userId, record);
  ctx.afterCommit(() => state.indexAlertWords(record));
  ctx.emit({ type: "alert_words", userId: record.userId, words: record.words }, () => userAudience(record.userId));
}

/** GET /users/me/alert_words (Zulip's user_alert_words). */
export function alertWordsOf(state: StoreState, userId: number): readonly string[] {
  return state.alertWords.byUser.get(userId)?.words ?? [];
}

/** POST /users/me/alert_words: new words (case-insensitively) appended; the last spelling of a repeat wins. */
export function addAlertWords(state: StoreState, user: User, words: readonly string[]): readonly string[] {
  const current = alertWordsOf(state, user.id);
  const existing = new Set(current.map((w) => w.toLowerCase()));
  const added = new Map<string, string>();
  for (const word of cleaned(words)) if (!existing.has(word.toLowerCase())) added.set(word.toLowerCase(), word);
  if (added.size === 0) return current;
  const record: AlertWordsRecord = { userId: user.id, realmId: user.realmId, words: [...current, ...added.values()] };
  state.write((w) => putRecord(state, w, record));
  return record.words;
}

/** DELETE /users/me/alert_words: each word removed case-insensitively; unknown ones are ignored. */
export function removeAlertWords(state: StoreState, user: User, words: readonly string[]): readonly string[] {
  const current = alertWordsOf(state, user.id);
  const removed = new Set(words.map((w) => w.toLowerCase()));
  const kept = current.filter((w) => !removed.has(w.toLowerCase()));
  if (kept.length === current.length) return current;
  const record: AlertWordsRecord = { userId: user.id, realmId: user.realmId, words: kept };
  state.write((w) => putRecord(state, w, record));
  return record.words;
}

/**
 * The users among `receives` one of whose words the content holds: one pass over the
 * text with the realm's matcher, then a check of the few users it names.
 */
export function alertedReceivers(
  state: StoreState,
  realmId: number,
  content: string,
  receives: (userId: number) => boolean,
): number[] {
  const matcher = state.alertWords.matcher(realmId);
  if (matcher === null) return [];
  const out: number[] = [];
  for (const userId of matcher.usersAlerted(content)) {
    const user = state.users.get(userId);
    // Zulip's alert_words_in_realm reads active users only.
    if (user !== undefined && user.isActive && receives(userId)) out.push(userId);
  }
  return out;
}
