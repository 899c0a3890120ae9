#!/usr/bin/env node
// @ts-check
/**
 * Builds parley's unicode emoji table (src/generated/unicode-emoji.ts) from the
 * emoji-datasource-google package, the data set Zulip builds its own on, and the
 * Zulip name picks in tools/emoji/zulip-names.txt. Run by `npm run build` before tsc
 * (the table is a TypeScript module that src imports, so it must exist before the
 * compiler and vitest see src); plain JavaScript because Node 20 cannot run
 * TypeScript without a compile step of its own.
 *
 * The rule, per emoji of emoji.json (sort_order):
 * - code: `unified`, lower-case, with every U+FE0F dropped: Zulip's emoji_code
 *   (its unqualify_emoji), e.g. 2764-fe0f becomes 2764.
 * - left out, as Zulip leaves them out: the five skin-tone modifiers, and every
 *   clock face but 1f557 (Zulip's `time`).
 * - names: the line for the code in zulip-names.txt if there is one (canonical
 *   first, then aliases); otherwise emoji-datasource's short_names minus any name a
 *   zulip-names.txt line claims; if that leaves none, the Unicode name in lower case
 *   with every run of other characters turned into `_` (Zulip's cleanup of a CLDR
 *   name), when no other emoji has it.
 * - every name maps to exactly one code; the build fails otherwise.
 *
 * `node tools/build-emoji.mjs --redundant` lists zulip-names.txt lines the rule
 * already reproduces (candidates for deletion) instead of writing the table.
 */
import { createRequire } from "node:module";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const OUT = join(ROOT, "src", "generated", "unicode-emoji.ts");
const require = createRequire(import.meta.url);

/** @typedef {{ unified: string; name: string | null; short_names: string[]; sort_order: number }} DatasourceEmoji */

const SKIN_TONES = new Set(["1f3fb", "1f3fc", "1f3fd", "1f3fe", "1f3ff"]);
/** Clock faces 1f550..1f567: Zulip keeps only 1f557. */
const isDroppedClock = (/** @type {string} */ code) => {
  const n = Number.parseInt(code, 16);
  return !code.includes("-") && n >= 0x1f550 && n <= 0x1f567 && code !== "1f557";
};
/** What `:name:` can match in a message (Zulip's emoji syntax, ASCII here). */
const NAME_RE = /^[\w\-+]+$/;

/** @param {string} unified */
function zulipCode(unified) {
  return unified.toLowerCase().split("-").filter((part) => part !== "fe0f").join("-");
}

/** @param {string} unicodeName */
function cleanName(unicodeName) {
  return unicodeName.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "");
}

/** @returns {Map<string, string[]>} code -> names */
function readZulipNames() {
  const text = readFileSync(join(ROOT, "tools", "emoji", "zulip-names.txt"), "utf8");
  /** @type {Map<string, string[]>} */
  const out = new Map();
  for (const [index, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const [code, ...names] = line.split(/\s+/);
    if (!code || !/^[0-9a-f]{4,6}(-[0-9a-f]{4,6})*$/.test(code) || names.length === 0) throw new Error(`zulip-names.txt:${index + 1}: expected "code name [alias...]"`);
    if (out.has(code)) throw new Error(`zulip-names.txt:${index + 1}: ${code} listed twice`);
    for (const name of names) if (!NAME_RE.test(name)) throw new Error(`zulip-names.txt:${index + 1}: bad name ${name}`);
    out.set(code, names);
  }
  return out;
}

const packageJson = /** @type {{ version: string }} */ (require("emoji-datasource-google/package.json"));
const data = /** @type {DatasourceEmoji[]} */ (require("emoji-datasource-google/emoji.json"));
const zulipNames = readZulipNames();
const claimed = new Set([...zulipNames.values()].flat());

/** @type {Map<string, string[]>} */
const ruleNames = new Map();
/** @type {{ code: string; canonical: string; aliases: string[]; picked: boolean }[]} */
const drafts = [];
const canonicals = new Set([...zulipNames.values()].map((names) => names[0] ?? ""));
const emojis = [...data].sort((a, b) => a.sort_order - b.sort_order);
for (const emoji of emojis) {
  const code = zulipCode(emoji.unified);
  if (SKIN_TONES.has(code) || isDroppedClock(code)) continue;
  ruleNames.set(code, emoji.short_names);
  const picked = zulipNames.get(code);
  if (picked) {
    drafts.push({ code, canonical: picked[0] ?? "", aliases: picked.slice(1), picked: true });
    continue;
  }
  const free = emoji.short_names.filter((name) => NAME_RE.test(name) && !claimed.has(name));
  const fallback = emoji.name ? cleanName(emoji.name) : "";
  const canonical = free.find((name) => !canonicals.has(name)) ?? (fallback !== "" && !claimed.has(fallback) && !canonicals.has(fallback) ? fallback : undefined);
  if (canonical === undefined) {
    console.warn(`emoji: ${code} (${emoji.name}) left out: every name it could have is taken`);
    continue;
  }
  canonicals.add(canonical);
  drafts.push({ code, canonical, aliases: free.filter((name) => name !== canonical), picked: false });
}
// Zulip's rules for aliases: none may be another emoji's canonical name, and one
// wanted by two emoji goes to the picked one, or to neither.
const wanted = new Map();
for (const draft of drafts) for (const alias of draft.aliases) wanted.set(alias, [...(wanted.get(alias) ?? []), draft]);
/** @type {[string, string[]][]} */
const table = [];
const owner = new Map();
for (const draft of drafts) {
  const aliases = draft.aliases.filter((alias) => {
    if (canonicals.has(alias)) return false;
    const rivals = wanted.get(alias) ?? [];
    return rivals.length === 1 || (draft.picked && rivals.filter((d) => d.picked).length === 1);
  });
  const names = [draft.canonical, ...aliases];
  for (const name of names) {
    const other = owner.get(name);
    if (other !== undefined) throw new Error(`${name} names both ${other} and ${draft.code}`);
    owner.set(name, draft.code);
  }
  table.push([draft.code, names]);
}
for (const code of zulipNames.keys()) if (!ruleNames.has(code)) throw new Error(`zulip-names.txt names ${code}, which emoji-datasource ${packageJson.version} does not have`);

if (process.argv.includes("--redundant")) {
  for (const [code, names] of zulipNames) if (ruleNames.get(code)?.join(" ") === names.join(" ")) console.log(code, names.join(" "));
} else {
  const lines = table.map(([code, names]) => `${code} ${names.join(" ")}`).join("\n");
  const source = [
    `// Generated by tools/build-emoji.mjs from emoji-datasource-google ${packageJson.version} and tools/emoji/zulip-names.txt; do not edit.`,
    `export const EMOJI_DATASOURCE_VERSION = ${JSON.stringify(packageJson.version)};`,
    `/** One emoji a line: code, canonical name, aliases. */`,
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
  console.log(`emoji: ${table.length} emoji, ${owner.size} names (emoji-datasource-google ${packageJson.version})`);
}
