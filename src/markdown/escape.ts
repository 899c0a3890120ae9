/**
 * @module markdown/escape
 * HTML escaping for the fragments this renderer builds by hand. Zulip's server
 * (Python-Markdown + ElementTree) escapes only `&`, `<` and `>` in text, so text
 * does the same to keep stored HTML byte-compatible; attribute values are always
 * double-quoted and get the full treatment.
 */

const TEXT_ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };
const ATTR_ESCAPES: Readonly<Record<string, string>> = {
  ...TEXT_ESCAPES,
  '"': "&quot;",
  "'": "&#39;",
};

/** Escapes a string for use as element text. */
export function escapeText(text: string): string {
  return text.replace(/[&<>]/g, (c) => TEXT_ESCAPES[c] ?? c);
}

/** Escapes a string for use inside a double-quoted attribute value (and for code, as Pygments does). */
export function escapeAttr(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ATTR_ESCAPES[c] ?? c);
}

/**
 * Replaces unpaired UTF-16 surrogates with U+FFFD. encodeURIComponent throws on
 * them, and message content is arbitrary user input.
 */
export function toWellFormed(text: string): string {
  return text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
}
