#!/usr/bin/env node
// @ts-check
/**
 * Builds parley's unicode emoji table (src/generated/unicode-emoji.ts) the way Zulip
 * builds its emoji_names.py (tools/setup/emoji/generate_emoji_names): from the
 * emoji-datasource-google package, Zulip's hand-picked names
 * (tools/emoji/zulip-names.txt, its CUSTOM_EMOJI_NAME_MAPS) and the English CLDR
 * annotations (tools/emoji/cldr-annotations-en.tsv, from the packages Zulip reads).
 * Run by `npm run build` before tsc (the table is a TypeScript module that src
 * imports); plain JavaScript because Node 20 cannot run TypeScript without a compile
 * step of its own.
 *
 * Zulip's rules, per emoji of emoji.json (file order):
 * 1. code: `unified` with every U+FE0F dropped, lower-case hex padded to 4 digits.
 *    The five skin-tone modifiers and every clock face but 1f557 are left out.
 *    Names: the zulip-names.txt line if there is one; else CLDR's text-to-speech
 *    name as the canonical name and its keywords as aliases, each cleaned up
 *    (spaces and dashes to `_`, quotes and punctuation dropped, `&` to `and`, lower
 *    case); an emoji CLDR does not annotate is left out. Two emoji with one
 *    canonical name fail the build, as in Zulip.
 * 2. An alias equal to any canonical name (cleaned up) is dropped.
 * 3. An alias two emoji want is dropped from each that has no zulip-names.txt line.
 * 4. A name with letters outside ASCII also gets an ASCII alias (é to e, ...), which
 *    no other emoji keeps.
 * A name two emoji still share stands for the later one (Zulip's name_to_codepoint is
 * a dict built in this order); the build lists such names.
 */
import { createRequire } from "node:module";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const OUT = join(ROOT, "src", "generated", "unicode-emoji.ts");
const require = createRequire(import.meta.url);

/** @typedef {{ unified: string }} DatasourceEmoji */
/** @typedef {{ canonical: string; aliases: string[] }} Names */

const SKIN_TONES = new Set(["1f3fb", "1f3fc", "1f3fd", "1f3fe", "1f3ff"]);
/** Clock faces 1f550..1f567: Zulip keeps only 1f557. */
const isDroppedClock = (/** @type {string} */ code) => {
  const n = Number.parseInt(code, 16);
  return !code.includes("-") && n >= 0x1f550 && n <= 0x1f567 && code !== "1f557";
};
/** Names Zulip keeps without an ASCII form, each with ASCII aliases besides. */
const NON_ASCII_KEPT = new Set(["ココ", "サ", "指", "空"]);
const ASCII_FOLDS = /** @type {const} */ ([
  ["è", "e"],
  ["ǐ", "i"],
  ["ó", "o"],
  ["ā", "a"],
  ["ō", "o"],
  ["ñ", "n"],
  ["ô", "o"],
  ["ç", "c"],
  ["é", "e"],
  ["ã", "a"],
  ["í", "i"],
  ["å", "a"],
  ["ü", "u"],
]);
const CLEANUPS = /** @type {const} */ ([
  [" ", "_"],
  ["-", "_"],
  ["–", "_"],
  ["“", ""],
  ["”", ""],
  [":", ""],
  [".", ""],
  [",", ""],
  ["(", ""],
  [")", ""],
  ["&", "and"],
  ["‘", ""],
  ["’", ""],
  ["'", ""],
]);

/** @param {string} unified */
function zulipCode(unified) {
  return unified
    .toLowerCase()
    .split("-")
    .filter((part) => part !== "fe0f")
    .join("-");
}

/** Zulip's cleanup_name. @param {string} name */
function cleanupName(name) {
  let out = name;
  for (const [from, to] of CLEANUPS) out = out.replaceAll(from, to);
  return out.replace(/_{2,}/g, "_").toLowerCase();
}

/** Zulip's convert_non_ascii_chars. @param {string} name */
function asciiFold(name) {
  let out = name;
  for (const [from, to] of ASCII_FOLDS) out = out.replaceAll(from, to);
  if (!/^[\x00-\x7f]*$/.test(out))
    throw new Error(`${name} still has non-ASCII characters after folding: add them to ASCII_FOLDS`);
  return out;
}

/** Python's list.remove, without its ValueError. @param {string[]} list @param {string} item */
function removeFirst(list, item) {
  const at = list.indexOf(item);
  if (at >= 0) list.splice(at, 1);
}

