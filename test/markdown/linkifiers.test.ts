/**
 * Linkifiers in the Markdown renderer, as Zulip's LinkifierPattern applies them: after
 * a paragraph's start, whitespace or an opening delimiter and before a non-word
 * character; never in code, links, mentions or escaped text; earlier linkifiers win
 * where matches overlap; URLs no link may have stay text.
 */
import { describe, expect, it } from "vitest";
import { compileLinkifier, type CompiledLinkifier } from "../../src/engine/index.js";
import type { RenderContext, RenderResult } from "../../src/engine/render.js";
import { renderMarkdown } from "../../src/markdown/index.js";

let nextId = 1;
function linkifier(pattern: string, urlTemplate: string): CompiledLinkifier {
  const compiled = compileLinkifier({ id: nextId, realmId: 1, pattern, urlTemplate, order: nextId++ });
  if (compiled === null) throw new Error(`does not compile: ${pattern}`);
  return compiled;
}

const TRAC = linkifier("#(?P<id>[0-9]{2,8})", "https://trac.example.com/ticket/{id}");

function context(linkifiers: readonly CompiledLinkifier[]): RenderContext {
  const alice = { id: 10, fullName: "Alice #12", email: "alice@example.com" };
  return {
    findUsersByName: (name) => (name === alice.fullName ? [alice] : []),
    findUserById: (id) => (id === alice.id ? alice : undefined),
    findChannelByName: () => undefined,
    findGroupByName: () => undefined,
    realmUrl: "https://chat.example.com",
    linkifiers,
  };
}

const render = (content: string, linkifiers = [TRAC]): RenderResult => renderMarkdown(content, context(linkifiers));
const html = (content: string, linkifiers = [TRAC]): string => render(content, linkifiers).html;
const trac = (id: string, text = `#${id}`) => `<a href="https://trac.example.com/ticket/${id}">${text}</a>`;

describe("linkifiers in messages", () => {
  it("links matches as Zulip's test_realm_patterns does", () => {
    expect(
      html(
        "We should fix #224 and #115, but not issue#124 or #1124z or [trac #15](https://trac.example.com/ticket/16) today.",
      ),
    ).toBe(
      `<p>We should fix ${trac("224")} and ${trac("115")}, but not issue#124 or #1124z or ${trac("16", "trac #15")} today.</p>`,
    );
    expect(render("see #224").hasLink).toBe(true);
    expect(render("see #224", []).hasLink).toBe(false);
  });

  it("links plain words too (the plain-text fast path steps aside)", () => {
    const ticket = linkifier("ticket (?P<id>[0-9]+)", "https://t.example/{id}");
    expect(html("see ticket 42 now", [ticket])).toBe('<p>see <a href="https://t.example/42">ticket 42</a> now</p>');
    expect(html("see ticket 42 now", [])).toBe("<p>see ticket 42 now</p>");
  });

  it("never links inside code, links, mentions, bare URLs or escaped text", () => {
    expect(html("`#224` and\n\n```\n#225\n```")).toBe(
      '<p><code>#224</code> and</p>\n<div class="codehilite"><pre><span></span><code>#225\n</code></pre></div>',
    );
    expect(html("[#224](https://example.com/x) https://example.com/#224")).toBe(
      '<p><a href="https://example.com/x">#224</a> <a href="https://example.com/#224">https://example.com/#224</a></p>',
    );
    expect(html("hi @**Alice #12**")).toBe('<p>hi <span class="user-mention" data-user-id="10">@Alice #12</span></p>');
    expect(html("\\#224")).toBe("<p>#224</p>");
  });

  it("needs the start, a line start, whitespace or an opening delimiter before, and no letter or digit after", () => {
    expect(html("#224")).toBe(`<p>${trac("224")}</p>`);
    expect(html("a\n#224")).toBe(`<p>a<br>\n${trac("224")}</p>`);
    expect(html("(#224), '#225', \"#226\", x:#227, <#228>")).toBe(
      `<p>(${trac("224")}), '${trac("225")}', "${trac("226")}", x:${trac("227")}, &lt;${trac("228")}&gt;</p>`,
    );
    expect(html("`x`#224 and **#225** and x#226 and #227a")).toBe(
      "<p><code>x</code>#224 and <strong>#225</strong> and x#226 and #227a</p>",
    );
    expect(html("#224, #225. #226! #227?")).toBe(
      `<p>${trac("224")}, ${trac("225")}. ${trac("226")}! ${trac("227")}?</p>`,
    );
    expect(html("- #224\n- > #225")).toBe(
      `<ul>\n<li>${trac("224")}</li>\n<li>\n<blockquote>\n<p>${trac("225")}</p>\n</blockquote>\n</li>\n</ul>`,
    );
  });

  it("lets earlier linkifiers win where matches overlap", () => {
    const sub = linkifier("#(?P<id>[0-9]+)-(?P<sub>[0-9]+)", "https://sub.example/{id}/{sub}");
    expect(html("see #12-34 and #56", [TRAC, sub])).toBe(`<p>see ${trac("12")}-34 and ${trac("56")}</p>`);
    expect(html("see #12-34 and #56", [sub, TRAC])).toBe(
      `<p>see <a href="https://sub.example/12/34">#12-34</a> and ${trac("56")}</p>`,
    );
  });

  it("fills the URL template (RFC 6570 encoding, case-insensitive patterns) and keeps URLs no link may have as text", () => {
    const path = linkifier("(?i)doc:(?P<path>[a-z/]+)", "https://docs.example/{path}{?q}");
    expect(html("read DOC:Api/Users", [path])).toBe(
      '<p>read <a href="https://docs.example/Api%2FUsers">DOC:Api/Users</a></p>',
    );
    const reserved = linkifier("doc:(?P<path>[a-z/]+)", "https://docs.example/{+path}");
    expect(html("read doc:api/users", [reserved])).toBe(
      '<p>read <a href="https://docs.example/api/users">doc:api/users</a></p>',
    );
    const script = linkifier("x-(?P<id>[0-9]+)", "javascript:alert({id})");
    expect(html("see x-1", [script])).toBe("<p>see x-1</p>");
    expect(render("see x-1", [script]).hasLink).toBe(false);
  });

  it("escapes link text and URLs", () => {
    const any = linkifier("!(?P<text>[^ ]+)", "https://e.example/?q={text}");
    expect(html('say !<b>"hi"</b>', [any])).toBe(
      '<p>say <a href="https://e.example/?q=%3Cb%3E%22hi%22%3C%2Fb%3E">!&lt;b&gt;"hi"&lt;/b&gt;</a></p>',
    );
  });
});
