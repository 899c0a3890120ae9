/**
 * Emoji drawn as Zulip draws them: unicode emoji as a cell of the Google sprite sheet
 * (class `emoji-<code>`, styled by the generated stylesheet, tools/emoji-sprite.ts), the
 * realm's custom emoji as their uploaded image; never a system font glyph, which a
 * machine without an emoji font shows as an empty box.
 */
import { h } from "./dom.js";
import type { EmojiRef, RealmEmojiSet } from "./realm-emoji.js";

export type { EmojiRef } from "./realm-emoji.js";

const CODE = /^[0-9a-f]{1,6}(-[0-9a-f]{1,6})*$/;

/** The emoji as an element: the sprite cell, the custom image, or `:name:` when neither is known. */
export function emojiElement(ref: EmojiRef, realm: RealmEmojiSet): HTMLElement {
  if (ref.type === "realm_emoji") {
    const custom = realm.byId(ref.code);
    if (custom) return h("img", { class: "emoji", src: custom.source_url, alt: `:${ref.name}:`, loading: "lazy" });
  } else if (ref.type === "unicode_emoji" && CODE.test(ref.code)) {
    return h("span", { class: `emoji-sprite emoji-${ref.code}`, "data-code": ref.code });
  }
  return h("span", { class: "emoji-text" }, `:${ref.name}:`);
}