/** @returns {Map<string, Names>} code -> Zulip's picks */
function readZulipNames() {
  const text = readFileSync(join(ROOT, "tools", "emoji", "zulip-names.txt"), "utf8");
  /** @type {Map<string, Names>} */
  const out = new Map();
  for (const [index, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const [code, canonical, ...aliases] = line.split(/\s+/);
    if (!code || !/^[0-9a-f]{4,6}(-[0-9a-f]{4,6})*$/.test(code) || !canonical)
      throw new Error(`zulip-names.txt:${index + 1}: expected "code name [alias...]"`);
    if (out.has(code)) throw new Error(`zulip-names.txt:${index + 1}: ${code} listed twice`);
    out.set(code, { canonical, aliases });
  }
  return out;
}

/** @returns {{ version: string; byCode: Map<string, { tts: string; keywords: string[] }> }} */
function readCldr() {
  const text = readFileSync(join(ROOT, "tools", "emoji", "cldr-annotations-en.tsv"), "utf8");
  const version = /\b(\d+\.\d+\.\d+)\)/.exec(text.split("\n", 1)[0] ?? "")?.[1] ?? "unknown";
  /** @type {Map<string, { tts: string; keywords: string[] }>} */
  const byCode = new Map();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const [code, tts, keywords] = line.split("\t");
    if (!code || !tts) throw new Error(`cldr-annotations-en.tsv: bad line ${line}`);
    byCode.set(code, { tts, keywords: keywords ? keywords.split("|") : [] });
  }
  return { version, byCode };
}

const packageJson = /** @type {{ version: string }} */ (require("emoji-datasource-google/package.json"));
const data = /** @type {DatasourceEmoji[]} */ (require("emoji-datasource-google/emoji.json"));
const zulipNames = readZulipNames();
const cldr = readCldr();

// Step 1.
/** @type {Map<string, Names>} */
const all = new Map();
const canonicals = new Set();
const skipped = [];
for (const emoji of data) {
  const code = zulipCode(emoji.unified);
  if (SKIN_TONES.has(code) || isDroppedClock(code)) continue;
  const picked = zulipNames.get(code);
  /** @type {Names} */
  let names;
  if (picked) names = { canonical: picked.canonical, aliases: [...picked.aliases] };
  else {
    const annotation = cldr.byCode.get(code);
    if (!annotation) {
      skipped.push(code);
      continue;
    }
    names = {
      canonical: cleanupName(annotation.tts.trim()),
      aliases: annotation.keywords.map((k) => cleanupName(k.trim())),
    };
  }
  const cleaned = cleanupName(names.canonical);
  if (canonicals.has(cleaned))
    throw new Error(`${cleaned} was already added with a different code point: give ${code} a line in zulip-names.txt`);
  canonicals.add(cleaned);
  all.set(code, names);
}
for (const code of zulipNames.keys())
  if (!all.has(code) && !SKIN_TONES.has(code))
    throw new Error(`zulip-names.txt names ${code}, which emoji-datasource ${packageJson.version} does not have`);

// Step 2.
/** @type {Map<string, string[]>} alias -> codes that want it */
const wanted = new Map();
for (const [code, names] of all) {
  for (const alias of [...names.aliases]) {
    if (canonicals.has(alias)) removeFirst(names.aliases, alias);
    else wanted.set(alias, [...(wanted.get(alias) ?? []), code]);
  }
}
// Step 3.
for (const [alias, codes] of wanted) {
  if (codes.length < 2) continue;
  for (const code of codes) if (!zulipNames.has(code)) removeFirst(all.get(code)?.aliases ?? [], alias);
}
// Step 4.
for (const names of all.values()) {
  for (const name of [names.canonical, ...names.aliases]) {
    if (NON_ASCII_KEPT.has(name) || /^[\x00-\x7f]*$/.test(name)) continue;
    const ascii = asciiFold(name);
    for (const code of wanted.get(ascii) ?? []) removeFirst(all.get(code)?.aliases ?? [], ascii);
    names.aliases.push(ascii);
  }
}

/** @type {Map<string, string>} name -> code, later emoji winning as in Zulip */
const owner = new Map();
const shadowed = [];
for (const [code, names] of all) {
  for (const name of [names.canonical, ...names.aliases]) {
    if (/\s/.test(name)) throw new Error(`${code}: name with white space: ${name}`);
    const previous = owner.get(name);
    if (previous !== undefined && previous !== code) shadowed.push(`${name} (${previous} -> ${code})`);
    owner.set(name, code);
  }
}
if (shadowed.length > 0)
  console.warn(`emoji: names two emoji share, standing for the later one as in Zulip: ${shadowed.join(", ")}`);
if (skipped.length > 0)
  console.warn(
    `emoji: left out, as Zulip leaves them out (no Zulip name and no CLDR annotation): ${skipped.join(" ")}`,
  );

const lines = [...all].map(([code, names]) => [code, names.canonical, ...names.aliases].join(" ")).join("\n");
const source = [
  `// Generated by tools/build-emoji.mjs from emoji-datasource-google ${packageJson.version}, tools/emoji/zulip-names.txt and CLDR ${cldr.version}; do not edit.`,
  `export const EMOJI_DATASOURCE_VERSION = ${JSON.stringify(packageJson.version)};`,
  `/** One emoji a line: code, canonical name, aliases (names may repeat across lines: the last line wins, as in Zulip). */`,
  `export const UNICODE_EMOJI_TABLE = ${JSON.stringify(lines)};`,
  "",
].join("\n");
mkdirSync(dirname(OUT), { recursive: true });
// Rewritten only when it changes, so tsc and vitest watchers stay quiet.
let previous = "";
try {
  previous = readFileSync(OUT, "utf8");
} catch {
  // first build
}
if (previous !== source) writeFileSync(OUT, source);
console.log(
  `emoji: ${all.size} emoji, ${owner.size} names (emoji-datasource-google ${packageJson.version}, CLDR ${cldr.version})`,
);
