import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { RenderChannel, RenderContext, RenderGroup, RenderResult, RenderUser } from "../../src/engine/render.js";
import { renderMarkdown } from "../../src/markdown/index.js";
import { encodeHashComponent } from "../../src/engine/index.js";

const USERS: readonly RenderUser[] = [
  { id: 10, fullName: "Alice Smith", email: "alice@example.com" },
  { id: 11, fullName: "Bob", email: "bob1@example.com" },
  { id: 12, fullName: "Bob", email: "bob2@example.com" },
  { id: 13, fullName: "<b>Eve</b> & co", email: "eve@example.com" },
];
const CHANNELS: readonly RenderChannel[] = [
  { id: 3, name: "general chat" },
  { id: 4, name: "Verona" },
  { id: 5, name: "<script>x</script>" },
];
const GROUPS: readonly RenderGroup[] = [{ id: 20, name: "support team" }];

function fakeContext(realmUrl = "https://chat.example.com"): RenderContext {
  const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();
  return {
    findUsersByName: (name) => USERS.filter((u) => same(u.fullName, name)),
    findUserById: (id) => USERS.find((u) => u.id === id),
    findChannelByName: (name) => CHANNELS.find((c) => same(c.name, name)),
    findGroupByName: (name) => GROUPS.find((g) => same(g.name, name)),
    findUpload: (pathId) =>
      pathId === "2/ab/photo.webp"
        ? { contentType: "image/webp", width: 1920, height: 1080, animated: false }
        : undefined,
    realmUrl,
  };
}

function render(content: string): RenderResult {
  return renderMarkdown(content, fakeContext());
}

function html(content: string): string {
  return render(content).html;
}

const ALICE = '<span class="user-mention" data-user-id="10">@Alice Smith</span>';
const ALICE_SILENT = '<span class="user-mention silent" data-user-id="10">Alice Smith</span>';

describe("basic Markdown", () => {
  it("renders paragraphs, and nothing for empty input", () => {
    expect(html("hello")).toBe("<p>hello</p>");
    expect(html("one\n\ntwo")).toBe("<p>one</p>\n<p>two</p>");
    expect(render("")).toEqual({
      html: "",
      mentionedUserIds: [],
      mentionedGroupIds: [],
      wildcard: null,
      hasLink: false,
      hasImage: false,
      hasAttachment: false,
      uploadPathIds: [],
      isMeMessage: false,
    });
  });

  it("turns newlines inside a paragraph into <br>", () => {
    expect(html("test\nbar")).toBe("<p>test<br>\nbar</p>");
  });

  it("renders emphasis, strong and strikethrough as <del>", () => {
    expect(html("*em* **strong** ***both*** ~~gone~~")).toBe(
      "<p><em>em</em> <strong>strong</strong> <em><strong>both</strong></em> <del>gone</del></p>",
    );
  });

  it("never emphasises with underscores, as in Zulip", () => {
    expect(html("_foo_ __bar__ snake_case_name")).toBe("<p>_foo_ __bar__ snake_case_name</p>");
  });

  it("renders block quotes, lists and tables", () => {
    expect(html("> quoted")).toBe("<blockquote>\n<p>quoted</p>\n</blockquote>");
    expect(html("Some text:\n* One\n* Two")).toBe("<p>Some text:</p>\n<ul>\n<li>One</li>\n<li>Two</li>\n</ul>");
    expect(html("3. A\n4. B")).toBe('<ol start="3">\n<li>A</li>\n<li>B</li>\n</ol>');
    expect(html("| a | b |\n|---|---|\n| 1 | 2 |")).toBe(
      "<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n<td>2</td>\n</tr>\n</tbody>\n</table>",
    );
  });

  it("needs a space after # for headings and has no setext headings or reference links", () => {
    expect(html("# Hello world")).toBe("<h1>Hello world</h1>");
    expect(html("#Hello world")).toBe("<p>#Hello world</p>");
    expect(html("Title\n===")).toBe("<p>Title<br>\n===</p>");
    expect(html("Hello [world]\n\n[world]: https://google.com")).toBe(
      '<p>Hello [world]</p>\n<p>[world]: <a href="https://google.com">https://google.com</a></p>',
    );
  });

  it("escapes text like Zulip: & < > only", () => {
    expect(html(`it's "quoted" & <b>`)).toBe(`<p>it's "quoted" &amp; &lt;b&gt;</p>`);
    expect(html("& &amp; &amp;amp;")).toBe("<p>&amp; &amp; &amp;amp;</p>");
  });
});

