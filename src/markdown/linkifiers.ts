/**
 * @module markdown/linkifiers
 * The realm's linkifiers over a message's text, as Zulip's LinkifierPattern runs them:
 * after code, links, bare URLs, mentions and escapes have taken their text (those are
 * tokens of their own here, placeholders in Zulip's Python-Markdown), each linkifier in
 * the realm's order over what text is left, so an earlier linkifier wins where two
 * match the same text. A match's "before" character must be in the text itself: the
 * start of a paragraph or a line counts, a code span or link right before does not.
 * Link text is never linkified again. The links made here are normalised and counted
 * by links.ts like any other.
 */
import type { StateCore, Token } from "markdown-it";
import type { CompiledLinkifier } from "../engine/render.js";
import { isAllowedUrl } from "./links.js";
import { renderStateOf } from "./render-state.js";

/** What precedes a piece of text: the real start, a line break, or anything else (a placeholder in Zulip). */
type Before = "start" | "newline" | "other";

interface Piece {
  readonly text: string;
  readonly url?: string;
  readonly before: Before;
}

/** Zulip never lets a "before" group see a placeholder's characters; NUL stands for one, and for the text start. */
const HEADS: Readonly<Record<Before, string>> = { start: "", newline: "\u0000\n", other: "\u0000\u0003" };

function applyOne(linkifier: CompiledLinkifier, piece: Piece, out: Piece[]): void {
  const head = HEADS[piece.before];
  const hay = head + piece.text;
  // From 1 past a head, so that `^` (position 0 only) never holds there.
  let from = head === "" ? 0 : 1;
  let emitted = head.length;
  let before = piece.before;
  while (from <= hay.length) {
    const m = linkifier.find(hay, from);
    if (m === null) break;
    if (m.end > m.start && m.start >= head.length && isAllowedUrl(m.url)) {
      if (m.start > emitted) out.push({ text: hay.slice(emitted, m.start), before });
      out.push({ text: hay.slice(m.start, m.end), url: m.url, before });
      emitted = m.end;
      before = "other";
      from = m.end;
    } else {
      // Not linked (empty, or a URL no link may have): go on after it.
      from = m.resumeAt > from ? m.resumeAt : from + 1;
    }
  }
  if (emitted < hay.length || emitted === head.length) out.push({ text: hay.slice(emitted), before });
}

/** The text cut into plain pieces and linked ones, every linkifier applied in order. */
export function linkifyText(text: string, before: Before, linkifiers: readonly CompiledLinkifier[]): Piece[] {
  let pieces: Piece[] = [{ text, before }];
  for (const linkifier of linkifiers) {
    const next: Piece[] = [];
    for (const piece of pieces) {
      if (piece.url !== undefined) next.push(piece);
      else applyOne(linkifier, piece, next);
    }
    pieces = next;
  }
  return pieces;
}

function linkifyChildren(state: StateCore, children: Token[], linkifiers: readonly CompiledLinkifier[]): Token[] {
  const out: Token[] = [];
  let linkDepth = 0;
  children.forEach((token, i) => {
    if (token.type === "link_open") linkDepth++;
    else if (token.type === "link_close") linkDepth--;
    if (token.type !== "text" || linkDepth > 0 || token.content === "") {
      out.push(token);
      return;
    }
    const previous = children[i - 1];
    const before: Before = i === 0 ? "start" : previous?.type === "softbreak" ? "newline" : "other";
    const pieces = linkifyText(token.content, before, linkifiers);
    if (!pieces.some((p) => p.url !== undefined)) {
      out.push(token);
      return;
    }
    for (const piece of pieces) {
      const text = new state.Token("text", "", 0);
      text.content = piece.text;
      text.level = token.level;
      if (piece.url === undefined) {
        out.push(text);
        continue;
      }
      const open = new state.Token("link_open", "a", 1);
      open.attrs = [["href", piece.url]];
      open.markup = "linkifier";
      open.level = token.level;
      text.level = token.level + 1;
      const close = new state.Token("link_close", "a", -1);
      close.markup = "linkifier";
      close.level = token.level;
      out.push(open, text, close);
    }
  });
  return out;
}

/** Core rule (after markdown-it's linkify, before links.ts): the realm's linkifiers, when it has any. */
export function linkifierRule(state: StateCore): void {
  const linkifiers = renderStateOf(state.env).context.linkifiers ?? [];
  if (linkifiers.length === 0) return;
  for (const token of state.tokens) {
    if (token.type === "inline" && token.children) token.children = linkifyChildren(state, token.children, linkifiers);
  }
}
