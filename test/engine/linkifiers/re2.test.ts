/**
 * The RE2 subset linkifier patterns are written in (engine/linkifiers): RE2's refusals
 * with RE2's texts (Zulip shows them after "Bad regular expression: "), and matching
 * that agrees with a backtracking engine on leftmost-first semantics while taking
 * time linear in the text.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { firstCharTest, Re2Program } from "../../../src/engine/linkifiers/re2-match.js";
import { parseRe2, Re2SyntaxError } from "../../../src/engine/linkifiers/re2-parse.js";

function refusal(pattern: string): string {
  try {
    new Re2Program(parseRe2(pattern));
  } catch (error) {
    if (error instanceof Re2SyntaxError) return error.message;
    throw error;
  }
  return "accepted";
}

function first(pattern: string, text: string, from = 0): string | null {
  const m = new Re2Program(parseRe2(pattern)).search(text, from);
  return m === null ? null : text.slice(m.slots[0], m.slots[1]);
}

describe("RE2 syntax", () => {
  it("refuses what RE2 refuses, with RE2's messages", () => {
    const cases: [string, string][] = [
      ["(foo", "missing ): (foo"],
      ["ZUL-(?P<id>\\d????)", "bad repetition operator: ????"],
      ["a**", "bad repetition operator: **"],
      ["a{2}{3}", "bad repetition operator: {2}{3}"],
      ["(?=x)y", "invalid perl operator: (?="],
      ["(?!x)y", "invalid perl operator: (?!"],
      ["(?<=x)y", "invalid perl operator: (?<="],
      ["(?<!x)y", "invalid perl operator: (?<!"],
      ["(?x)y", "invalid perl operator: (?x"],
      ["(?", "invalid perl operator: (?"],
      ["(?-)y", "invalid perl operator: (?-)"],
      ["(a)\\1", "invalid escape sequence: \\1"],
      ["(?P<n>a)\\k<n>", "invalid escape sequence: \\k"],
      ["a\\Z", "invalid escape sequence: \\Z"],
      ["a)", "unexpected ): a)"],
      ["[a", "missing ]: [a"],
      ["[]", "missing ]: []"],
      ["[z-a]", "invalid character class range: z-a"],
      ["[[:foo:]]", "invalid character class range: [:foo:]"],
      ["\\pX", "invalid character class range: \\pX"],
      ["\\p{Klingon}", "invalid character class range: \\p{Klingon}"],
      ["*a", "no argument for repetition operator: *"],
      ["(+)", "no argument for repetition operator: +"],
      ["a|?", "no argument for repetition operator: ?"],
      ["a{1001}", "invalid repetition size: {1001}"],
      ["a{3,2}", "invalid repetition size: {3,2}"],
      ["(a{100}){11}", "invalid repetition size: {11}"],
      ["a\\", "trailing \\"],
      ["(?P<na-me>x)", "invalid named capture group: (?P<na-me>"],
      ["(?P<name", "invalid named capture group: (?P<name"],
      ["(?P<>x)", "invalid named capture group: (?P<>"],
    ];
    for (const [pattern, message] of cases) expect(refusal(pattern), pattern).toBe(message);
  });

  it("accepts RE2's extensions", () => {
    for (const pattern of [
      "#(?P<id>[0-9]+)",
      "#(?<id>[0-9]+)",
      "(?i)ticket-(?P<id>\\d+)",
      "(?i:abc)d",
      "(?s).",
      "(?U)a+",
      "\\pL\\p{Greek}\\PN\\p{^Lu}",
      "[[:alpha:][:^digit:]]",
      "\\Qa.b\\E",
      "\\x41\\x{1F600}\\101\\n\\t",
      "a{,2}",
      "x{2,}y{0}z{1,3}?",
      "\\_\\-\\.",
      "[]a]",
      "[a-]",
    ])
      expect(refusal(pattern), pattern).toBe("accepted");
  });

  it("names groups, the leftmost of a repeated name winning", () => {
    const parsed = parseRe2("(?P<a>x)(y)(?P<b>z)(?P<a>w)");
    expect(parsed.groupCount).toBe(4);
    expect([...parsed.names]).toEqual([
      ["a", 1],
      ["b", 3],
    ]);
  });
});

describe("RE2 matching", () => {
  it("is leftmost-first with Perl's preferences", () => {
    expect(first("a|ab", "xab")).toBe("a");
    expect(first("ab|a", "xab")).toBe("ab");
    expect(first("a+?", "aaa")).toBe("a");
    expect(first("a*", "baaa")).toBe("");
    expect(first("a{2,3}", "aaaa")).toBe("aaa");
    expect(first("a{2,3}?", "aaaa")).toBe("aa");
    expect(first("(?U)a+", "aaa")).toBe("a");
    expect(first("(?U)a+?", "aaa")).toBe("aaa");
  });

  it("follows RE2's flags, anchors and classes", () => {
    expect(first("(?i)abc", "xAbC")).toBe("AbC");
    expect(first("(?i:a)b", "AB")).toBeNull();
    expect(first("^b", "ab")).toBeNull();
    expect(first("(?m)^b", "a\nb")).toBe("b");
    expect(first("a$", "a\n")).toBeNull();
    expect(first("(?m)a$", "a\nb")).toBe("a");
    expect(first("a.c", "a\nc")).toBeNull();
    expect(first("(?s)a.c", "a\nc")).toBe("a\nc");
    expect(first("\\bfoo\\b", "afoo foo")).toBe("foo");
    expect(first("\\s+", "a\u00a0 \tb")).toBe(" \t");
    expect(first("\\pL+", "12ßΩé3")).toBe("ßΩé");
    expect(first("\\p{Greek}+", "abΩλc")).toBe("Ωλ");
    expect(first("[^a]", "a\n")).toBe("\n");
    expect(first("\\d+", "x٣42")).toBe("42");
    expect(first("😀+", "a😀😀b")).toBe("😀😀");
    expect(first("\\Qa.b\\E", "axb a.b")).toBe("a.b");
  });

  it("starts at `from`, where ^ does not hold", () => {
    expect(first("^a", "aa", 1)).toBeNull();
    expect(first("a", "aab", 1)).toBe("a");
  });

  it("takes linear time where a backtracking engine explodes", () => {
    // (a+)+$ against a run of a's followed by b: exponential for backtracking, here a few thousand steps.
    const text = `${"a".repeat(5000)}b`;
    expect(first("(a+)+$", text)).toBeNull();
    expect(first("(a|aa)*c", text)).toBeNull();
  });

  it("agrees with JavaScript's engine on the syntax both share", () => {
    const atom = fc.oneof(fc.constantFrom("a", "b", ".", "[ab]", "[^a]", "\\d", "x"), fc.constant("(?:a|b)"));
    const quantified = fc
      .tuple(atom, fc.constantFrom("", "*", "+", "?", "*?", "+?", "??", "{1,2}", "{2}"))
      .map(([a, q]) => a + q);
    // Assertions take no quantifier in JavaScript's Unicode mode.
    const piece = fc.oneof(
      { weight: 5, arbitrary: quantified },
      { weight: 1, arbitrary: fc.constantFrom("^", "$", "\\b") },
    );
    const concat = fc.array(piece, { minLength: 1, maxLength: 4 }).map((p) => p.join(""));
    const pattern = fc.array(concat, { minLength: 1, maxLength: 3 }).map((alts) => `(${alts.join("|")})`);
    const text = fc.string({ unit: fc.constantFrom("a", "b", "x", "1", "\n"), maxLength: 12 });
    // Skipping the positions no match can start at (the first-character test) changes no result.
    fc.assert(
      fc.property(pattern, text, (p, t) => {
        const parsed = parseRe2(p);
        const program = new Re2Program(parsed);
        const firstChar = firstCharTest(parsed.root);
        const skipping =
          firstChar === null ? undefined : (pos: number) => pos < t.length && firstChar(t.codePointAt(pos) ?? -1);
        return JSON.stringify(program.search(t, 0, skipping)) === JSON.stringify(program.search(t));
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(pattern, text, (p, t) => {
        const ours = new Re2Program(parseRe2(p)).search(t);
        const theirs = new RegExp(p, "u").exec(t);
        if (theirs === null) return ours === null;
        return (
          ours !== null &&
          ours.slots[0] === theirs.index &&
          ours.slots[1] === theirs.index + theirs[0].length &&
          t.slice(ours.slots[2], ours.slots[3]) === (theirs[1] ?? "")
        );
      }),
      { numRuns: 500 },
    );
  });
});