describe("user mentions", () => {
  it("renders @**Full Name** and records the user", () => {
    const result = render("hi @**Alice Smith**!");
    expect(result.html).toBe(`<p>hi ${ALICE}!</p>`);
    expect(result.mentionedUserIds).toEqual([10]);
  });

  it("matches names case-insensitively but shows the real name", () => {
    expect(render("@**alice SMITH**").html).toBe(`<p>${ALICE}</p>`);
  });

  it("renders silent mentions without @ and does not record them", () => {
    const result = render("@_**Alice Smith**");
    expect(result.html).toBe(`<p>${ALICE_SILENT}</p>`);
    expect(result.mentionedUserIds).toEqual([]);
  });

  it("deduplicates repeated mentions", () => {
    expect(render("@**Alice Smith** @**Alice Smith|10** @**|10**").mentionedUserIds).toEqual([10]);
  });

  it("resolves @**Name|id** and @**|id** by id", () => {
    const result = render("@**Bob|12** and @**|11**");
    expect(result.html).toBe(
      '<p><span class="user-mention" data-user-id="12">@Bob</span> and <span class="user-mention" data-user-id="11">@Bob</span></p>',
    );
    expect(result.mentionedUserIds).toEqual([12, 11]);
  });

  it("rejects @**Name|id** when the id belongs to someone else", () => {
    const result = render("@**Bob|10**");
    expect(result.html).toBe("<p>@<strong>Bob|10</strong></p>");
    expect(result.mentionedUserIds).toEqual([]);
  });

  it("leaves ambiguous names unrendered (Zulip falls through to bold)", () => {
    const result = render("@**Bob**");
    expect(result.html).toBe("<p>@<strong>Bob</strong></p>");
    expect(result.mentionedUserIds).toEqual([]);
  });

  it("leaves unknown names and ids unrendered", () => {
    const result = render("@**Nobody Here** @**|999** @_**Ghost**");
    expect(result.html).toBe("<p>@<strong>Nobody Here</strong> @<strong>|999</strong> @_<strong>Ghost</strong></p>");
    expect(result.mentionedUserIds).toEqual([]);
  });

  it("only starts a mention after whitespace, punctuation that opens, or the start", () => {
    const result = render('foo@**Alice Smith** (@**Alice Smith**) "@**Alice Smith**"');
    expect(result.html).toBe(`<p>foo@<strong>Alice Smith</strong> (${ALICE}) "${ALICE}"</p>`);
  });

  it("does not render mentions in code spans or code blocks", () => {
    const result = render(
      "`@**Alice Smith**`\n\n```\n@**Alice Smith** @**all** #**Verona** :smile:\n```\n\n    @**Alice Smith**",
    );
    expect(result.html).toBe(
      "<p><code>@**Alice Smith**</code></p>\n" +
        '<div class="codehilite"><pre><span></span><code>@**Alice Smith** @**all** #**Verona** :smile:\n</code></pre></div>\n' +
        '<div class="codehilite"><pre><span></span><code>@**Alice Smith**\n</code></pre></div>',
    );
    expect(result.mentionedUserIds).toEqual([]);
    expect(result.wildcard).toBeNull();
  });

  it("silences mentions inside block quotes, as Zulip does", () => {
    const result = render("> @**Alice Smith** said @**all** and @*support team*\n\n@**Bob|11**");
    expect(result.html).toBe(
      `<blockquote>\n<p>${ALICE_SILENT} said ` +
        '<span class="user-mention channel-wildcard-mention silent" data-user-id="*">all</span> and ' +
        '<span class="user-group-mention silent" data-user-group-id="20">support team</span></p>\n</blockquote>\n' +
        '<p><span class="user-mention" data-user-id="11">@Bob</span></p>',
    );
    expect(result.mentionedUserIds).toEqual([11]);
    expect(result.mentionedGroupIds).toEqual([]);
    expect(result.wildcard).toBeNull();
  });

  it("escapes names that contain HTML", () => {
    expect(html("@**<b>Eve</b> & co**")).toBe(
      '<p><span class="user-mention" data-user-id="13">@&lt;b&gt;Eve&lt;/b&gt; &amp; co</span></p>',
    );
  });
});

