/**
 * @module http/webhooks/python-json
 * JSON text as Python's json.dumps(value, indent=2) writes it, which Zulip's JSON
 * webhook posts: JSON.stringify's layout is the same, but Python escapes every
 * non-ASCII character (ensure_ascii). Not reproduced: Python keeps `1.0` as written,
 * JavaScript's parser has already made it `1`, and integers past 2^53 lose digits.
 */
export function pythonJson(value: unknown): string {
  const text = JSON.stringify(value, null, 2);
  return text.replace(/[\u0080-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
