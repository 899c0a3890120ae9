/**
 * content_html_diff: Zulip's own expected diffs (zerver/tests/test_message_edit.py and the
 * OpenAPI example) and the well-formedness every diff keeps.
 */
import { describe, expect, it } from "vitest";
import { highlightHtmlDifferences } from "../../src/markdown/html-diff.js";

const ins = (s: string) => `<span class="highlight_text_inserted">${s}</span>`;
const del = (s: string) => `<span class="highlight_text_deleted">${s}</span>`;

/** Every start tag closed in order (void elements aside). */
function wellFormed(html: string): boolean {
  const open: string[] = [];
  for (const [tag, close, name] of html.matchAll(/<(\/?)([a-z0-9]+)[^>]*>/g)) {
    if (/^(br|img|wbr|hr)$/.test(name!)) continue;
    if (close === "") open.push(name!);
    else if (open.pop() !== name) return false;
    void tag;
  }
  return open.length === 0;
}

describe("highlightHtmlDifferences", () => {
  it("gives Zulip's diffs for its own test cases", () => {
    expect(highlightHtmlDifferences("<p>content before edit</p>", "<p>content after edit</p>")).toBe(
      `<div><p>content ${ins("after")} ${del("before")} edit</p></div>`,
    );
    expect(highlightHtmlDifferences("<p>Hello!</p>", "<p>Howdy!</p>")).toBe(
      `<div><p>${ins("Howdy!")}</p> <p>${del("Hello!")}</p></div>`,
    );
    expect(
      highlightHtmlDifferences(
        "<p>content before edit, line 1</p>\n<p>content before edit, line 3</p>",
        "<p>content before edit, line 1<br>\ncontent after edit, line 2<br>\ncontent before edit, line 3</p>",
      ),
    ).toBe(
      `<div><p>content before edit, line 1<br> content ${ins("after edit, line 2<br> content")} before edit, line 3</p></div>`,
    );
    expect(highlightHtmlDifferences("", "")).toBe("<div></div>");
  });

  it("marks words added or removed at either end inside the paragraph", () => {
    expect(highlightHtmlDifferences("<p>a b</p>", "<p>a b c</p>")).toBe(`<div><p>a b ${ins("c")}</p></div>`);
    expect(highlightHtmlDifferences("<p>a b c</p>", "<p>a b</p>")).toBe(`<div><p>a b ${del("c")}</p></div>`);
    expect(highlightHtmlDifferences("<p>a b c</p>", "<p>b c</p>")).toBe(`<div><p>${del("a")} b c</p></div>`);
    expect(highlightHtmlDifferences("<p>same</p>", "<p>same</p>")).toBe("<div><p>same</p></div>");
  });

  it("counts a link's target and an image as words", () => {
    const link = (href: string) => `<p>see <a href="${href}">zulip</a> now</p>`;
    expect(highlightHtmlDifferences(link("https://a.example"), link("https://b.example"))).toBe(
      `<div><p>see <a href="https://b.example">${ins("zulip")}</a> <a href="https://a.example">${del("zulip")}</a> now</p></div>`,
    );
    const img = (src: string) => `<p>look <img src="${src}"></p>`;
    expect(highlightHtmlDifferences(img("/a.png"), img("/b.png"))).toBe(
      `<div><p>look ${ins('<img src="/b.png">')} ${del('<img src="/a.png">')}</p></div>`,
    );
  });

  it("stays well-formed when the structure changes and when a whole rewrite is too long to diff", () => {
    const cases: [string, string][] = [
      ["<ul>\n<li>one</li>\n<li>two</li>\n</ul>", "<p>one two three</p>"],
      ["<blockquote>\n<p>quoted words here</p>\n</blockquote>\n<p>reply</p>", "<p>reply only</p>"],
      ["<p><strong>bold</strong> and <em>it</em></p>", "<p>bold and <em>it</em> more</p>"],
      [
        Array.from({ length: 600 }, (_, i) => `<p>w${i}</p>`).join("\n"),
        Array.from({ length: 600 }, (_, i) => `<p>v${i}</p>`).join("\n"),
      ],
    ];
    for (const [before, after] of cases) {
      const diff = highlightHtmlDifferences(before, after);
      expect(wellFormed(diff), diff).toBe(true);
    }
    const rewrite = highlightHtmlDifferences(cases[3]![0], cases[3]![1]);
    expect(rewrite).toContain(ins("v599"));
    expect(rewrite).toContain(del("w0"));
  });

  it("keeps a code block's whitespace", () => {
    const code = (s: string) => `<div class="codehilite"><pre><span></span><code>${s}\n</code></pre></div>`;
    expect(highlightHtmlDifferences(code("x = 1\n  y"), code("x = 2\n  y"))).toBe(
      `<div>${code(`x = ${ins("2")} ${del("1")}\n  y`)}</div>`,
    );
  });
});
