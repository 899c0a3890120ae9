/**
 * @module engine/search/query
 *
 * Interprets the operand of a `search:` narrow the way Zulip does. Every
 * word of the operand, quoted or not, becomes a term that a message must
 * contain (PostgreSQL's plainto_tsquery: AND of the stemmed, stop-word-free
 * words). Each double-quoted stretch is additionally required to occur
 * verbatim, ignoring case, in the message content or topic; Zulip uses this
 * as a stand-in for phrase search because stemmed terms lose word order.
 */

import { tokenize } from "./tokenize.js";

export interface SearchQuery {
  /**
   * Distinct terms every matching message must contain. Empty when the
   * operand has only stop words or punctuation; Zulip's empty tsquery then
   * matches no message at all, and callers should do the same.
   */
  readonly terms: string[];
  /** Lower-cased contents of each quoted phrase, to be found as substrings. */
  readonly phrases: string[];
}

// Zulip reads quoted phrases with the pattern `"[^"]+"|\S+`: a phrase may
// contain spaces but must start where a whitespace-separated chunk starts.
const CHUNK = /"[^"]+"|\S+/g;

/** Splits a `search:` operand into required terms and quoted phrases. */
export function parseSearchQuery(operand: string): SearchQuery {
  const phrases: string[] = [];
  CHUNK.lastIndex = 0;
  for (let m = CHUNK.exec(operand); m !== null; m = CHUNK.exec(operand)) {
    const chunk = m[0];
    if (chunk.length >= 2 && chunk.startsWith('"') && chunk.endsWith('"')) {
      const phrase = chunk.slice(1, -1).toLowerCase();
      // Zulip would turn `""` into a LIKE pattern matching everything, so
      // dropping empty phrases changes no result.
      if (phrase.length > 0) phrases.push(phrase);
    }
  }
  return { terms: tokenize(operand), phrases };
}

/**
 * Whether every phrase occurs, case-insensitively, in `contentText` or in
 * `topic`. Zulip checks its stored Markdown source, so passing the source
 * rather than rendered text reproduces its results most closely.
 */
export function matchesPhrases(topic: string, contentText: string, phrases: readonly string[]): boolean {
  if (phrases.length === 0) return true;
  const content = contentText.toLowerCase();
  const subject = topic.toLowerCase();
  return phrases.every((phrase) => content.includes(phrase) || subject.includes(phrase));
}
