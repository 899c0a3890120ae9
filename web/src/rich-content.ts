/**
 * What a message body needs beyond the server's HTML, fetched only when a message needs
 * it: highlight.js (a separate chunk) for code blocks, KaTeX's stylesheet and fonts for
 * math the server rendered. Spoilers start collapsed, opened by their header.
 */
import { h } from "./dom.js";

/** The KaTeX stylesheet's and the highlighter's hashed file names (tools/build-web.ts defines them). */
declare const PARLEY_KATEX_CSS: string | undefined;
declare const PARLEY_HIGHLIGHT_JS: string | undefined;

type Highlight = (root: ParentNode) => void;
let highlighter: Promise<Highlight> | null = null;

/** The highlighter, built apart (highlight.ts), imported by URL: the bundler leaves this import alone. */
async function loadHighlighter(): Promise<Highlight> {
  if (typeof PARLEY_HIGHLIGHT_JS !== "string") throw new Error("no highlighter in this build");
  const url = `/${PARLEY_HIGHLIGHT_JS}`;
  const loaded = (await import(url)) as { highlightCode?: unknown };
  if (typeof loaded.highlightCode !== "function") throw new Error("highlighter without highlightCode");
  return loaded.highlightCode as Highlight;
}
let katexCss = false;

function loadKatexCss(): void {
  if (katexCss || typeof PARLEY_KATEX_CSS !== "string") return;
  katexCss = true;
  document.head.append(h("link", { rel: "stylesheet", href: `/${PARLEY_KATEX_CSS}` }));
}

/** Decorates one message body once it is in the page or about to be. */
export function enhanceContent(content: HTMLElement): void {
  if (content.querySelector("div.codehilite[data-code-language]")) {
    highlighter ??= loadHighlighter();
    highlighter.then((highlight) => highlight(content)).catch(() => (highlighter = null));
  }
  if (content.querySelector(".katex")) loadKatexCss();
  for (const block of content.querySelectorAll<HTMLElement>(".spoiler-block")) collapseSpoiler(block);
}

/**
 * Zulip's spoiler markup (`div.spoiler-block` > `.spoiler-header` + `.spoiler-content`):
 * the content stays hidden (style: content.css) until the header is clicked or, from the
 * keyboard, pressed with Enter or Space.
 */
function collapseSpoiler(block: HTMLElement): void {
  const header = block.querySelector<HTMLElement>(":scope > .spoiler-header");
  const body = block.querySelector<HTMLElement>(":scope > .spoiler-content");
  if (!header || !body) return;
  if ((header.textContent ?? "").trim() === "") header.replaceChildren(h("p", {}, "Spoiler"));
  header.setAttribute("role", "button");
  header.setAttribute("tabindex", "0");
  header.setAttribute("aria-expanded", "false");
  const toggle = (ev: Event): void => {
    // A link in the header opens the link, not the spoiler.
    if (ev.target instanceof Element && ev.target.closest("a")) return;
    ev.preventDefault();
    const open = block.classList.toggle("spoiler-open");
    header.setAttribute("aria-expanded", String(open));
    body.setAttribute("aria-hidden", String(!open));
  };
  header.addEventListener("click", toggle);
  header.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" || ev.key === " ") toggle(ev);
  });
}
