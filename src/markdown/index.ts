/**
 * @module markdown
 * The default message renderer: Zulip-flavoured Markdown to safe HTML, built on
 * markdown-it with raw HTML disabled. Zulip's extensions live in the sibling
 * modules (mentions, channel links, emoji, code blocks, quote/spoiler fences,
 * link policy); this module wires them into one markdown-it instance and turns a
 * render into the facts the engine stores alongside the HTML.
 */
import MarkdownItClass from "markdown-it";
import type { MarkdownIt } from "markdown-it";
import type { MessageRenderer, RenderContext, RenderResult } from "../engine/render.js";
import { channelLinkRule } from "./channels.js";
import { renderFence, renderIndentedCode } from "./code.js";
import { emojiRule, unicodeEmojiCore } from "./emoji.js";
import { escapeText } from "./escape.js";
import { isAllowedUrl, processLinks } from "./links.js";
import { linkifierRule } from "./linkifiers.js";
import { mathInlineRule, renderMathInline } from "./math.js";
import { mentionRule, userMention } from "./mentions.js";
import { expandContainerFences, quoteAwareInline } from "./quotes.js";
import { installRawHtmlRenderers } from "./raw-html.js";
import { renderPlainText, renderPlainTextWithMentions } from "./plain.js";
import { createEnv, RenderState, type MarkdownOptions } from "./render-state.js";
import { installZulipRenderers, literalUnderscoreRule } from "./syntax.js";

export type { MarkdownOptions } from "./render-state.js";

function createMarkdownIt(): MarkdownIt {
  const md = new MarkdownItClass({ html: false, linkify: true, breaks: true, typographer: false });
  // Zulip has no setext headings, no reference-style links and no <url> autolinks
  // (a bare URL is linkified instead); raw HTML rules go too, belt and braces.
  md.disable(["lheading", "reference", "autolink", "html_block", "html_inline"]);
  md.validateLink = isAllowedUrl;
  // Zulip links bare domains (example.com, www.zulip.com/foo) too, not only URLs with a scheme.
  md.linkify.set({ fuzzyLink: true });

  md.core.ruler.after("block", "zulip_container_fences", expandContainerFences);
  md.core.ruler.at("inline", quoteAwareInline);
  md.core.ruler.after("linkify", "zulip_links", processLinks);
  md.core.ruler.before("zulip_links", "zulip_linkifiers", linkifierRule);
  // Last, on the finished text tokens: emoji typed as themselves (markdown-it's text
  // rule swallows them whole, so no inline rule ever starts on one).
  md.core.ruler.push("zulip_unicode_emoji", unicodeEmojiCore);

  // Before "linkify"/"emphasis" so `@**x**`, `#**x**` and `:x:` are claimed first;
  // emoji after "linkify" so `https://` is still seen as a URL.
  md.inline.ruler.before("linkify", "zulip_mention", mentionRule);
  md.inline.ruler.before("linkify", "zulip_channel_link", channelLinkRule);
  md.inline.ruler.after("linkify", "zulip_emoji", emojiRule);
  md.inline.ruler.before("emphasis", "zulip_literal_underscore", literalUnderscoreRule);
  // Before "escape" and "emphasis": TeX's `\` and `_` belong to the formula.
  md.inline.ruler.before("escape", "zulip_math", mathInlineRule);

  boundLinkLabelNesting(md);

  md.renderer.rules.fence = renderFence;
  md.renderer.rules.code_block = renderIndentedCode;
  md.renderer.rules["zulip_math_inline"] = renderMathInline;
  installZulipRenderers(md);
  installRawHtmlRenderers(md);
  return md;
}

/**
 * How deeply inline rules may nest while a link label is scanned. markdown-it's
 * parseLinkLabel looks for the closing `]` through skipToken, which at every `[` tries
 * the link rule again, nesting up to options.maxNesting (100) before giving up to the
 * end of the text; each later `[` then walks up to 100 cached positions. 10,000
 * characters of unmatched `[` (or `[a`, `![`, `*[`) took 40-60 ms. At 20 levels (the
 * commonmark preset's limit) the walks are five times shorter; links nested deeper
 * than that stay text. Block nesting keeps maxNesting.
 */
const MAX_INLINE_SKIP_NESTING = 20;

