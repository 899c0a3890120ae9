/**
 * @module engine/search/tokenize
 *
 * Turns text into full-text search terms, standing in for the PostgreSQL
 * text-search configuration Zulip uses (english parser, hunspell +
 * english_stem dictionaries, Zulip's stop words). The same function
 * produces the terms stored in the index when a message is sent and the
 * terms a `search:` operand must match, so index and query can never
 * disagree about what a word is.
 *
 * Pipeline per word: Unicode word segmentation (UAX #29 via
 * Intl.Segmenter, which also splits unspaced CJK text into dictionary
 * words; see ./segment.ts for its ASCII fast path), a further split at apostrophes, underscores and colons (where
 * PostgreSQL's parser splits but UAX #29 does not), NFKC normalisation,
 * lower-casing, stop-word removal, then Porter stemming for words written
 * only in Latin script. Words in other scripts keep their folded form.
 */

import { stemmer } from "stemmer";
import { decodeEntities, forEachTextRun } from "./html.js";
import { forEachWord } from "./segment.js";
import { isStopWord } from "./stop-words.js";

/**
 * Receives one term and the half-open UTF-16 range `[start, end)` of the
 * text it came from. Several terms never share a range.
 */
export type TermVisitor = (term: string, start: number, end: number) => void;

// UAX #29 keeps these inside a word ("don't", "snake_case", "a:b"), while
// PostgreSQL treats them as separators; splitting here lets "Hogwart"
// find "Hogwart's" as it does on Zulip. Fullwidth forms are included
// because splitting happens before NFKC folds them.
const INNER_SEPARATORS = /['\u2019\uff07_\uff3f:\uff1a]/;
const INNER_PART = /[^'\u2019\uff07_\uff3f:\uff1a]+/g;

// Stemming applies to words whose letters are all Latin: the Porter rules
// are English suffix rules and would mangle other scripts. Digits and
// in-word dots (hosts, version numbers) do not disqualify a word.
const LATIN_WORD = /^[\p{Script=Latin}\p{M}\p{Nd}.]+$/u;
const ASCII_WORD = /^[a-z0-9.]+$/;

// Chat vocabulary is heavily skewed, so remembering recent stems saves most
// of the stemmer's regex work. Clearing on overflow bounds memory without
// the bookkeeping of a true LRU.
const STEM_CACHE_LIMIT = 20_000;
const stemCache = new Map<string, string>();

function stem(word: string): string {
  let result = stemCache.get(word);
  if (result === undefined) {
    result = stemmer(word);
    if (stemCache.size >= STEM_CACHE_LIMIT) stemCache.clear();
    stemCache.set(word, result);
  }
  return result;
}

/**
 * The search term for one separator-free piece of a word, or undefined if
 * it is a stop word.
 */
export function termForWord(word: string): string | undefined {
  let folded = word.toLowerCase();
  // NFKC leaves ASCII alone, and most words are ASCII, so only pay for
  // normalisation (and the Unicode script test) when it can matter.
  const ascii = ASCII_WORD.test(folded);
  if (!ascii) folded = word.normalize("NFKC").toLowerCase();
  if (folded.length === 0 || isStopWord(folded)) return undefined;
  if (ascii || LATIN_WORD.test(folded)) return stem(folded);
  return folded;
}

/**
 * Calls `visit` for every term in `text`, in order, with the range of the
 * source text it came from (used to place highlights).
 */
export function forEachTerm(text: string, visit: TermVisitor): void {
  forEachWord(text, (start, end) => {
    // "https://" is a protocol token to PostgreSQL and is not indexed, so a
    // URL contributes only its host and path words, as on Zulip.
    if (text.startsWith("://", end)) return;
    const word = text.slice(start, end);
    if (!INNER_SEPARATORS.test(word)) {
      const term = termForWord(word);
      if (term !== undefined) visit(term, start, end);
      return;
    }
    INNER_PART.lastIndex = 0;
    for (let m = INNER_PART.exec(word); m !== null; m = INNER_PART.exec(word)) {
      const term = termForWord(m[0]);
      if (term !== undefined) visit(term, start + m.index, start + m.index + m[0].length);
    }
  });
}

/**
 * The distinct search terms of plain `text`, in order of first appearance.
 * Duplicates are removed: the index records only which messages contain a
 * term, and AND-matching a query needs each term once.
 */
export function tokenize(text: string): string[] {
  const terms = new Set<string>();
  forEachTerm(text, (term) => {
    terms.add(term);
  });
  return [...terms];
}

/**
 * The distinct terms to index for a message: its topic plus the text of
 * its rendered HTML (tags dropped, character references decoded, nothing
 * else skipped, so code blocks, link text and mention names all count).
 * Attribute values such as link targets are not text and are not indexed.
 */
export function indexTerms(topic: string, html: string): string[] {
  const terms = new Set<string>();
  const add = (term: string): void => {
    terms.add(term);
  };
  forEachTerm(topic, add);
  // Each text run is tokenised separately so that a tag always separates
  // words, exactly as highlighting will see them.
  forEachTextRun(html, (start, end) => {
    forEachTerm(decodeEntities(html.slice(start, end)), add);
  });
  return [...terms];
}
