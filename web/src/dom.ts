/**
 * Building DOM without markup: text always goes in as text nodes, so a user's name,
 * topic or channel can never become HTML. The one exception, message bodies rendered by
 * the server, goes through `serverHtml` and nowhere else.
 */

import { inAppHash } from "./hash.js";

type Child = Node | string | null | undefined | false;
type Attrs = Record<string, string | number | boolean | EventListener | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === "function") el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

/** Message content as parley's Markdown renderer produced it (user text already escaped there). */
export function serverHtml(el: HTMLElement, html: string): void {
  el.innerHTML = html;
  for (const a of el.querySelectorAll("a[href]")) {
    // Links to views of this app (channel and topic links) stay in this tab, where the
    // key is: a new tab would ask to log in again.
    const hash = inAppHash(a.getAttribute("href") ?? "", location.href);
    if (hash !== null) {
      a.setAttribute("href", hash);
      continue;
    }
    a.setAttribute("target", "_blank");
    a.setAttribute("rel", "noopener noreferrer");
  }
}

export function clear(el: Element): void {
  el.replaceChildren();
}
