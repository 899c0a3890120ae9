/**
 * @module markdown/emoji
 * Emoji in messages, as Zulip renders them:
 * - `:name:` by Zulip's own emoji names (not Slack's or GitHub's): the realm's
 *   active custom emoji of that name first (an <img>), then Zulip's extra emoji
 *   `zulip`, then the unicode table (src/emoji/unicode.ts); a name none of them
 *   knows stays literal text, which is also what Zulip does.
 * - a unicode emoji typed as itself (🙂) becomes the same span as its canonical
 *   `:name:`, unless it is a lone character whose default presentation is text
 *   (↔, ©, a digit), as in Zulip's UnicodeEmoji pattern.
 */
import type { StateCore, StateInline, Token } from "markdown-it";
import { escapeAttr, escapeText } from "./escape.js";
import { INLINE_HTML, pushInlineHtml } from "./raw-html.js";
import { renderStateOf } from "./render-state.js";
import { canonicalEmojiName, isUnicodeEmojiCode, unicodeEmojiCode } from "../emoji/unicode.js";

/** Where Zulip serves its extra emoji's image (not a staticfiles URL, so exports stay portable). */
export const ZULIP_EMOJI_URL = "/static/generated/emoji/images/emoji/unicode/zulip.png";

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

/** Zulip's make_realm_emoji: an image (custom emoji and `zulip`). */
export function imageEmojiHtml(name: string, src: string): string {
  return `<img alt=":${escapeAttr(name)}:" class="emoji" src="${escapeAttr(src)}" title="${escapeAttr(name.replaceAll("_", " "))}">`;
}

/** Zulip's EMOJI_REGEX (`\w` is Unicode-aware in Python), bounded so each attempt is O(1). */
const EMOJI_RE = /:([\p{L}\p{N}_\-+]{1,100}):/uy;

/** markdown-it inline rule for `:name:`. */
export function emojiRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x3a /* : */) return false;
  EMOJI_RE.lastIndex = state.pos;
  const match = EMOJI_RE.exec(state.src);
  if (!match || state.pos + match[0].length > state.posMax) return false;
  const name = match[1] ?? "";
  const renderState = renderStateOf(state.env);
  const realmUrl = renderState.context.findRealmEmoji?.(name);
  // Realm emoji are this server's files today; one hosted elsewhere would go through the proxy.
  const realmSrc = realmUrl === undefined ? null : renderState.imageSrc(realmUrl);
  let html: string;
  if (realmSrc !== null) html = imageEmojiHtml(name, realmSrc);
  else if (name === "zulip") html = imageEmojiHtml(name, ZULIP_EMOJI_URL);
  else {
    const codepoint = emojiCodepoint(name);
    if (codepoint === undefined) return false;
    html = emojiHtml(name, codepoint);
  }
  if (!silent) pushInlineHtml(state, html);
  state.pos += match[0].length;
  return true;
}

const TAG = "[\\u{E0020}-\\u{E007E}]+\\u{E007F}";
const ONE = `(?:\\p{RI}\\p{RI}|\\p{Emoji}(?:\\p{EMod}|\\uFE0F\\u20E3?|${TAG})?)`;
/** Zulip's POSSIBLE_EMOJI_RE (UTS #51's emoji sequence). */
const POSSIBLE_EMOJI_RE = new RegExp(`${ONE}(?:\\u200D${ONE})*`, "gu");
/** Zulip's TEXT_PRESENTATION_RE, matched against the whole candidate. */
const TEXT_PRESENTATION_RE = /^\P{Emoji_Presentation}\u20E3?$/u;
/** Cheap pre-check: every emoji has a character outside ASCII, or is a keycap digit/#/* (text presentation). */
const HAS_NON_ASCII = /[^\x00-\x7f]/;

function unicodeEmojiCodeOf(text: string): string {
  return [...text.replaceAll("\uFE0F", "")].map((c) => (c.codePointAt(0) ?? 0).toString(16).padStart(4, "0")).join("-");
}

/** Splits one text token's content into text and emoji spans, or null when it has none. */
function splitEmoji(content: string): { text: string; html: string | null }[] | null {
  if (!HAS_NON_ASCII.test(content)) return null;
  const parts: { text: string; html: string | null }[] = [];
  let last = 0;
  for (const match of content.matchAll(POSSIBLE_EMOJI_RE)) {
    const found = match[0];
    if (TEXT_PRESENTATION_RE.test(found)) continue;
    const code = unicodeEmojiCodeOf(found);
    const name = canonicalEmojiName(code);
    if (name === undefined) continue;
    const at = match.index;
    if (at > last) parts.push({ text: content.slice(last, at), html: null });
    parts.push({ text: found, html: emojiHtml(name, code) });
    last = at + found.length;
  }
  if (parts.length === 0) return null;
  if (last < content.length) parts.push({ text: content.slice(last), html: null });
  return parts;
}

/** Core rule (after inline parsing): unicode emoji inside text tokens become emoji spans. */
export function unicodeEmojiCore(state: StateCore): void {
  for (const block of state.tokens) {
    if (block.type !== "inline" || !block.children) continue;
    const out: Token[] = [];
    let changed = false;
    for (const token of block.children) {
      const parts = token.type === "text" ? splitEmoji(token.content) : null;
      if (!parts) {
        out.push(token);
        continue;
      }
      changed = true;
      for (const part of parts) {
        const piece = new state.Token(part.html === null ? "text" : INLINE_HTML, "", 0);
        piece.content = part.html ?? part.text;
        piece.level = token.level;
        out.push(piece);
      }
    }
    if (changed) block.children = out;
  }
}
