/**
 * What a message body needs beyond the server's HTML, fetched only when a message needs
 * it: highlight.js (a separate chunk) for code blocks, KaTeX's stylesheet and fonts for
 * math the server rendered.
 */
import { h } from "./dom.js";

/** The KaTeX stylesheet's hashed file name (tools/build-web.ts defines it). */
declare const PARLEY_KATEX_CSS: string | undefined;

let highlighter: Promise<typeof import("./highlight.js")> | null = null;
let katexCss = false;

function loadKatexCss(): void {
  if (katexCss || typeof PARLEY_KATEX_CSS !== "string") return;
  katexCss = true;
  document.head.append(h("link", { rel: "stylesheet", href: `/${PARLEY_KATEX_CSS}` }));
}

/** Decorates one message body once it is in the page or about to be. */
export function enhanceContent(content: HTMLElement): void {
  if (content.querySelector("div.codehilite[data-code-language]")) {
    highlighter ??= import("./highlight.js");
    highlighter.then((m) => m.highlightCode(content)).catch(() => (highlighter = null));
  }
  if (content.querySelector(".katex")) loadKatexCss();
}
