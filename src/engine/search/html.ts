/**
 * @module engine/search/html
 *
 * The small amount of HTML handling full-text search needs: splitting
 * rendered message HTML into tags and text runs, decoding character
 * references in text runs while remembering where each decoded character
 * came from, and escaping plain text. It is deliberately not a general
 * HTML parser: rendered message content is well-formed and escapes every
 * literal `<`, `>` and `&` in text, so a linear scan is both sufficient
 * and fast enough to run on every message send.
 */

/** Receives the half-open range `[start, end)` of one text run in the input. */
export type TextRunVisitor = (start: number, end: number) => void;

/**
 * Calls `onText` for every run of text outside tags and comments, in order.
 * Tags and comments are never reported, so callers can copy them verbatim.
 */
export function forEachTextRun(html: string, onText: TextRunVisitor): void {
  const length = html.length;
  let textStart = 0;
  let i = html.indexOf("<");
  while (i !== -1) {
    const tagEnd = endOfMarkup(html, i);
    if (tagEnd === -1) {
      // A "<" that cannot open markup is literal text (lenient for
      // hand-written HTML); keep looking from the next character.
      i = html.indexOf("<", i + 1);
      continue;
    }
    if (i > textStart) onText(textStart, i);
    textStart = tagEnd;
    i = html.indexOf("<", tagEnd);
  }
  if (textStart < length) onText(textStart, length);
}

/**
 * Returns the index just past the markup starting at `start` (which holds
 * "<"), or -1 if that "<" does not begin markup. Unterminated markup runs to
 * the end of the input so that nothing inside a tag is ever treated as text.
 */
function endOfMarkup(html: string, start: number): number {
  const next = html.charCodeAt(start + 1);
  const isTagStart =
    (next >= 0x61 && next <= 0x7a) || // a-z
    (next >= 0x41 && next <= 0x5a) || // A-Z
    next === 0x2f || // "/"
    next === 0x21 || // "!"
    next === 0x3f; // "?"
  if (!isTagStart) return -1;

  if (html.startsWith("<!--", start)) {
    const close = html.indexOf("-->", start + 4);
    return close === -1 ? html.length : close + 3;
  }

  // A ">" inside a quoted attribute value does not end the tag, but a quote
  // only opens a value when it directly follows "=" (ignoring spaces).
  let afterEquals = false;
  for (let i = start + 1; i < html.length; i++) {
    const c = html.charCodeAt(i);
    if (c === 0x3e) return i + 1; // ">"
    if (afterEquals && (c === 0x22 || c === 0x27)) {
      const close = html.indexOf(c === 0x22 ? '"' : "'", i + 1);
      if (close === -1) return html.length;
      i = close;
      afterEquals = false;
    } else if (c === 0x3d) {
      afterEquals = true;
    } else if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0x0c) {
      afterEquals = false;
    }
  }
  return html.length;
}

// HTML 4's Latin-1 references name U+00A0..U+00FF in code-point order, so
// the table is built from the names alone.
const LATIN1_NAMES = `
  nbsp iexcl cent pound curren yen brvbar sect uml copy ordf laquo not shy
  reg macr deg plusmn sup2 sup3 acute micro para middot cedil sup1 ordm
  raquo frac14 frac12 frac34 iquest Agrave Aacute Acirc Atilde Auml Aring
  AElig Ccedil Egrave Eacute Ecirc Euml Igrave Iacute Icirc Iuml ETH Ntilde
  Ograve Oacute Ocirc Otilde Ouml times Oslash Ugrave Uacute Ucirc Uuml
  Yacute THORN szlig agrave aacute acirc atilde auml aring aelig ccedil
  egrave eacute ecirc euml igrave iacute icirc iuml eth ntilde ograve oacute
  ocirc otilde ouml divide oslash ugrave uacute ucirc uuml yacute thorn yuml
`
  .trim()
  .split(/\s+/);