function boundLinkLabelNesting(md: MarkdownIt): void {
  const inline = md.inline;
  const skipToken = inline.skipToken.bind(inline);
  inline.skipToken = (state) => {
    const pos = state.pos;
    if (state.level >= MAX_INLINE_SKIP_NESTING && state.cache[pos] === undefined) {
      // What markdown-it does at maxNesting: skip to the end, and remember it.
      state.pos = state.posMax;
      state.cache[pos] = state.pos;
      return;
    }
    skipToken(state);
  };
}

const md = createMarkdownIt();

/** Zulip's /me check: the raw content starts with "/me ". */
function isMeMessage(content: string): boolean {
  return content.startsWith("/me ");
}

/** Last resort if a rule throws on pathological input: escaped text, no facts. */
function plainTextResult(content: string): RenderResult {
  const html = content.trim() === "" ? "" : `<p>${escapeText(content).replace(/\r?\n/g, "<br>\n")}</p>`;
  return {
    html,
    mentionedUserIds: [],
    mentionedGroupIds: [],
    wildcard: null,
    hasLink: false,
    hasImage: false,
    hasAttachment: false,
    uploadPathIds: [],
    isMeMessage: isMeMessage(content),
  };
}

/** Plain text (no syntax at all): the same HTML as the full renderer, and no facts to report. */
function plainResult(html: string): RenderResult {
  return {
    html,
    mentionedUserIds: [],
    mentionedGroupIds: [],
    wildcard: null,
    hasLink: false,
    hasImage: false,
    hasAttachment: false,
    uploadPathIds: [],
    isMeMessage: false,
  };
}

/**
 * A renderer with these options. The server passes `externalImageUrl` (signed
 * /external_content/ paths under its camo key); the markdown code never reads the
 * configuration itself.
 */
export function createMarkdownRenderer(options: MarkdownOptions = {}): MessageRenderer {
  return (content, context) => {
    // Linkifiers can match plain words: a realm with any gets the full renderer.
    if ((context.linkifiers?.length ?? 0) > 0) return renderFull(content, context, options);
    const plain = renderPlainText(content);
    if (plain !== null) return plainResult(plain);
    return (
      (content.includes("@") ? withMentions(content, context, options) : null) ?? renderFull(content, context, options)
    );
  };
}

/**
 * Plain text with user mentions (plain.ts): the mentions' HTML and facts are the mention
 * rule's own (userMention); a line markdown-it could read otherwise answers null. An
 * edit or send of "thanks @**Alice**" then skips markdown-it, ~0.15 ms of a ~2 ms edit.
 */
function withMentions(content: string, context: RenderContext, options: MarkdownOptions): RenderResult | null {
  const state = new RenderState(context, options);
  let html: string | null;
  try {
    html = renderPlainTextWithMentions(content, (body, silent) => {
      const mention = userMention(body, silent, 0, context);
      mention?.record(state);
      return mention?.html ?? null;
    });
  } catch {
    // A failing lookup: renderFull meets it again and stores the text with the failure.
    return null;
  }
  if (html === null) return null;
  return { ...plainResult(html), mentionedUserIds: [...state.mentionedUserIds], wildcard: state.wildcard };
}

/** The renderer without options: external images are linked directly (embedders, tests). */
export const renderMarkdown: MessageRenderer = createMarkdownRenderer();

/** markdown-it with every Zulip rule: what renderMarkdown does for anything not plain text. */
export const renderFullMarkdown: MessageRenderer = (content, context) => renderFull(content, context, {});

function renderFull(content: string, context: RenderContext, options: MarkdownOptions): RenderResult {
  try {
    const state = new RenderState(context, options);
    // Zulip's stored HTML has no trailing newline after the last block.
    const html = md.render(content, createEnv(state)).replace(/\n+$/, "");
    return {
      html,
      mentionedUserIds: [...state.mentionedUserIds],
      mentionedGroupIds: [...state.mentionedGroupIds],
      wildcard: state.wildcard,
      hasLink: state.hasLink,
      hasImage: state.hasImage,
      hasAttachment: state.hasAttachment,
      uploadPathIds: [...state.uploadPathIds],
      isMeMessage: isMeMessage(content),
    };
  } catch (error) {
    // Never lose the message to a renderer bug: store it as text and say why.
    const failure =
      error instanceof Error
        ? `${error.name}: ${error.message}${error.stack ? ` ${error.stack.split("\n")[1]?.trim() ?? ""}` : ""}`
        : String(error);
    return { ...plainTextResult(content), failure };
  }
}
