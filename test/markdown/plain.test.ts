import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { RenderContext, RenderUser } from "../../src/engine/render.js";
import { renderFullMarkdown, renderMarkdown } from "../../src/markdown/index.js";
import { renderPlainText, renderPlainTextWithMentions } from "../../src/markdown/plain.js";

const USERS: readonly RenderUser[] = [
  { id: 10, fullName: "Alice Smith", email: "alice@example.com" },
  { id: 11, fullName: "Bob", email: "bob1@example.com" },
  { id: 12, fullName: "Bob", email: "bob2@example.com" },
  { id: 13, fullName: "Zoë <Ops> & Co", email: "zoe@example.com" },
];
const context: RenderContext = {
  findUsersByName: (name) => USERS.filter((u) => u.fullName.toLowerCase() === name.toLowerCase()),
  findUserById: (id) => USERS.find((u) => u.id === id),
  findChannelByName: (name) => (name.toLowerCase() === "verona" ? { id: 4, name: "Verona" } : undefined),
  findGroupByName: () => undefined,
  realmUrl: "https://chat.example.com",
  findRealmEmoji: (name) => (name === "parrot" ? "/user_avatars/1/emoji/parrot.gif" : undefined),
};

/** Plain words, the separators the fast path accepts, and everything near its edges. */
const PIECES = [
  "hello",
  "Word",
  "x",
  "42",
  "2020",
  "7",
  "é",
  "ß",
  "中文",
  "Ωμέγα",
  "½",
  "٣",
  "ℹ",
  "Ⓜ",
  "™",
  "©",
  "😀",
  "👍🏽",
  "🇫🇷",
  "\uFE0F",
  "\u20E3",
  "\u0301",
  "\u200D",
  " ",
  " ",
  " ",
  "  ",
  "    ",
  "\n",
  "\n",
  "\n\n",
  "\n\n\n",
  "\t",
  "\r\n",
  "\r",
  ".",
  ".",
  "-",
  "-",
  "'",
  '"',
  "!",
  "?",
  ",",
  ";",
  "...",
  "--",
  "---",
  "1.",
  "1)",
  "3.14",
  ":",
  ":)",
  "<3",
  "*",
  "**",
  "_",
  "__",
  "~~",
  "`",
  "```",
  "#",
  "# ",
  "> ",
  "- ",
  "+ ",
  "|",
  "$$",
  "\\",
  "/me ",
  "/",
  "&",
  "<b>",
  "&amp;",
  "[",
  "]",
  "(",
  ")",
  "example.com",
  "www.zulip.org",
  "https://a.co",
  "a@b.co",
  "@**Alice Smith**",
  "@*team*",
  "#**Verona**",
  ":smile:",
  ":parrot:",
  "\0",
  "\uD800",
];
const piece = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...PIECES) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", minLength: 1, maxLength: 2 }) },
);
/** Mostly words with single spaces, so the fast path is taken often enough to be tested. */
const sentence = fc
  .array(
    fc.oneof(
      {
        weight: 3,
        arbitrary: fc.constantFrom("hello", "Word", "x", "42", "é", "中文", "it's", "ok,", "done.", "well-known"),
      },
      { weight: 1, arbitrary: piece },
    ),
    { maxLength: 12 },
  )
  .map((words) => words.join(" "));

describe("plain-text fast path", () => {
  it("is taken for ordinary chat lines, and its HTML is the full renderer's", () => {
    for (const text of [
      "Benchmark message with a quixotic word.",
      "sounds good, see you tomorrow!",
      'it\'s "fine"; really?\nyes',
      "first\n\nsecond line",
      "naïve café 中文 ok",
      "well-known 2020 results.",
    ]) {
      const fast = renderPlainText(text);
      expect(fast).not.toBeNull();
      expect(fast).toBe(renderFullMarkdown(text, context).html);
    }
  });

  it("refuses anything the full renderer could read as syntax", () => {
    for (const text of [
      "1. item",
      "example.com",
      "3.14",
      "- item",
      "a  b",
      " a",
      "a ",
      "a\n\n\nb",
      "x :)",
      "hi 😀",
      "ℹ",
      "1\uFE0F\u20E3",
      "a--b",
      "x\ty",
      "/me waves",
      "a\r\nb",
      "",
    ]) {
      expect(renderPlainText(text), text).toBeNull();
    }
  });

  it("renders exactly what the full renderer renders, for generated text", () => {
    let fastTaken = 0;
    fc.assert(
      fc.property(
        fc.oneof(
          sentence,
          fc.array(piece, { maxLength: 30 }).map((parts) => parts.join("")),
        ),
        (text) => {
          if (renderPlainText(text) !== null) fastTaken++;
          expect(renderMarkdown(text, context)).toEqual(renderFullMarkdown(text, context));
        },
      ),
      { numRuns: 3000 },
    );
    // The property above says little unless the fast path ran for a good share of inputs.
    expect(fastTaken).toBeGreaterThan(300);
  });
});