describe("wildcard mentions", () => {
  it.each(["all", "everyone", "channel", "stream"])("@**%s** is a channel wildcard", (word) => {
    const result = render(`@**${word}**`);
    expect(result.html).toBe(
      `<p><span class="user-mention channel-wildcard-mention" data-user-id="*">@${word}</span></p>`,
    );
    expect(result.wildcard).toBe("stream");
    expect(result.mentionedUserIds).toEqual([]);
  });

  it("@**topic** is a topic wildcard", () => {
    const result = render("@**topic**");
    expect(result.html).toBe('<p><span class="topic-mention">@topic</span></p>');
    expect(result.wildcard).toBe("topic");
  });

  it("silent wildcards render but do not notify", () => {
    const result = render("@_**all** @_**topic**");
    expect(result.html).toBe(
      '<p><span class="user-mention channel-wildcard-mention silent" data-user-id="*">all</span> ' +
        '<span class="topic-mention silent">topic</span></p>',
    );
    expect(result.wildcard).toBeNull();
  });

  it("a channel wildcard outranks a topic wildcard", () => {
    expect(render("@**topic** @**everyone**").wildcard).toBe("stream");
  });
});

describe("user group mentions", () => {
  it("renders @*group* and records the group", () => {
    const result = render("ping @*Support Team*");
    expect(result.html).toBe(
      '<p>ping <span class="user-group-mention" data-user-group-id="20">@support team</span></p>',
    );
    expect(result.mentionedGroupIds).toEqual([20]);
  });

  it("renders silent group mentions without recording them", () => {
    const result = render("@_*support team*");
    expect(result.html).toBe(
      '<p><span class="user-group-mention silent" data-user-group-id="20">support team</span></p>',
    );
    expect(result.mentionedGroupIds).toEqual([]);
  });

  it("leaves unknown groups as emphasis, like Zulip", () => {
    const result = render("@*no such group*");
    expect(result.html).toBe("<p>@<em>no such group</em></p>");
    expect(result.mentionedGroupIds).toEqual([]);
  });
});

