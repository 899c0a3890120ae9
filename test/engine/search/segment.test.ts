import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { forEachWord, forEachWordIntl } from "../../../src/engine/search/segment.js";

function words(text: string, segment: typeof forEachWord): string[] {
  const out: string[] = [];
  segment(text, (start, end) => out.push(text.slice(start, end)));
  return out;
}

const viaIntl = (text: string): string[] =>
  words(text, (t, visit) => {
    forEachWordIntl(t, 0, t.length, visit);
  });

// Characters chosen to exercise every ASCII rule (letters, digits, "_", the
// mid-word punctuation) plus the non-ASCII cases the fast path must hand
// over intact: accents, combining marks, CJK, Thai, curly quotes, odd spaces.
const ASCII_UNITS = [..."aZq09_.,;:'\"-/ \t\n!?@#&()"];
const MIXED_UNITS = [
  ...ASCII_UNITS,
  "é",
  "\u0301",
  "日",
  "本",
  "は",
  "ไทย",
  "’",
  "\u00a0",
  "\u202f",
  "\u3000",
  "\ufeff",
  "Ж",
];

const textOf = (units: string[]): fc.Arbitrary<string> =>
  fc.array(fc.constantFrom(...units), { maxLength: 40 }).map((parts) => parts.join(""));

describe("forEachWord", () => {
  it("agrees with Intl.Segmenter on ASCII text", () => {
    fc.assert(
      fc.property(textOf(ASCII_UNITS), (text) => {
        expect(words(text, forEachWord)).toEqual(viaIntl(text));
      }),
      { numRuns: 5000, seed: 20240601 },
    );
  });

  it("agrees with Intl.Segmenter on mixed-script text", () => {
    fc.assert(
      fc.property(textOf(MIXED_UNITS), (text) => {
        expect(words(text, forEachWord)).toEqual(viaIntl(text));
      }),
      { numRuns: 5000, seed: 20240601 },
    );
  });

  it("applies the mid-word punctuation rules", () => {
    expect(words("e.g. don't a:b 3.14 1,000 1;2 a.1 x_y _z_ a..b 'q' end.", forEachWord)).toEqual([
      "e.g",
      "don't",
      "a:b",
      "3.14",
      "1,000",
      "1;2",
      "a",
      "1",
      "x_y",
      "_z_",
      "a",
      "b",
      "q",
      "end",
    ]);
  });

  it("hands non-ASCII stretches to Intl.Segmenter with their offsets", () => {
    const text = "plain 今日はいい天気 café";
    expect(words(text, forEachWord)).toEqual(["plain", "今日", "は", "いい", "天気", "café"]);
  });
});