// Renderers emit only amp/lt/gt/quot (and numeric references); the rest
// cover hand-written HTML such as integration messages. Names outside this
// table are left as literal text rather than guessed at; the full HTML5
// table (2,000+ names) is not worth its weight here.
const NAMED_REFERENCES: ReadonlyMap<string, string> = new Map([
  ...LATIN1_NAMES.map((name, i): [string, string] => [name, String.fromCharCode(0xa0 + i)]),
  ["amp", "&"],
  ["lt", "<"],
  ["gt", ">"],
  ["quot", '"'],
  ["apos", "'"],
  ["OElig", "\u0152"],
  ["oelig", "\u0153"],
  ["Scaron", "\u0160"],
  ["scaron", "\u0161"],
  ["Yuml", "\u0178"],
  ["ensp", "\u2002"],
  ["emsp", "\u2003"],
  ["thinsp", "\u2009"],
  ["zwnj", "\u200c"],
  ["zwj", "\u200d"],
  ["ndash", "\u2013"],
  ["mdash", "\u2014"],
  ["lsquo", "\u2018"],
  ["rsquo", "\u2019"],
  ["sbquo", "\u201a"],
  ["ldquo", "\u201c"],
  ["rdquo", "\u201d"],
  ["bdquo", "\u201e"],
  ["dagger", "\u2020"],
  ["Dagger", "\u2021"],
  ["bull", "\u2022"],
  ["hellip", "\u2026"],
  ["permil", "\u2030"],
  ["lsaquo", "\u2039"],
  ["rsaquo", "\u203a"],
  ["euro", "\u20ac"],
  ["trade", "\u2122"],
  ["larr", "\u2190"],
  ["uarr", "\u2191"],
  ["rarr", "\u2192"],
  ["darr", "\u2193"],
  ["harr", "\u2194"],
]);

const REFERENCE = /&(?:#(\d{1,8})|#[xX]([0-9a-fA-F]{1,7})|([A-Za-z][A-Za-z0-9]{1,31}));/g;

function decodeReference(
  decimal: string | undefined,
  hex: string | undefined,
  name: string | undefined,
): string | undefined {
  if (name !== undefined) return NAMED_REFERENCES.get(name);
  const code = decimal !== undefined ? Number.parseInt(decimal, 10) : Number.parseInt(hex ?? "", 16);
  // HTML maps NUL, surrogates and out-of-range code points to U+FFFD.
  if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return "\ufffd";
  return String.fromCodePoint(code);
}

/** Text with character references decoded. */
export function decodeEntities(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(
    REFERENCE,
    (whole: string, decimal?: string, hex?: string, name?: string) => decodeReference(decimal, hex, name) ?? whole,
  );
}

/**
 * Decoded text plus, when decoding changed anything, `offsets`: for every
 * UTF-16 index `i` of `text` (and `text.length`), the index in the source
 * at which that decoded unit begins. Every unit produced by one reference
 * maps to the reference's "&", so a range of decoded text maps back to a
 * source range that never splits a reference.
 */
export interface DecodedText {
  readonly text: string;
  readonly offsets: readonly number[] | null;
}

/** Decodes `source.slice(start, end)`, keeping offsets relative to `start`. */
export function decodeEntitiesWithOffsets(source: string, start: number, end: number): DecodedText {
  const raw = source.slice(start, end);
  if (!raw.includes("&")) return { text: raw, offsets: null };

  let text = "";
  const offsets: number[] = [];
  let copied = 0;
  REFERENCE.lastIndex = 0;
  for (let match = REFERENCE.exec(raw); match !== null; match = REFERENCE.exec(raw)) {
    const decoded = decodeReference(match[1], match[2], match[3]);
    if (decoded === undefined) continue;
    for (let i = copied; i < match.index; i++) offsets.push(i);
    text += raw.slice(copied, match.index);
    for (let i = 0; i < decoded.length; i++) offsets.push(match.index);
    text += decoded;
    copied = match.index + match[0].length;
  }
  if (copied === 0) return { text: raw, offsets: null };
  for (let i = copied; i < raw.length; i++) offsets.push(i);
  offsets.push(raw.length);
  return { text: text + raw.slice(copied), offsets };
}

/** Plain text of rendered HTML: tags become word breaks, references are decoded. */
export function htmlToText(html: string): string {
  const parts: string[] = [];
  forEachTextRun(html, (start, end) => {
    parts.push(decodeEntities(html.slice(start, end)));
  });
  // Joining with a space keeps words in adjacent elements apart, as
  // PostgreSQL's parser does when it meets a tag token.
  return parts.join(" ");
}

const ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Escapes `& < > " '` the way Zulip's escape_html does for topics. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}
