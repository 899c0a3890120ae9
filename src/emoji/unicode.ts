/**
 * @module emoji/unicode
 * Zulip's unicode emoji: every name and code it accepts, from the table
 * tools/build-emoji.mjs generates at build time (emoji-datasource-google, Zulip's
 * own name picks and the English CLDR annotations, by Zulip's rules, which are in
 * that script). Also the emoji data
 * file Zulip serves to its clients (`server_emoji_data_url`): code -> names,
 * canonical name first.
 */
import { createHash } from "node:crypto";
import { UNICODE_EMOJI_TABLE } from "../generated/unicode-emoji.js";

const nameToCode = new Map<string, string>();
const codeToNames = new Map<string, readonly string[]>();
for (const line of UNICODE_EMOJI_TABLE.split("\n")) {
  const [code, ...names] = line.split(" ");
  if (code === undefined || names.length === 0) continue;
  codeToNames.set(code, names);
  for (const name of names) nameToCode.set(name, code);
}

/** The code for a Zulip emoji name (Zulip's name_to_codepoint). */
export function unicodeEmojiCode(name: string): string | undefined {
  return nameToCode.get(name);
}

/** The canonical name of a code (Zulip's codepoint_to_name). */
export function canonicalEmojiName(code: string): string | undefined {
  return codeToNames.get(code)?.[0];
}

/** Whether Zulip has this code (Zulip's codepoint_to_name). */
export function isUnicodeEmojiCode(code: string): boolean {
  return codeToNames.has(code);
}

/** Every name, canonical and alias, with its code. */
export function unicodeEmojiNames(): ReadonlyMap<string, string> {
  return nameToCode;
}

/** Zulip's emoji_api.json: `{"code_to_names": {code: [canonical, ...aliases]}}`. */
export const EMOJI_API_JSON: Buffer = Buffer.from(JSON.stringify({ code_to_names: Object.fromEntries(codeToNames) }));

/** Content hash for the file's URL and ETag: a new table is a new URL. */
export const EMOJI_API_HASH: string = createHash("sha256").update(EMOJI_API_JSON).digest("hex").slice(0, 16);

/** Where the file is served, as Zulip serves its own under /static/generated/emoji/. */
export const EMOJI_API_PATH = `/static/generated/emoji/emoji_api.${EMOJI_API_HASH}.json`;
