import { describe, expect, it } from "vitest";
import { STOP_WORDS, isStopWord } from "../../../src/engine/search/index.js";

describe("STOP_WORDS", () => {
  it("has Zulip's 149 entries", () => {
    expect(STOP_WORDS.size).toBe(149);
  });

  it("includes every single Latin letter", () => {
    for (const letter of "abcdefghijklmnopqrstuvwxyz") expect(isStopWord(letter)).toBe(true);
  });

  it("includes function words and contraction fragments but not content words", () => {
    for (const word of ["the", "ourselves", "against", "further", "don", "should", "now"]) {
      expect(isStopWord(word)).toBe(true);
    }
    for (const word of ["lunch", "would", "could", "i'm", "The"]) expect(isStopWord(word)).toBe(false);
  });
});
