/**
 * Highlighting from a message's token form (search/highlight.ts) gives exactly what
 * the scan it replaced gave: the HTML split into text runs, each run decoded and
 * tokenized, matching words wrapped (adjacent ones merged). Random HTML with tags,
 * attributes, character references, CJK, URLs and inner separators; random term sets.
 */
import { expect, it } from "vitest";
import fc from "fast-check";
import { highlightHtml, tokenFormOf, highlightTokens } from "../../../src/engine/search/highlight.js";
import { decodeEntitiesWithOffsets, forEachTextRun } from "../../../src/engine/search/html.js";
import { forEachTerm, tokenize } from "../../../src/engine/search/tokenize.js";

/** The scan, as it was: per text run, decode, tokenize, wrap. */
function byScan(html: string, terms: ReadonlySet<string>): string {
  if (terms.size === 0) return html;
  const out: string[] = [];
  let copied = 0;
  forEachTextRun(html, (start, end) => {
    out.push(html.slice(copied, start));
    const { text, offsets } = decodeEntitiesWithOffsets(html, start, end);
    let inner = start;
    let openEnd = -1;
    forEachTerm(text, (term, wordStart, wordEnd) => {
      if (!terms.has(term)) return;
      const from = start + (offsets === null ? wordStart : (offsets[wordStart] ?? wordStart));
      const to = start + (offsets === null ? wordEnd : (offsets[wordEnd] ?? wordEnd));
      if (from === openEnd) out.push(html.slice(inner, to));
      else {
        if (openEnd !== -1) out.push("</span>");
        out.push(html.slice(inner, from), '<span class="highlight">', html.slice(from, to));
      }
      inner = to;
      openEnd = to;
    });
    if (openEnd !== -1) out.push("</span>");
    out.push(html.slice(inner, end));
    copied = end;
  });
  out.push(html.slice(copied));
  return out.join("");
}

const PIECES = [
  "<p>",
  "</p>",
  "<code>",
  "</code>",
  '<a href="https://wave.example/lunch">',
  "</a>",
  "<br>",
  "<!-- lunch -->",
  "&amp;",
  "&eacute;",
  "caf&eacute;",
  "&lt;wave&gt;",
  "lunch",
  "Lunches",
  "waves",
  "waving",
  "the",
  "a.b-c",
  "wave_lunch",
  "東京",
  "タワー",
  "https://lunch.example/waves",
  " ",
  " ",
  ", ",
  "\n",
  "x",
];

it("token-form highlights equal the scan's", () => {
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }),
      fc.subarray(["lunch", "wave", "waves", "東京", "タワー", "caf", "café", "b", "example", "x"]),
      (pieces, words) => {
        const html = pieces.join("");
        const terms = new Set(words.flatMap((w) => tokenize(w)));
        expect(highlightHtml(html, terms)).toBe(byScan(html, terms));
        expect(highlightTokens(html, tokenFormOf(html), terms)).toBe(byScan(html, terms));
      },
    ),
    { seed: 1204, numRuns: 1500 },
  );
});