describe("channel and topic links", () => {
  it("links #**channel**", () => {
    expect(html("see #**general chat**")).toBe(
      '<p>see <a class="stream" data-stream-id="3" href="/#narrow/channel/3-general-chat">#general chat</a></p>',
    );
  });

  it("links #**channel>topic** with Zulip's hash encoding", () => {
    expect(html("#**Verona>my topic (v1.0) 100%**")).toBe(
      '<p><a class="stream-topic" data-stream-id="4" href="/#narrow/channel/4-Verona/topic/my.20topic.20.28v1.2E0.29.20100.25">' +
        "#Verona &gt; my topic (v1.0) 100%</a></p>",
    );
  });

  it("links #**channel>topic@id** to a message", () => {
    expect(html("#**Verona>lunch@42**")).toBe(
      '<p><a class="message-link" href="/#narrow/channel/4-Verona/topic/lunch/near/42">#Verona &gt; lunch @ 💬</a></p>',
    );
  });

  it("leaves unknown channels unlinked", () => {
    const result = render("#**secret** #**secret>topic**");
    expect(result.html).toBe("<p>#<strong>secret</strong> #<strong>secret&gt;topic</strong></p>");
    expect(result.hasLink).toBe(false);
  });

  it("escapes channel names", () => {
    expect(html("#**<script>x</script>**")).toBe(
      '<p><a class="stream" data-stream-id="5" href="/#narrow/channel/5-.3Cscript.3Ex.3C.2Fscript.3E">#&lt;script&gt;x&lt;/script&gt;</a></p>',
    );
  });

  it("encodes hash components exactly like Zulip", () => {
    expect(encodeHashComponent("foo bar")).toBe("foo.20bar");
    expect(encodeHashComponent("a.b%c(d)e*f~g_h-i")).toBe("a.2Eb.25c.28d.29e*f~g_h-i");
    expect(encodeHashComponent("x!y'z")).toBe("x.21y.27z");
    expect(encodeHashComponent("café")).toBe("caf.C3.A9");
    expect(encodeHashComponent("\uD800")).toBe(".EF.BF.BD");
  });
});

describe("emoji", () => {
  it("renders known :name: codes with Zulip's code points", () => {
    expect(html(":smile: :+1: :thumbs_up: :heart: :tada: :octopus:")).toBe(
      "<p>" +
        [
          ["smile", "1f604"],
          ["+1", "1f44d"],
          ["thumbs_up", "1f44d"],
          ["heart", "2764"],
          ["tada", "1f389"],
          ["octopus", "1f419"],
        ]
          .map(
            ([name, cp]) =>
              `<span aria-label="${name?.replaceAll("_", " ")}" class="emoji emoji-${cp}" role="img" title="${name?.replaceAll("_", " ")}">:${name}:</span>`,
          )
          .join(" ") +
        "</p>",
    );
  });

  it("renders emoji next to words and each other", () => {
    expect(html(":cat:hello:dog:")).toBe(
      '<p><span aria-label="cat" class="emoji emoji-1f408" role="img" title="cat">:cat:</span>hello' +
        '<span aria-label="dog" class="emoji emoji-1f415" role="img" title="dog">:dog:</span></p>',
    );
  });

  it("leaves unknown names and malformed codes literal", () => {
    expect(html(":not_an_emoji: x::y:: :wasted waste:")).toBe("<p>:not_an_emoji: x::y:: :wasted waste:</p>");
  });

  it("does not render emoji in inline code", () => {
    expect(html("`:smile:`")).toBe("<p><code>:smile:</code></p>");
  });

  it("turns Unicode emoji characters into Zulip's span, as Zulip's UnicodeEmoji pattern does", () => {
    expect(html("🐙")).toBe(
      '<p><span aria-label="octopus" class="emoji emoji-1f419" role="img" title="octopus">:octopus:</span></p>',
    );
  });
});

describe("code", () => {
  it("renders fenced code with the language's display name", () => {
    expect(html("```python\ndef f():\n    return \"<x>\" & 'y'\n```")).toBe(
      '<div class="codehilite" data-code-language="Python"><pre><span></span><code>def f():\n' +
        "    return &quot;&lt;x&gt;&quot; &amp; &#39;y&#39;\n</code></pre></div>",
    );
  });

  it("keeps unknown languages as written and omits the attribute without one", () => {
    expect(html("``` inventedlanguage\nx = 1\n```")).toBe(
      '<div class="codehilite" data-code-language="inventedlanguage"><pre><span></span><code>x = 1\n</code></pre></div>',
    );
    expect(html("~~~\nplain\n~~~")).toBe('<div class="codehilite"><pre><span></span><code>plain\n</code></pre></div>');
  });

  it("escapes a hostile language tag", () => {
    expect(html('```"><script>\nx\n```')).toBe(
      '<div class="codehilite" data-code-language="&quot;&gt;&lt;script&gt;"><pre><span></span><code>x\n</code></pre></div>',
    );
  });

  it("strips trailing whitespace and surrounding blank lines like Pygments", () => {
    expect(html("Hamlet said:\n~~~~\n\ndef f():   \n    x = 1\t\n\n~~~~\nDone.")).toBe(
      "<p>Hamlet said:</p>\n" +
        '<div class="codehilite"><pre><span></span><code>def f():\n    x = 1\n</code></pre></div>\n' +
        "<p>Done.</p>",
    );
  });

  it("renders four-space-indented code the same way", () => {
    expect(html("    def foo(): pass")).toBe(
      '<div class="codehilite"><pre><span></span><code>def foo(): pass\n</code></pre></div>',
    );
  });

  it("renders inline code escaped", () => {
    expect(html("`<&nbsp;>` and ``a `b` c``")).toBe("<p><code>&lt;&amp;nbsp;&gt;</code> and <code>a `b` c</code></p>");
  });
});

