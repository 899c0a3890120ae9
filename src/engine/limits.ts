/**
 * @module limits
 * Caps on the work one call may ask of the engine, beyond Zulip's own limits
 * (message and topic lengths, 5000 messages per fetch or flag update). Zulip leaves
 * these unbounded and leans on PostgreSQL and its request timeouts; here one request
 * runs on the event loop that serves every other client, so its size is bounded
 * before any work is done. Each cap is far above what a Zulip client sends.
 */

/** Terms in one narrow (the web app builds a handful; search words are one term). */
export const MAX_NARROW_TERMS = 100;
/** Characters in one string narrow operand (a search query, a topic, a name, emails). */
export const MAX_OPERAND_LENGTH = 2000;
/** Characters of all string operands of a narrow together (search operands are joined into one query). */
export const MAX_NARROW_CHARS = 10_000;
/** Elements of a list operand (user IDs of a dm term). */
export const MAX_OPERAND_ITEMS = 1000;
/** Message IDs in one POST /messages/flags (Zulip's flags/narrow window is 5000). */
export const MAX_FLAG_MESSAGE_IDS = 5000;
/** Recipients of one direct message. */
export const MAX_DIRECT_RECIPIENTS = 1000;
/**
 * Longest input string worth looking up by name (channel names, emails, topics): a
 * few times any stored value, so that surrounding whitespace still matches, while a
 * megabyte of text is not folded character by character only to find nothing.
 */
export const MAX_LOOKUP_LENGTH = 1000;

/**
 * Whether `text` has more than `max` code points, without building an array of them:
 * UTF-16 length bounds the count from above and half of it from below.
 */
export function exceedsCodePoints(text: string, max: number): boolean {
  if (text.length <= max) return false;
  if (text.length > 2 * max) return true;
  let count = 0;
  for (const _ of text) if (++count > max) return true;
  return false;
}

/** The first `max` code points of `text` (the whole string if it is no longer). */
export function codePointPrefix(text: string, max: number): string {
  if (text.length <= max) return text;
  let count = 0;
  let end = 0;
  for (const ch of text) {
    if (count === max) return text.slice(0, end);
    count++;
    end += ch.length;
  }
  return text;
}
