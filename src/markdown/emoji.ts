/**
 * @module markdown/emoji
 * `:name:` emoji codes, by Zulip's own emoji names (not Slack's or GitHub's), so e.g.
 * `:smile:` is U+1F642 as in Zulip. The names are the full generated table
 * (src/emoji/unicode.ts); a name it does not know stays literal text, which is also
 * what Zulip does.
 */
import type { StateInline } from "markdown-it";
import { escapeAttr, escapeText } from "./escape.js";
import { pushInlineHtml } from "./raw-html.js";
import { isUnicodeEmojiCode, unicodeEmojiCode } from "../emoji/unicode.js";

/** Whether the table has a name for this code point (Zulip's codepoint_to_name). */
export function isEmojiCodepoint(code: string): boolean {
  return isUnicodeEmojiCode(code);
}

/** The code point for a Zulip emoji name, if the table knows it. */
export function emojiCodepoint(name: string): string | undefined {
  return unicodeEmojiCode(name);
}

/** Zulip's emoji span: the code stays as text so copy/paste round-trips. */
export function emojiHtml(name: string, codepoint: string): string {
  const label = escapeAttr(name.replaceAll("_", " "));
  return `<span aria-label="${label}" class="emoji emoji-${escapeAttr(codepoint)}" role="img" title="${label}">:${escapeText(name)}:</span>`;
}

/** Zulip's EMOJI_REGEX, bounded so each attempt is O(1). */
const EMOJI_RE = /:([\w\-+]{1,100}):/y;

/** markdown-it inline rule for `:name:`. */
export function emojiRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x3a /* : */) return false;
  EMOJI_RE.lastIndex = state.pos;
  const match = EMOJI_RE.exec(state.src);
  if (!match || state.pos + match[0].length > state.posMax) return false;
  const name = match[1] ?? "";
  const codepoint = emojiCodepoint(name);
  if (codepoint === undefined) return false;
  if (!silent) pushInlineHtml(state, emojiHtml(name, codepoint));
  state.pos += match[0].length;
  return true;
}
