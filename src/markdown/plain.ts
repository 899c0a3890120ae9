/**
 * @module markdown/plain
 * A fast path for messages with no Markdown syntax at all (most chat lines: "sounds
 * good, see you tomorrow"): their HTML is their paragraphs with `<br>` between lines,
 * exactly what the full renderer produces, without parsing. The accepted alphabet is
 * deliberately narrow; anything outside it, or any shape the full renderer could read
 * as syntax, returns null and goes to markdown-it. test/markdown/plain.test.ts checks
 * byte identity against the full renderer with generated inputs.
 */

/**
 * One line the full renderer leaves as text:
 * - it starts with a letter or digit, and is not an ordered-list marker (`12. x`);
 * - letters and digits, except characters that can be (part of) an emoji;
 * - `'` `"` `!` `?` `,` `;` anywhere: none starts any syntax without `[`, `:`, `(`,
 *   `&` or `<`, which are all refused;
 * - `.` only when no letter or digit follows it (so no `example.com` or `3.14`, which
 *   linkify could turn into links);
 * - `-` only right after a letter or digit (never a list item, rule or strikethrough);
 * - a single space only between two other characters (no leading/trailing spaces,
 *   which would be trimmed or become a hard break, and no indented code).
 * Emoji (`\p{Emoji}`, which includes ASCII digits and `#`/`*`, and their components
 * such as variation selectors) are refused outside ASCII, so the emoji pass would
 * find nothing.
 */
const ALNUM = "(?:[A-Za-z0-9]|(?![\\x00-\\x7f\\p{Emoji}\\p{Emoji_Component}])[\\p{L}\\p{N}])";
const PLAIN_LINE = new RegExp(
  `^(?![0-9]+\\.)${ALNUM}(?:${ALNUM}|['"!?,;]|\\.(?!${ALNUM})|(?<=${ALNUM})-| (?=[^ ]))*$`,
  "u",
);

/**
 * The HTML of `content` if it is plain text in the sense above (paragraphs separated
 * by exactly one blank line, lines by one newline), otherwise null.
 */
export function renderPlainText(content: string): string | null {
  if (content.length === 0) return null;
  const paragraphs = content.split("\n\n");
  const out: string[] = [];
  for (const paragraph of paragraphs) {
    const lines = paragraph.split("\n");
    for (const line of lines) if (!PLAIN_LINE.test(line)) return null;
    out.push(`<p>${lines.join("<br>\n")}</p>`);
  }
  return out.join("\n");
}