describe("quote and spoiler fences", () => {
  it("renders ```quote as a block quote with Markdown inside and silenced mentions", () => {
    const result = render("```quote\nTo be or **not**, @**Alice Smith**\n```");
    expect(result.html).toBe(`<blockquote>\n<p>To be or <strong>not</strong>, ${ALICE_SILENT}</p>\n</blockquote>`);
    expect(result.mentionedUserIds).toEqual([]);
  });

  it("renders ```spoiler with a header", () => {
    expect(html("```spoiler Header :smile:\ncontent\n```\noutside")).toBe(
      '<div class="spoiler-block"><div class="spoiler-header">\n' +
        '<p>Header <span aria-label="smile" class="emoji emoji-1f604" role="img" title="smile">:smile:</span></p>\n' +
        '</div><div class="spoiler-content" aria-hidden="true">\n<p>content</p>\n</div></div>\n<p>outside</p>',
    );
  });
});

describe("/me messages", () => {
  it("flags /me at the start and renders it as text", () => {
    const result = render("/me is away");
    expect(result.isMeMessage).toBe(true);
    expect(result.html).toBe("<p>/me is away</p>");
  });

  it("does not flag /me elsewhere or without a space", () => {
    expect(render("hi /me is away").isMeMessage).toBe(false);
    expect(render("/meow").isMeMessage).toBe(false);
  });
});

describe("links", () => {
  it("renders Markdown links and records hasLink", () => {
    const result = render("[hello](https://github.com)");
    expect(result.html).toBe('<p><a href="https://github.com">hello</a></p>');
    expect(result.hasLink).toBe(true);
    expect(result.hasImage).toBe(false);
    expect(result.hasAttachment).toBe(false);
  });

  it("linkifies bare URLs, domains and e-mail addresses", () => {
    const result = render("see https://zulip.com/api. or www.zulip.com/foo, example.com and a@b.com");
    expect(result.html).toBe(
      '<p>see <a href="https://zulip.com/api">https://zulip.com/api</a>. or ' +
        '<a href="http://www.zulip.com/foo">www.zulip.com/foo</a>, ' +
        '<a href="http://example.com">example.com</a> and <a href="mailto:a@b.com">a@b.com</a></p>',
    );
    expect(result.hasLink).toBe(true);
  });

  it("does not linkify file names", () => {
    const result = render("edit readme.md and views.py");
    expect(result.html).toBe("<p>edit readme.md and views.py</p>");
    expect(result.hasLink).toBe(false);
  });

  it("uses the URL as the label of an empty link and drops titles", () => {
    expect(html('[](https://github.com) [  ](https://github.com) [t](https://a.com "title")')).toBe(
      '<p><a href="https://github.com">https://github.com</a> <a href="https://github.com">https://github.com</a> ' +
        '<a href="https://a.com">t</a></p>',
    );
  });

  it("makes links into the realm relative", () => {
    expect(html("[foo](https://chat.example.com/#narrow/channel/1-Denmark)")).toBe(
      '<p><a href="#narrow/channel/1-Denmark">foo</a></p>',
    );
  });

  it("records uploads as attachments", () => {
    const result = render("[report.pdf](/user_uploads/2/ab/cdef/report.pdf)");
    expect(result.html).toBe('<p><a href="/user_uploads/2/ab/cdef/report.pdf">report.pdf</a></p>');
    expect(result).toMatchObject({
      hasLink: true,
      hasAttachment: true,
      hasImage: false,
      uploadPathIds: ["2/ab/cdef/report.pdf"],
    });
    expect(render("https://chat.example.com/user_uploads/2/ab/x.txt").hasAttachment).toBe(true);
    // Links are percent-encoded in the HTML; the path_id the engine claims is decoded.
    expect(render("[été](/user_uploads/2/ab/cdef/été.txt)").uploadPathIds).toEqual(["2/ab/cdef/été.txt"]);
    expect(render("https://elsewhere.example/user_uploads/2/ab/x.txt").hasAttachment).toBe(false);
  });
});

