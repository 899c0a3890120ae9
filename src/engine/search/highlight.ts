/**
 * @module engine/search/highlight
 *
 * Produces the `match_content` and `match_subject` fields Zulip returns for
 * search results: the rendered message (or escaped topic) with each word
 * whose search term was asked for wrapped in `<span class="highlight">`.
 * Words are found with exactly the tokenizer used for indexing, so a word
 * is highlighted precisely when it is the reason the message matched.
 * Only text between tags is touched; tags, attribute values (link targets,
 * titles) and character references are copied unchanged, so the output is
 * always well-formed when the input is.
 */

import { decodeEntitiesWithOffsets, escapeHtml, forEachTextRun } from "./html.js";
import { forEachTerm } from "./tokenize.js";

const OPEN = '<span class="highlight">';
const CLOSE = "</span>";

/**
 * Appends `html.slice(start, end)` to `out`, highlighting matching words.
 * Ranges are computed in decoded text and mapped back to the source, so a
 * word containing a reference (`caf&eacute;`) is wrapped whole.
 */
function highlightRun(
  html: string,
  start: number,
  end: number,
  terms: ReadonlySet<string>,
  out: string[],
): void {
  const { text, offsets } = decodeEntitiesWithOffsets(html, start, end);
  let copied = start;
  let openEnd = -1; // source end of a highlight not yet closed
  forEachTerm(text, (term, wordStart, wordEnd) => {
    if (!terms.has(term)) return;
    const from = start + (offsets === null ? wordStart : (offsets[wordStart] ?? wordStart));
    const to = start + (offsets === null ? wordEnd : (offsets[wordEnd] ?? wordEnd));
    if (from === openEnd) {
      // Adjacent matches with nothing between them (common in unspaced
      // CJK text) read better as one highlight.
      out.push(html.slice(copied, to));
    } else {
      if (openEnd !== -1) out.push(CLOSE);
      out.push(html.slice(copied, from), OPEN, html.slice(from, to));
    }
    copied = to;
    openEnd = to;
  });
  if (openEnd !== -1) out.push(CLOSE);
  out.push(html.slice(copied, end));
}

/** Rendered message HTML with every word whose term is in `terms` highlighted. */
export function highlightHtml(html: string, terms: ReadonlySet<string>): string {
  if (terms.size === 0) return html;
  const out: string[] = [];
  let copied = 0;
  forEachTextRun(html, (start, end) => {
    out.push(html.slice(copied, start));
    highlightRun(html, start, end, terms, out);
    copied = end;
  });
  out.push(html.slice(copied));
  return out.join("");
}

/**
 * The topic HTML-escaped (`& < > " '`) with matching words highlighted, as
 * Zulip's `match_subject`/`match_topic`.
 */
export function highlightTopic(topic: string, terms: ReadonlySet<string>): string {
  const escaped = escapeHtml(topic);
  if (terms.size === 0) return escaped;
  const out: string[] = [];
  // Escaped text contains no "<", so it is a single text run.
  highlightRun(escaped, 0, escaped.length, terms, out);
  return out.join("");
}