/** Mentions as typed: resolved, silent, by ID, wildcards, ambiguous, unknown, and `@` where no mention starts. */
const MENTIONS = [
  "@**Alice Smith**",
  "@**alice smith**",
  "@_**Alice Smith**",
  "@**Alice Smith|10**",
  "@_**Alice Smith|10**",
  "@**|10**",
  "@**Alice|10**",
  "@**Bob**",
  "@**Bob|12**",
  "@**Zoë <Ops> & Co**",
  "@**Nobody**",
  "@**all**",
  "@_**all**",
  "@**everyone**",
  "@**channel**",
  "@**topic**",
  "@_**topic**",
  "@*team*",
  "@**Alice\nSmith**",
  "@**Alice Smith***",
  "@**Alice Smith",
  "@**",
  "@",
  "@@**Alice Smith**",
];
const mention = fc.constantFrom(...MENTIONS);
/** Words, separators and mentions, joined with or without spaces (a mention next to a word or a `.`, too). */
const mentionText = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: mention },
      {
        weight: 4,
        arbitrary: fc.constantFrom("hello", "Word", "x", "42", "é", "it's", "ok,", "done.", "well-known", "1."),
      },
      { weight: 1, arbitrary: piece },
    ),
    { maxLength: 10 },
  )
  .chain((words) =>
    fc
      .array(fc.constantFrom(" ", " ", " ", " ", " ", "", "\n", "\n\n", "'", '"', "(", "."), {
        minLength: words.length,
        maxLength: words.length,
      })
      .map((gaps) => words.map((w, i) => (i === 0 ? w : gaps[i]! + w)).join("")),
  );

/** The mention rule's rendering, for calling the fast path directly (recording nothing). */
const mentionHtml = (body: string, silent: boolean) => {
  const full = renderFullMarkdown(`${silent ? "@_" : "@"}**${body}**`, context);
  return full.html.startsWith("<p><span") && full.html.endsWith("</span></p>") ? full.html.slice(3, -4) : null;
};

describe("plain-text fast path with mentions", () => {
  it("is taken for chat lines with user and wildcard mentions, with the full renderer's HTML and facts", () => {
    for (const text of [
      "Edit target 3 for @**Alice Smith|10** about snorgh.",
      "thanks @**Alice Smith**!",
      "@**Alice Smith** @_**Bob|11**, see you",
      "hi @**all**\n\n@**topic** done",
      "she said '@**Zoë <Ops> & Co**' so",
      "@**alice smith**'s idea",
    ]) {
      expect(renderPlainTextWithMentions(text, mentionHtml), text).not.toBeNull();
      expect(renderMarkdown(text, context)).toEqual(renderFullMarkdown(text, context));
    }
    const facts = renderMarkdown("ping @**Alice Smith**, @_**Bob|11** and @**all**", context);
    expect(facts.mentionedUserIds).toEqual([10]);
    expect(facts.wildcard).toBe("stream");
  });

  it("refuses a mention markdown-it would not take, or text around one that is not plain", () => {
    for (const text of [
      "hi @**Nobody**",
      "hi @**Bob**",
      "hi @**Alice|10**",
      "hi @*team*",
      "a@**Alice Smith**",
      "@@**Alice Smith**",
      "(@**Alice Smith**)",
      "@**Alice Smith**.com",
      "@**Alice Smith***",
      "@**Alice\nSmith**",
      "@**Alice Smith**  hi",
      "- @**Alice Smith**",
      "> @**Alice Smith**",
      "hi @",
    ]) {
      expect(renderPlainTextWithMentions(text, mentionHtml), text).toBeNull();
    }
  });

  it("renders exactly what the full renderer renders, for generated text with mentions", () => {
    let fastTaken = 0;
    fc.assert(
      fc.property(mentionText, (text) => {
        if (renderPlainTextWithMentions(text, mentionHtml) !== null && renderPlainText(text) === null) fastTaken++;
        expect(renderMarkdown(text, context)).toEqual(renderFullMarkdown(text, context));
      }),
      { numRuns: 3000 },
    );
    // Mentions make most generated texts non-plain: a twentieth of them still exercises the path well.
    expect(fastTaken).toBeGreaterThan(150);
  });
});