describe("images", () => {
  const preview = (url: string, title = ""): string =>
    `<div class="message_inline_image"><a href="${url}"${title === "" ? "" : ` title="${title}"`}><img src="${url}"></a></div>`;

  it("previews an image URL after its paragraph", () => {
    const url = "https://www.google.com/images/srpr/logo4w.png";
    const result = render(`Google logo today: ${url}\nKinda boring`);
    expect(result.html).toBe(
      `<p>Google logo today: <a href="${url}">${url}</a><br>\nKinda boring</p>\n${preview(url)}`,
    );
    expect(result).toMatchObject({ hasLink: true, hasImage: true, hasAttachment: false });
  });

  it("replaces a paragraph that is only an image URL by the preview", () => {
    expect(html("https://example.com/cat.JPG")).toBe(preview("https://example.com/cat.JPG"));
  });

  it("titles the preview of a named link and previews each image once", () => {
    const url = "https://example.com/a.png?size=2";
    expect(html(`[A picture](${url}) and again ${url}`)).toBe(
      `<p><a href="${url}">A picture</a> and again <a href="${url}">${url}</a></p>\n${preview(url, "A picture")}`,
    );
  });

  it("turns Markdown image syntax into a link plus preview, never an inline <img>", () => {
    const result = render("![a cat](https://example.com/cat)");
    expect(result.html).toBe(
      `<p><a href="https://example.com/cat">a cat</a></p>\n${preview("https://example.com/cat", "a cat")}`,
    );
    expect(result.hasImage).toBe(true);
  });

  it("previews inside list items", () => {
    const url = "https://example.com/x.gif";
    expect(html(`* one\n* two ${url}\n* three`)).toBe(
      `<ul>\n<li>one</li>\n<li>two <a href="${url}">${url}</a>${preview(url)}</li>\n<li>three</li>\n</ul>`,
    );
  });

  it("does not preview inside block quotes but still records the image", () => {
    const url = "https://example.com/x.png";
    const result = render(`> ${url}`);
    expect(result.html).toBe(`<blockquote>\n<p><a href="${url}">${url}</a></p>\n</blockquote>`);
    expect(result.hasImage).toBe(true);
  });

  it("previews uploaded images through their thumbnail, with Zulip's markup", () => {
    const url = "/user_uploads/2/ab/photo.webp";
    const result = render(`[photo](${url})`);
    expect(result.html).toBe(
      `<p><a href="${url}">photo</a></p>\n<div class="message_inline_image"><a href="${url}" title="photo"><img data-original-content-type="image/webp" data-original-dimensions="1920x1080" src="/user_uploads/thumbnail/2/ab/photo.webp/840x560.webp"></a></div>`,
    );
    expect(result).toMatchObject({ hasLink: true, hasImage: true, hasAttachment: true });
  });

  it("does not preview an upload the renderer does not know as an image (missing, foreign, unreadable)", () => {
    const url = "/user_uploads/2/ab/other.png";
    const result = render(`[other](${url})`);
    expect(result.html).toBe(`<p><a href="${url}">other</a></p>`);
    expect(result).toMatchObject({ hasImage: false, hasAttachment: true });
  });
});

