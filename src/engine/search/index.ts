/**
 * @module engine/search
 *
 * Text processing for full-text `search:` narrows: the terms to index for
 * a message, the terms and quoted phrases a search operand requires, and
 * the highlighted `match_content` / `match_subject` for results. Pure
 * functions with no I/O; storage and narrow evaluation live elsewhere.
 */

export { forEachTerm, indexTerms, termForWord, tokenize, type TermVisitor } from "./tokenize.js";
export { STOP_WORDS, isStopWord } from "./stop-words.js";
export { matchesPhrases, parseSearchQuery, type SearchQuery } from "./query.js";
export {
  highlightHtml,
  highlightTopic,
  highlightsFromForms,
  messageTokenForms,
  type MessageTokenForms,
} from "./highlight.js";
export { escapeHtml, htmlToText } from "./html.js";
