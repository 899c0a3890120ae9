import { describe, expect, it } from "vitest";
import { highlightHtml, highlightTopic, parseSearchQuery, tokenize } from "../../../src/engine/search/index.js";

const termsOf = (operand: string): ReadonlySet<string> => new Set(parseSearchQuery(operand).terms);

describe("highlightHtml", () => {
  it("wraps each matching word, like Zulip's match_content", () => {
    expect(highlightHtml("<p>discuss lunch after lunch</p>", termsOf("lunch"))).toBe(
      '<p>discuss <span class="highlight">lunch</span> after <span class="highlight">lunch</span></p>',
    );
  });

  it("matches other inflections of the searched word and keeps the original text", () => {
    expect(highlightHtml("<p>Waves, waving: WAVED!</p>", termsOf("wave"))).toBe(
      '<p><span class="highlight">Waves</span>, <span class="highlight">waving</span>: ' +
        '<span class="highlight">WAVED</span>!</p>',
    );
  });

  it("never touches tags or attribute values, even when they contain the term", () => {
    const html = '<p><a href="https://example.com/wave" title="wave">wave hello</a></p>';
    expect(highlightHtml(html, termsOf("wave"))).toBe(
      '<p><a href="https://example.com/wave" title="wave"><span class="highlight">wave</span> hello</a></p>',
    );
  });

  it("ignores '>' inside a quoted attribute value and comments", () => {
    const html = '<img alt="a > wave" src="x.png"><!-- wave --> wave';
    expect(highlightHtml(html, termsOf("wave"))).toBe(
      '<img alt="a > wave" src="x.png"><!-- wave --> <span class="highlight">wave</span>',
    );
  });

  it("highlights the host of a link but not the scheme, as Zulip does", () => {
    expect(
      highlightHtml('<p><a href="https://google.com">https://google.com</a></p>', termsOf("https://google.com")),
    ).toBe('<p><a href="https://google.com">https://<span class="highlight">google.com</span></a></p>');
  });

  it("leaves character references intact and wraps words containing them whole", () => {
    expect(highlightHtml("<p>caf&eacute; &amp; cafe &lt;wave&gt; &#119;ave</p>", termsOf("café wave"))).toBe(
      '<p><span class="highlight">caf&eacute;</span> &amp; cafe &lt;<span class="highlight">wave</span>&gt; ' +
        '<span class="highlight">&#119;ave</span></p>',
    );
  });

  it("does not match the names of character references", () => {
    expect(highlightHtml("<p>chalk &amp; cheese</p>", termsOf("amp"))).toBe("<p>chalk &amp; cheese</p>");
  });

  it("treats each element's text separately and matches inside code", () => {
    expect(highlightHtml("<p>I <strong>wave</strong>d at <code>waves()</code></p>", termsOf("wave"))).toBe(
      '<p>I <strong><span class="highlight">wave</span></strong>d at ' +
        '<code><span class="highlight">waves</span>()</code></p>',
    );
  });

  it("highlights the part of a word before an apostrophe", () => {
    expect(highlightHtml("<p>Hogwart's house</p>", termsOf("Hogwarts"))).toBe(
      '<p><span class="highlight">Hogwart</span>\'s house</p>',
    );
  });

  it("highlights Japanese words and merges adjacent matches", () => {
    expect(highlightHtml("<p>昨日、日本 のお菓子を送りました。</p>", termsOf("日本"))).toBe(
      '<p>昨日、<span class="highlight">日本</span> のお菓子を送りました。</p>',
    );
    expect(highlightHtml("<p>今日はいい天気</p>", new Set(tokenize("今日は")))).toBe(
      '<p><span class="highlight">今日は</span>いい天気</p>',
    );
  });

  it("highlights Cyrillic words case-insensitively", () => {
    expect(highlightHtml("<p>Привет, МИР!</p>", termsOf("мир"))).toBe(
      '<p>Привет, <span class="highlight">МИР</span>!</p>',
    );
  });

  it("returns the input unchanged when nothing matches", () => {
    const html = '<p>nothing <em class="x">here</em></p>';
    expect(highlightHtml(html, termsOf("lunch"))).toBe(html);
    expect(highlightHtml(html, new Set())).toBe(html);
  });
});

describe("highlightTopic", () => {
  it("highlights matching words", () => {
    expect(highlightTopic("lunch plans", termsOf("lunch"))).toBe('<span class="highlight">lunch</span> plans');
  });

  it("escapes HTML special characters whether or not anything matches", () => {
    expect(highlightTopic(`bread & "butter" <b>'s`, termsOf("butter"))).toBe(
      'bread &amp; &quot;<span class="highlight">butter</span>&quot; &lt;b&gt;&#39;s',
    );
    expect(highlightTopic(`a < b & 'c'`, new Set())).toBe("a &lt; b &amp; &#39;c&#39;");
  });

  it("does not highlight inside the escapes it introduced", () => {
    expect(highlightTopic("fish & chips", termsOf("amp quot"))).toBe("fish &amp; chips");
  });
});
