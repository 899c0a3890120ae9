/**
 * @module markdown/math
 * TeX as Zulip renders it, with KaTeX on the server: `$$...$$` inline and ```` ```math ````
 * fences (each blank-line-separated paragraph its own display formula). TeX KaTeX
 * cannot parse stays visible as `<span class="tex-error">` holding the source, as in
 * Zulip (zerver/lib/tex.py returns nothing and the markdown shows the source). KaTeX's
 * output needs only its stylesheet and fonts, which the web client loads when a
 * formula appears; `trust` stays off, so no TeX command can make a link or an image.
 */
import katex from "katex";
import type { StateInline, Token } from "markdown-it";
import { escapeText } from "./escape.js";

/** Zulip's inline pattern: `$$`, a body not starting with `_`, `$` or a newline, `$$`; no third `$` either side. */
const INLINE = /^\$\$([^\n_$](?:\\\$|[^$\n])*)\$\$(?!\$)/;
/** Macro expansions per formula (KaTeX's own default), so `\def` loops end. */
const MAX_EXPAND = 1000;
/** Ems for any user-given size (`\rule`, `\kern`), so a formula cannot cover the page. */
const MAX_SIZE = 50;

/** KaTeX's HTML for the TeX, or null when KaTeX refuses it. */
export function renderTex(tex: string, display: boolean): string | null {
  try {
    return katex.renderToString(tex, {
      displayMode: display,
      throwOnError: true,
      trust: false,
      strict: "ignore",
      maxExpand: MAX_EXPAND,
      maxSize: MAX_SIZE,
    });
  } catch {
    return null;
  }
}

/** Inline rule: `$$x^2$$`. */
export function mathInlineRule(state: StateInline, silent: boolean): boolean {
  const { src, pos } = state;
  if (src.charCodeAt(pos) !== 0x24 || src.charCodeAt(pos + 1) !== 0x24) return false;
  if (pos > 0 && src.charCodeAt(pos - 1) === 0x24) return false;
  const match = INLINE.exec(src.slice(pos));
  if (!match) return false;
  if (!silent) {
    const token = state.push("zulip_math_inline", "", 0);
    token.content = match[1] ?? "";
  }
  state.pos += match[0].length;
  return true;
}

export function renderMathInline(tokens: Token[], idx: number): string {
  const tex = tokens[idx]?.content ?? "";
  return renderTex(tex, false) ?? `<span class="tex-error">${escapeText(`$$${tex}$$`)}</span>`;
}

/** A ```` ```math ```` fence: one display formula per paragraph, each in its own `<p>`. */
export function mathBlockHtml(text: string): string {
  const lines = text.split("\n").map((line) => line.trimEnd());
  while (lines[lines.length - 1] === "") lines.pop();
  return lines
    .join("\n")
    .split("\n\n")
    .filter((paragraph) => paragraph.trim() !== "")
    .map((paragraph) => {
      const html = renderTex(paragraph, true) ?? `<span class="tex-error">${escapeText(paragraph)}</span>`;
      return `<p>${html}</p>\n`;
    })
    .join("");
}
