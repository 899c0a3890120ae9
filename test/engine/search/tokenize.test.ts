import { describe, expect, it } from "vitest";
import { indexTerms, termForWord, tokenize } from "../../../src/engine/search/index.js";

describe("tokenize", () => {
  it("stems inflections of a word to one term", () => {
    expect(tokenize("wave")).toEqual(["wave"]);
    expect(tokenize("waving")).toEqual(["wave"]);
    expect(tokenize("waves")).toEqual(["wave"]);
    expect(tokenize("waved")).toEqual(["wave"]);
    expect(tokenize("meetings laptops running")).toEqual(["meet", "laptop", "run"]);
  });

  it("folds case and removes duplicate terms, keeping first-seen order", () => {
    expect(tokenize("Lunch LUNCH lunch Waves wave")).toEqual(["lunch", "wave"]);
  });

  it("drops Zulip's stop words, including every single Latin letter", () => {
    expect(tokenize("The cat and I were in a hat")).toEqual(["cat", "hat"]);
    expect(tokenize("x y z b c 7")).toEqual(["7"]);
    expect(tokenize("the and of to")).toEqual([]);
  });

  it("checks stop words before stemming", () => {
    // "doing" is a stop word; "does" stems to "doe", but is itself a stop word.
    expect(tokenize("doing does")).toEqual([]);
    expect(termForWord("Doing")).toBeUndefined();
    expect(termForWord("Waving")).toBe("wave");
  });

  it("splits at apostrophes, underscores and colons as PostgreSQL does", () => {
    expect(tokenize("Hogwart's")).toEqual(["hogwart"]);
    expect(tokenize("Hogwart’s Hogwarts")).toEqual(["hogwart"]);
    expect(tokenize("don't")).toEqual([]);
    expect(tokenize("snake_case __init__ key:value")).toEqual(["snake", "case", "init", "kei", "valu"]);
  });

  it("keeps hosts and numbers whole and ignores URL schemes", () => {
    expect(tokenize("https://google.com/search?q=1")).toEqual(["google.com", "search", "1"]);
    expect(tokenize("version 3.14 of 1990s")).toEqual(["version", "3.14", "1990"]);
  });

  it("applies NFKC before folding", () => {
    expect(tokenize("Ｗａｖｅｓ ﬁles")).toEqual(["wave", "file"]);
  });

  it("segments Japanese into dictionary words without stemming them", () => {
    expect(tokenize("昨日、日本 のお菓子を送りました。")).toEqual([
      "昨日",
      "日本",
      "の",
      "お菓子",
      "を",
      "送り",
      "ま",
      "した",
    ]);
  });

  it("folds Cyrillic but does not stem it", () => {
    expect(tokenize("Привет, МИР! мир и миру")).toEqual(["привет", "мир", "и", "миру"]);
  });

  it("stems accented Latin words like other Latin words", () => {
    expect(tokenize("Café naïve")).toEqual(["café", "naïv"]);
  });

  it("ignores punctuation, symbols and emoji", () => {
    expect(tokenize("... -- !? 😀 #")).toEqual([]);
    expect(tokenize("")).toEqual([]);
  });
});

describe("indexTerms", () => {
  it("indexes the topic and the text of rendered content, not tag attributes", () => {
    const html =
      '<p>See <a href="https://example.com/budget" title="quarterly">the report</a> &amp; ' +
      '<span class="user-mention" data-user-id="8">@King Hamlet</span></p>' +
      "<pre><code>const budget = 1;</code></pre>";
    expect(indexTerms("Meeting notes", html)).toEqual([
      "meet",
      "note",
      "see",
      "report",
      "king",
      "hamlet",
      "const",
      "budget",
      "1",
    ]);
  });

  it("decodes character references instead of indexing their names", () => {
    expect(indexTerms("", "<p>caf&eacute; &amp; cr&#232;me &lt;b&gt; &#x41;PI</p>")).toEqual(["café", "crème", "api"]);
  });

  it("treats a tag as a word break", () => {
    expect(indexTerms("", "<p>wiki</p><p>pedia</p>")).toEqual(["wiki", "pedia"]);
  });

  it("removes terms repeated between topic and content", () => {
    expect(indexTerms("lunch plans", "<p>Lunch is planned</p>")).toEqual(["lunch", "plan"]);
  });
});
