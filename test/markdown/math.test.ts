/**
 * TeX in messages as Zulip renders it: `$$...$$` inline and ```math fences through
 * KaTeX, the source kept as `tex-error` when KaTeX refuses it.
 */
import { describe, expect, it } from "vitest";
import type { RenderContext } from "../../src/engine/render.js";
import { renderMarkdown } from "../../src/markdown/index.js";

const context: RenderContext = {
  findUsersByName: () => [],
  findUserById: () => undefined,
  findChannelByName: () => undefined,
  findGroupByName: () => undefined,
  realmUrl: "https://chat.example.com",
};
const html = (content: string): string => renderMarkdown(content, context).html;

describe("math", () => {
  it("renders $$...$$ inline with KaTeX (HTML and MathML), underscores and backslashes belonging to TeX", () => {
    const out = html("Euler: $$e^{i\\pi} + 1 = 0$$ and $$a_1 \\cdot b_2$$ done");
    expect(out).toMatch(/^<p>Euler: <span class="katex"><span class="katex-mathml"><math/);
    expect(out).toContain('<span class="katex-html" aria-hidden="true">');
    expect(out).toContain("<mi>π</mi>");
    expect(out).toContain("<msub><mi>a</mi><mn>1</mn></msub>");
    expect(out).not.toContain("<em>");
    expect(out).toMatch(/<\/span> done<\/p>$/);
    expect(out).not.toContain("katex-display");
  });

  it("keeps Zulip's limits on the inline form: no body starting with _ or $, no third $", () => {
    expect(html("$$_x$$")).toBe("<p>$$_x$$</p>");
    expect(html("$$$x$$$")).not.toContain("katex");
    expect(html("costs $5 and $6")).toBe("<p>costs $5 and $6</p>");
    expect(html("$$a\nb$$")).not.toContain("katex");
  });

  it("renders each paragraph of a ```math fence as a display formula", () => {
    const out = html("```math\n\\int_0^1 x\\,dx\n\n\\sum_{n=1}^\\infty \\frac{1}{n^2}\n```");
    expect(out.match(/<p><span class="katex-display"><span class="katex">/g)).toHaveLength(2);
    expect(out).not.toContain("codehilite");
  });

  it("shows TeX KaTeX refuses as escaped source in span.tex-error, and never a link", () => {
    expect(html("$$\\frac{1}{$$")).toBe('<p><span class="tex-error">$$\\frac{1}{$$</span></p>');
    expect(html("```math\n\\begin{x}<b>\n```")).toBe('<p><span class="tex-error">\\begin{x}&lt;b&gt;</span></p>');
    const out = html("$$\\href{javascript:alert(1)}{x}$$");
    expect(out).not.toContain("<a ");
    expect(out).not.toContain("href=");
  });

  it("leaves tex and latex fences as code, as Zulip does", () => {
    expect(html("```latex\n\\alpha\n```")).toContain('<div class="codehilite" data-code-language="TeX">');
  });
});
