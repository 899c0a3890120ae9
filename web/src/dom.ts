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
  // Zulip marks emoji up for a sprite sheet (class emoji-1f525, text :fire:); without
  // the sheet, the character itself reads better.
  for (const span of el.querySelectorAll("span.emoji")) {
    const code = [...span.classList].find((c) => c.startsWith("emoji-"))?.slice(6);
    if (code) span.textContent = emojiGlyph(code, span.getAttribute("title") ?? "emoji");
  }
}

export function clear(el: Element): void {
  el.replaceChildren();
}

/** A unicode emoji from Zulip's emoji_code ("1f44d", "1f468-200d-1f4bb"). */
export function emojiGlyph(code: string, name: string): string {
  if (!/^[0-9a-f]+(-[0-9a-f]+)*$/.test(code)) return `:${name}:`;
  try {
    return String.fromCodePoint(...code.split("-").map((c) => parseInt(c, 16)));
  } catch {
    return `:${name}:`;
  }
}
