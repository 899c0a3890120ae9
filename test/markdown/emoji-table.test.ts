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
    const spans = [
      ...html.matchAll(
        /<span aria-label="([^"]*)" class="emoji emoji-([0-9a-f-]+)" role="img" title="([^"]*)">:([^:<]+):<\/span>/g,
      ),
    ];
    // Every name is a Markdown name: nothing in the table needs characters `:name:` cannot match.
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
    expect(renderMarkdown(":slightly_smiling_face: :thumbsup:", context).html).toBe(
      "<p>:slightly_smiling_face: :thumbsup:</p>",
    );
  });
});

describe("Zulip's extra emoji and custom emoji", () => {
  it("renders :zulip: as Zulip's image", () => {
    expect(renderMarkdown(":zulip:", context).html).toBe(
      '<p><img alt=":zulip:" class="emoji" src="/static/generated/emoji/images/emoji/unicode/zulip.png" title="zulip"></p>',
    );
  });

  it("renders a realm's custom emoji as its image, ahead of a unicode emoji of the same name", () => {
    const withCustom: RenderContext = {
      ...context,
      findRealmEmoji: (name) =>
        name === "octopus" || name === "green_tick" ? `/user_avatars/2/emoji/images/${name}.png` : undefined,
    };
    expect(renderMarkdown(":green_tick: :octopus: :tada:", withCustom).html).toBe(
      '<p><img alt=":green_tick:" class="emoji" src="/user_avatars/2/emoji/images/green_tick.png" title="green tick"> ' +
        '<img alt=":octopus:" class="emoji" src="/user_avatars/2/emoji/images/octopus.png" title="octopus"> ' +
        '<span aria-label="tada" class="emoji emoji-1f389" role="img" title="tada">:tada:</span></p>',
    );
  });
});

describe("unicode emoji typed as themselves", () => {
  const span = (name: string, code: string) =>
    `<span aria-label="${name.replaceAll("_", " ")}" class="emoji emoji-${code}" role="img" title="${name.replaceAll("_", " ")}">:${name}:</span>`;

  it("become the span of their canonical name", () => {
    expect(renderMarkdown("hi 🙂 there 😄🐙", context).html).toBe(
      `<p>hi ${span("slight_smile", "1f642")} there ${span("smile", "1f604")}${span("octopus", "1f419")}</p>`,
    );
  });

  it("drop U+FE0F, and keep ZWJ sequences, flags and keycaps whole", () => {
    expect(renderMarkdown("❤️ 🏳️‍🌈 🇹🇷 #️⃣", context).html).toBe(
      `<p>${span("heart", "2764")} ${span("rainbow_flag", "1f3f3-200d-1f308")} ${span("flag_türkiye", "1f1f9-1f1f7")} ${span("hash", "0023-20e3")}</p>`,
    );
  });

  it("leave lone text-presentation characters and code alone", () => {
    expect(renderMarkdown("© ↔ 5 ❤ `🙂`", context).html).toBe("<p>© ↔ 5 ❤ <code>🙂</code></p>");
  });

  it("skin-tone variants Zulip does not name stay text", () => {
    expect(renderMarkdown("👍🏽", context).html).toBe("<p>👍🏽</p>");
  });
});
