/**
 * @module markdown/plain
 * A fast path for messages with no Markdown syntax at all (most chat lines: "sounds
 * good, see you tomorrow"): their HTML is their paragraphs with `<br>` between lines,
 * exactly what the full renderer produces, without parsing. The accepted alphabet is
 * deliberately narrow; anything outside it, or any shape the full renderer could read
 * as syntax, returns null and goes to markdown-it. renderPlainTextWithMentions also
 * takes user and wildcard mentions in such text. test/markdown/plain.test.ts checks
 * byte identity (and the mention facts) against the full renderer with generated inputs.
 */
import { mayStartMention, USER_MENTION_RE } from "./mentions.js";

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

/** A mention's HTML, or null when it is not one this path renders (the content then goes to markdown-it). */
export type PlainMention = (body: string, silent: boolean) => string | null;

/** USER_MENTION_RE on one line: a body never spans lines here (a line break in one goes to markdown-it). */
const LINE_MENTION = new RegExp(USER_MENTION_RE.source.replace("[^*]", "[^*\\r\\n]"), "y");

/**
 * renderPlainText for text that also holds user mentions (`@**Name**`, `@_**Name|7**`,
 * `@**all**`), as chat lines often do. Each `@` must start a mention markdown-it would
 * take (mayStartMention, the mention rule's pattern) that `mention` renders; the line,
 * with each mention read as one letter, must be plain text in the sense above. A mention
 * is one inline token whatever surrounds it, and a letter is what this alphabet treats
 * most cautiously (`.` or `-` next to one is refused or allowed as next to a word), so
 * the text around keeps the HTML it has in plain text. Otherwise null, as renderPlainText.
 */
export function renderPlainTextWithMentions(content: string, mention: PlainMention): string | null {
  if (content.length === 0) return null;
  const out: string[] = [];
  for (const paragraph of content.split("\n\n")) {
    const lines: string[] = [];
    for (const line of paragraph.split("\n")) {
      let html = "";
      let shape = "";
      let from = 0;
      for (let at = line.indexOf("@"); at !== -1; at = line.indexOf("@", from)) {
        if (!mayStartMention(line, at)) return null;
        LINE_MENTION.lastIndex = at;
        const match = LINE_MENTION.exec(line);
        const rendered = match === null ? null : mention(match[2]!, match[1] === "_");
        if (match === null || rendered === null) return null;
        const before = line.slice(from, at);
        html += before + rendered;
        shape += before + "X";
        from = at + match[0].length;
      }
      const rest = line.slice(from);
      if (!PLAIN_LINE.test(shape + rest)) return null;
      lines.push(html + rest);
    }
    out.push(`<p>${lines.join("<br>\n")}</p>`);
  }
  return out.join("\n");
}