describe("XSS", () => {
  it("escapes raw HTML", () => {
    expect(html("<script>alert(1)</script>")).toBe("<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>");
    expect(html('<img src=x onerror="alert(1)">')).toBe('<p>&lt;img src=x onerror="alert(1)"&gt;</p>');
    expect(html("<div>\n<script>alert(1)</script>\n</div>")).toBe(
      "<p>&lt;div&gt;<br>\n&lt;script&gt;alert(1)&lt;/script&gt;<br>\n&lt;/div&gt;</p>",
    );
    expect(html("<<script>script>evil()<</script>/script>")).toBe(
      "<p>&lt;&lt;script&gt;script&gt;evil()&lt;&lt;/script&gt;/script&gt;</p>",
    );
  });

  it.each([
    "[x](javascript:alert(1))",
    "[x](JAVASCRIPT:alert(1))",
    "[x](&#106;avascript:alert(1))",
    "[x](vbscript:msgbox(1))",
    "[x](data:text/html;base64,PHNjcmlwdD4=)",
    "![x](javascript:alert(1))",
    "![x](data:image/png;base64,AAAA)",
    "<javascript:alert(1)>",
    "javascript:alert(1)",
    "[x](ftp://example.com/file)",
    "[x](//evil.example/path)",
  ])("never turns %s into a link", (input) => {
    const result = render(input);
    expect(result.html).not.toMatch(/<a |<img/);
    expect(result.hasLink).toBe(false);
  });

  it("keeps a rejected link as its literal text", () => {
    expect(html("[x](javascript:alert(1))")).toBe("<p>[x](javascript:alert(1))</p>");
  });

  it("cannot break out of an href", () => {
    expect(html('[x](https://a.com/"onmouseover=alert(1))')).toBe(
      '<p><a href="https://a.com/%22onmouseover=alert(1)">x</a></p>',
    );
    expect(html("https://a.com/'onmouseover=alert(1)")).toBe(
      "<p><a href=\"https://a.com/'onmouseover=alert(1)\">https://a.com/'onmouseover=alert(1)</a></p>",
    );
  });

  it("escapes topic names in topic links", () => {
    expect(html('#**Verona>"><img src=x onerror=alert(1)>**')).toBe(
      '<p><a class="stream-topic" data-stream-id="4" href="/#narrow/channel/4-Verona/topic/.22.3E.3Cimg.20src.3Dx.20onerror.3Dalert.281.29.3E">' +
        '#Verona &gt; "&gt;&lt;img src=x onerror=alert(1)&gt;</a></p>',
    );
  });

  it("only ever emits known tags and attributes, with safe URLs, for arbitrary input", () => {
    const pieces = [
      "<script>",
      "</script>",
      "<img src=x onerror=alert(1)>",
      "javascript:",
      "[",
      "](",
      ")",
      "![",
      "**",
      "@",
      "#",
      ":",
      "`",
      "```",
      "\n",
      "> ",
      "* ",
      "_",
      "~~",
      "<",
      ">",
      '"',
      "'",
      "&",
      "smile",
      "Alice Smith",
      "all",
      "Verona",
      "quote",
      "spoiler",
      "https://x.com/a.png",
      "/user_uploads/1/a.png",
      "data:",
      "|",
      "\0",
      " ",
      "-",
      "1. ",
    ];
    const tag = /<\/?([a-z][a-z0-9]*)((?:\s+[a-z-]+="[^"<>]*")*)>/g;
    const attribute = /\s+([a-z-]+)="([^"]*)"/g;
    const allowedTags = new Set(
      "p br a span div img code pre strong em del blockquote ul ol li h1 h2 h3 h4 h5 h6 hr table thead tbody tr th td".split(
        " ",
      ),
    );
    const allowedAttributes = new Set(
      "class href src title role start style aria-label aria-hidden data-user-id data-user-group-id data-stream-id data-code-language data-original-content-type data-original-dimensions data-animated".split(
        " ",
      ),
    );
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 40 }), (parts) => {
        const out = render(parts.join("")).html;
        for (const [, name = "", attrs = ""] of out.matchAll(tag)) {
          expect(allowedTags).toContain(name);
          for (const [, attr = "", value = ""] of attrs.matchAll(attribute)) {
            expect(allowedAttributes).toContain(attr);
            if (attr === "href" || attr === "src") expect(value).toMatch(/^(?:https?:|mailto:|\/user_uploads\/|\/?#)/);
            if (attr === "style") expect(value).toMatch(/^text-align:(?:left|right|center)$/);
          }
        }
        // Every "<" left over belongs to no tag at all, i.e. it was escaped.
        expect(out.replace(tag, "")).not.toContain("<");
      }),
      { numRuns: 400 },
    );
  });
});

