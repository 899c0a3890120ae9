/**
 * @module markdown/quotes
 * Zulip's container fences and quote awareness. ```` ```quote ```` becomes a block
 * quote and ```` ```spoiler header ```` a collapsible spoiler, both with their
 * bodies parsed as Markdown. Inline parsing is then run knowing how deeply each
 * paragraph is quoted, because Zulip silences mentions inside quotes and shows
 * no image previews there.
 */
import type { StateCore, Token } from "markdown-it";
import { fenceLanguage } from "./code.js";
import { blockHtmlToken } from "./raw-html.js";
import { renderStateOf } from "./render-state.js";

/** Bound on nested container fences, so crafted input cannot recurse without limit. */
const MAX_FENCE_DEPTH = 10;

function parseBlocks(state: StateCore, src: string): Token[] {
  const tokens: Token[] = [];
  state.md.block.parse(src, state.md, state.env, tokens);
  return tokens;
}

function blockquoteToken(state: StateCore, nesting: 1 | -1): Token {
  const token = new state.Token(nesting === 1 ? "blockquote_open" : "blockquote_close", "blockquote", nesting);
  token.block = true;
  token.markup = ">";
  return token;
}

function expand(state: StateCore, tokens: Token[], depth: number): Token[] {
  const out: Token[] = [];
  for (const token of tokens) {
    const { lang, rest } = token.type === "fence" ? fenceLanguage(token.info) : { lang: "", rest: "" };
    const kind = lang.toLowerCase();
    if (depth >= MAX_FENCE_DEPTH || (kind !== "quote" && kind !== "quoted" && kind !== "spoiler")) {
      out.push(token);
      continue;
    }
    const body = expand(state, parseBlocks(state, token.content), depth + 1);
    if (kind === "spoiler") {
      const header = rest === "" ? [] : expand(state, parseBlocks(state, rest), depth + 1);
      out.push(
        blockHtmlToken(state.Token, '<div class="spoiler-block"><div class="spoiler-header">\n'),
        ...header,
        blockHtmlToken(state.Token, '</div><div class="spoiler-content" aria-hidden="true">\n'),
        ...body,
        blockHtmlToken(state.Token, "</div></div>\n"),
      );
    } else {
      out.push(blockquoteToken(state, 1), ...body, blockquoteToken(state, -1));
    }
  }
  return out;
}

/** Core rule (after "block"): replaces quote and spoiler fences by their parsed bodies. */
export function expandContainerFences(state: StateCore): void {
  if (!state.tokens.some((token) => token.type === "fence")) return;
  state.tokens = expand(state, state.tokens, 0);
}

/** Replacement for markdown-it's core "inline" rule that tracks block quote depth. */
export function quoteAwareInline(state: StateCore): void {
  const renderState = renderStateOf(state.env);
  renderState.quoteDepth = 0;
  for (const token of state.tokens) {
    if (token.type === "blockquote_open") renderState.quoteDepth++;
    else if (token.type === "blockquote_close") renderState.quoteDepth--;
    else if (token.type === "inline") {
      token.children ??= [];
      state.md.inline.parse(token.content, state.md, state.env, token.children);
    }
  }
  renderState.quoteDepth = 0;
}
