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
import { BoundedCache } from "../index/bounded-cache.js";

const OPEN = '<span class="highlight">';
const CLOSE = "</span>";

/**
 * A message's words as the indexer sees them: each word's term and its source range
 * in the HTML (character references mapped back, tags never inside). Computed once per
 * rendered content; a highlight is then a splice, with no HTML scan or tokenizing.
 */
export interface TokenForm {
  readonly terms: readonly string[];
  /** [from, to) source offsets of terms[i] at 2i, 2i + 1. */
  readonly ranges: Uint32Array;
}

export function tokenFormOf(html: string): TokenForm {
  const terms: string[] = [];
  const ranges: number[] = [];
  forEachTextRun(html, (start, end) => {
    const { text, offsets } = decodeEntitiesWithOffsets(html, start, end);
    forEachTerm(text, (term, wordStart, wordEnd) => {
      terms.push(term);
      ranges.push(
        start + (offsets === null ? wordStart : (offsets[wordStart] ?? wordStart)),
        start + (offsets === null ? wordEnd : (offsets[wordEnd] ?? wordEnd)),
      );
    });
  });
  return { terms, ranges: Uint32Array.from(ranges) };
}

/**
 * Token forms by rendered content (a pure function of it, so the cache is shared by
 * every store and never stale), least recently used first out.
 */
const TOKEN_FORMS = new BoundedCache<string, TokenForm>(32 * 1024 * 1024);

function cachedTokenForm(html: string): TokenForm {
  let form = TOKEN_FORMS.get(html);
  if (!form) {
    form = tokenFormOf(html);
    TOKEN_FORMS.set(html, form, 64 + 2 * html.length + 8 * form.ranges.length + 40 * form.terms.length);
  }
  return form;
}

/**
 * Highlights from a token form. Words of different text runs are never adjacent (a
 * tag lies between), so merging adjacent matches gives what a per-run scan gives.
 */
export function highlightTokens(html: string, form: TokenForm, terms: ReadonlySet<string>): string {
  const out: string[] = [];
  let copied = 0;
  let openEnd = -1;
  for (let i = 0; i < form.terms.length; i++) {
    if (!terms.has(form.terms[i]!)) continue;
    const from = form.ranges[2 * i]!;
    const to = form.ranges[2 * i + 1]!;
    if (from === openEnd) {
      out.push(html.slice(copied, to));
    } else {
      if (openEnd !== -1) out.push(CLOSE);
      out.push(html.slice(copied, from), OPEN, html.slice(from, to));
    }
    copied = to;
    openEnd = to;
  }
  if (openEnd === -1) return html;
  out.push(CLOSE, html.slice(copied));
  return out.join("");
}

/** Rendered message HTML with every word whose term is in `terms` highlighted. */
export function highlightHtml(html: string, terms: ReadonlySet<string>): string {
  if (terms.size === 0) return html;
  return highlightTokens(html, cachedTokenForm(html), terms);
}

/**
 * Everything a message's highlights need, for a cache keyed by message (the HTTP
 * layer's message JSON cache): the rendered content and escaped topic with their
 * token forms. With it a search result costs two splices, no record read and no
 * hashing of the content string.
 */
export interface MessageTokenForms {
  readonly html: string;
  readonly content: TokenForm;
  readonly topicHtml: string;
  readonly topic: TokenForm;
  /** Approximate bytes held, for the caller's budget. */
  readonly bytes: number;
}

export function messageTokenForms(renderedContent: string, topic: string): MessageTokenForms {
  const content = tokenFormOf(renderedContent);
  const topicHtml = escapeHtml(topic);
  const topicForm = tokenFormOf(topicHtml);
  const bytes =
    128 +
    2 * (renderedContent.length + topicHtml.length) +
    8 * (content.ranges.length + topicForm.ranges.length) +
    40 * (content.terms.length + topicForm.terms.length);
  return { html: renderedContent, content, topicHtml, topic: topicForm, bytes };
}

/** Zulip's match_content / match_subject from a message's token forms. */
export function highlightsFromForms(
  forms: MessageTokenForms,
  terms: ReadonlySet<string>,
): { matchContent: string; matchSubject: string } {
  if (terms.size === 0) return { matchContent: forms.html, matchSubject: forms.topicHtml };
  return {
    matchContent: highlightTokens(forms.html, forms.content, terms),
    matchSubject: highlightTokens(forms.topicHtml, forms.topic, terms),
  };
}

/**
 * The topic HTML-escaped (`& < > " '`) with matching words highlighted, as
 * Zulip's `match_subject`/`match_topic`.
 */
export function highlightTopic(topic: string, terms: ReadonlySet<string>): string {
  const escaped = escapeHtml(topic);
  if (terms.size === 0) return escaped;
  // Escaped text contains no "<": one text run, tokenized as message text is. Topics
  // are short and many, so their forms are not cached.
  return highlightTokens(escaped, tokenFormOf(escaped), terms);
}
