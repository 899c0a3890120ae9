/**
 * @module markdown/raw-html
 * Token types for HTML this renderer builds itself (mentions, channel links, emoji,
 * image previews, spoiler frames). The source's own HTML never reaches these tokens:
 * every piece of user text inside them is escaped where the token is built.
 */
import type { MarkdownIt, StateInline, Token } from "markdown-it";

export const INLINE_HTML = "zulip_html_inline";
export const BLOCK_HTML = "zulip_html_block";

/** Emits `html` (already safe) at the current inline position. */
export function pushInlineHtml(state: StateInline, html: string): void {
  const token = state.push(INLINE_HTML, "", 0);
  token.content = html;
}

/** A block-level token carrying `html` (already safe). */
export function blockHtmlToken(TokenClass: typeof Token, html: string): Token {
  const token = new TokenClass(BLOCK_HTML, "", 0);
  token.block = true;
  token.content = html;
  return token;
}

export function installRawHtmlRenderers(md: MarkdownIt): void {
  const passThrough = (tokens: Token[], idx: number): string => tokens[idx]?.content ?? "";
  md.renderer.rules[INLINE_HTML] = passThrough;
  md.renderer.rules[BLOCK_HTML] = passThrough;
}
