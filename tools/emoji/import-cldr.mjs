#!/usr/bin/env node
// @ts-check
/**
 * Writes tools/emoji/cldr-annotations-en.tsv, the English CLDR emoji annotations
 * tools/build-emoji.mjs names emoji with where Zulip's own picks do not cover them
 * (Zulip's generate_emoji_names does the same from the cldr-annotations-full and
 * cldr-annotations-derived-full packages). Kept in the repository rather than as a
 * dependency because only this small slice of two large packages is needed.
 *
 * Usage (after unpacking both packages, e.g. with `npm pack` into a temporary directory):
 *   node tools/emoji/import-cldr.mjs DIR/cldr-annotations-full DIR/cldr-annotations-derived-full
 * Output: one emoji of emoji-datasource-google a line, `code<TAB>tts<TAB>keyword|keyword...`,
 * code in Zulip's form (lower-case hex, U+FE0F removed), for every emoji CLDR annotates.
 */
import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const require = createRequire(import.meta.url);
const [fullDir, derivedDir] = process.argv.slice(2);
if (!fullDir || !derivedDir) {
  console.error("usage: node tools/emoji/import-cldr.mjs CLDR_ANNOTATIONS_FULL_DIR CLDR_ANNOTATIONS_DERIVED_FULL_DIR");
  process.exit(2);
}
/** @param {string} path */
const readJson = (path) => JSON.parse(readFileSync(path, "utf8"));
const version = /** @type {{ version: string }} */ (readJson(join(fullDir, "package.json"))).version;
/** @type {Record<string, { default?: string[]; tts?: string[] }>} */
const annotations = {
  ...readJson(join(fullDir, "annotations", "en", "annotations.json")).annotations.annotations,
  ...readJson(join(derivedDir, "annotationsDerived", "en", "annotations.json")).annotationsDerived.annotations,
};
const data = /** @type {{ unified: string }[]} */ (require("emoji-datasource-google/emoji.json"));
const lines = [];
for (const emoji of data) {
  const chars = emoji.unified
    .split("-")
    .map((hex) => String.fromCodePoint(Number.parseInt(hex, 16)))
    .join("")
    .replaceAll("\uFE0F", "");
  const entry = annotations[chars];
  if (!entry?.tts?.[0]) continue;
  const code = [...chars].map((c) => (c.codePointAt(0) ?? 0).toString(16).padStart(4, "0")).join("-");
  for (const text of [entry.tts[0], ...(entry.default ?? [])])
    if (/[\t|\n]/.test(text)) throw new Error(`${code}: unexpected separator in ${text}`);
  lines.push(`${code}\t${entry.tts[0]}\t${(entry.default ?? []).join("|")}`);
}
const header = `# English CLDR emoji annotations (cldr-annotations-full and cldr-annotations-derived-full ${version}), written by tools/emoji/import-cldr.mjs; do not edit.\n`;
writeFileSync(join(ROOT, "tools", "emoji", "cldr-annotations-en.tsv"), header + lines.join("\n") + "\n");
console.log(`cldr: ${lines.length} emoji (CLDR ${version})`);