describe("robustness", () => {
  const pathological: Record<string, string> = {
    "null bytes": "\0".repeat(10_000),
    "unclosed mentions": "@**".repeat(3_333),
    "unclosed group mentions": "@*".repeat(5_000),
    "unclosed channel links": "#**a>".repeat(2_000),
    colons: ":a".repeat(5_000),
    brackets: "[".repeat(10_000),
    "unclosed links": "[a](".repeat(2_500),
    "deep quotes": ">".repeat(10_000),
    "nested quote fences": "```quote\n".repeat(1_111),
    "nested lists": "- ".repeat(5_000),
    backticks: "`".repeat(10_000),
    "trailing spaces in code": "```\n" + " ".repeat(9_980) + "x\n```",
    "lone surrogates": "\uD800#**Verona>\uDC00**".repeat(500),
    "many urls": "http://a.co/x.png ".repeat(500),
  };

  it.each(Object.entries(pathological))("renders %s quickly without throwing", (_name, input) => {
    expect(input.length).toBeLessThanOrEqual(10_000);
    const started = performance.now();
    const result = render(input);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(typeof result.html).toBe("string");
  });

  it("keeps every bracket of an unmatched flood as text, and a link after one", () => {
    // Link labels are scanned with a bounded inline nesting (src/markdown/index.ts).
    const flood = "[".repeat(10_000);
    expect(html(flood)).toBe(`<p>${flood}</p>`);
    const after = html(`${"[".repeat(3_000)}[a](https://x.example)`);
    expect(after).toBe(`<p>${"[".repeat(3_000)}<a href="https://x.example">a</a></p>`);
    expect(html(`*a [b _c [d](https://e.example) g_ h* i`)).toBe(
      '<p><em>a [b _c <a href="https://e.example">d</a> g_ h</em> i</p>',
    );
  });

  it("replaces null bytes with U+FFFD", () => {
    expect(html("a\0b")).toBe("<p>a\uFFFDb</p>");
  });

  it("does not throw for arbitrary strings", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 300 }), (input) => {
        expect(typeof render(input).html).toBe("string");
      }),
      { numRuns: 500 },
    );
  });

  it("falls back to escaped text if a lookup throws", () => {
    const broken: RenderContext = {
      ...fakeContext(),
      findUsersByName: () => {
        throw new Error("database down");
      },
    };
    expect(renderMarkdown("hi @**Alice Smith** <b>", broken)).toEqual({
      html: "<p>hi @**Alice Smith** &lt;b&gt;</p>",
      mentionedUserIds: [],
      mentionedGroupIds: [],
      wildcard: null,
      hasLink: false,
      hasImage: false,
      hasAttachment: false,
      uploadPathIds: [],
      isMeMessage: false,
      failure: expect.stringContaining("Error: database down") as unknown as string,
    });
  });
});
