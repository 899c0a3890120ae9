/**
 * @module markdown/syntax
 * Small ways Zulip's Markdown differs from CommonMark as markdown-it implements it:
 * underscores never emphasise (`_foo_` and `__foo__` stay literal, since they are
 * common in identifiers), strikethrough is <del>, and text is escaped the way
 * Zulip's server escapes it.
 */
import type { MarkdownIt, StateInline, Token } from "markdown-it";
import { escapeText } from "./escape.js";

/** Inline rule placed before "emphasis": swallows runs of `_` as plain text. */
export function literalUnderscoreRule(state: StateInline, silent: boolean): boolean {
  const start = state.pos;
  if (state.src.charCodeAt(start) !== 0x5f /* _ */) return false;
  let end = start;
  while (end < state.posMax && state.src.charCodeAt(end) === 0x5f) end++;
  if (!silent) state.pending += state.src.slice(start, end);
  state.pos = end;
  return true;
}

export function installZulipRenderers(md: MarkdownIt): void {
  const rules = md.renderer.rules;
  rules.s_open = () => "<del>";
  rules.s_close = () => "</del>";
  rules.text = (tokens: Token[], idx: number) => escapeText(tokens[idx]?.content ?? "");
  rules.code_inline = (tokens: Token[], idx: number) => `<code>${escapeText(tokens[idx]?.content ?? "")}</code>`;
}
