import { describe, expect, it } from "vitest";
import { matchesPhrases, parseSearchQuery } from "../../../src/engine/search/index.js";

describe("parseSearchQuery", () => {
  it("turns plain words into stemmed, stop-word-free terms", () => {
    expect(parseSearchQuery("the waving Lunches")).toEqual({ terms: ["wave", "lunch"], phrases: [] });
  });

  it("includes quoted words in the terms and records the lower-cased phrase", () => {
    expect(parseSearchQuery('lunch "Meeting Notes" today')).toEqual({
      terms: ["lunch", "meet", "note", "todai"],
      phrases: ["meeting notes"],
    });
  });

  it("keeps phrase text verbatim apart from case, including punctuation and stop words", () => {
    expect(parseSearchQuery('"To be, or NOT"')).toEqual({ terms: [], phrases: ["to be, or not"] });
  });

  it("reads several phrases and a phrase glued to a following word", () => {
    expect(parseSearchQuery('"alpha beta" "Gamma"delta')).toEqual({
      terms: ["alpha", "beta", "gamma", "delta"],
      phrases: ["alpha beta", "gamma"],
    });
  });

  it("only starts a phrase at the start of a chunk, as Zulip does", () => {
    expect(parseSearchQuery('foo"bar baz"')).toEqual({ terms: ["foo", "bar", "baz"], phrases: [] });
  });

  it("ignores unbalanced and empty quotes", () => {
    expect(parseSearchQuery('"unclosed phrase')).toEqual({ terms: ["unclos", "phrase"], phrases: [] });
    expect(parseSearchQuery('"" " lunch')).toEqual({ terms: ["lunch"], phrases: [] });
  });

  it("yields no terms for an operand of only stop words", () => {
    expect(parseSearchQuery("to the")).toEqual({ terms: [], phrases: [] });
  });

  it("handles non-Latin phrases", () => {
    expect(parseSearchQuery('"Привет Мир"')).toEqual({ terms: ["привет", "мир"], phrases: ["привет мир"] });
  });
});

describe("matchesPhrases", () => {
  it("accepts anything when there are no phrases", () => {
    expect(matchesPhrases("topic", "content", [])).toBe(true);
  });

  it("matches case-insensitively in content or topic", () => {
    expect(matchesPhrases("Weekly sync", "We took MEETING NOTES.", ["meeting notes"])).toBe(true);
    expect(matchesPhrases("Meeting Notes", "nothing here", ["meeting notes"])).toBe(true);
  });

  it("requires every phrase, each in either place", () => {
    expect(matchesPhrases("alpha", "beta gamma", ["alpha", "beta gamma"])).toBe(true);
    expect(matchesPhrases("alpha", "beta gamma", ["alpha", "gamma beta"])).toBe(false);
  });

  it("does not let a phrase span topic and content", () => {
    expect(matchesPhrases("meeting", "notes", ["meeting notes"])).toBe(false);
  });

  it("matches substrings, not just whole words", () => {
    expect(matchesPhrases("", "reconnecting", ["connect"])).toBe(true);
  });
});
