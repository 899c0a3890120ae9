import { describe, expect, it } from "vitest";
import type { RenderContext } from "../../src/engine/render.js";
import { unicodeEmojiNames } from "../../src/emoji/unicode.js";
import { renderMarkdown } from "../../src/markdown/index.js";

const context: RenderContext = {
  findUsersByName: () => [],
  findUserById: () => undefined,
  findChannelByName: () => undefined,
  findGroupByName: () => undefined,
  realmUrl: "https://chat.example.com",
};

describe(":name: for every name in the table", () => {
  it("renders Zulip's span with the name's code point", () => {
    const names = [...unicodeEmojiNames()];
    // One message holds them all: a single render keeps the loop fast.
    const html = renderMarkdown(names.map(([name]) => `:${name}:`).join(" "), context).html;
    const spans = [...html.matchAll(/<span aria-label="([^"]*)" class="emoji emoji-([0-9a-f-]+)" role="img" title="([^"]*)">:([^:<]+):<\/span>/g)];
    expect(spans).toHaveLength(names.length);
    for (const [i, [name, code]] of names.entries()) {
      const span = spans[i]!;
      expect(span[4]).toBe(name.replaceAll("&", "&amp;"));
      expect(span[2]).toBe(code);
      expect(span[1]).toBe(name.replaceAll("_", " "));
      expect(span[3]).toBe(name.replaceAll("_", " "));
    }
  });

  it("leaves a name Zulip does not know as text", () => {
    expect(renderMarkdown(":slightly_smiling_face: :thumbsup:", context).html).toBe("<p>:slightly_smiling_face: :thumbsup:</p>");
  });
});
