/**
 * @module tools/emoji-sprite
 * Zulip's emoji images for the web client: the Google sprite sheet that the
 * emoji-datasource-google package (already the server's emoji table source) ships, and
 * one CSS rule per emoji placing its cell, keyed by Zulip's emoji code as the server's
 * markup names it (`span.emoji.emoji-1f604`). Used by tools/build-web.ts as a virtual
 * stylesheet, so the sheet is bundled under a content-hashed name like any asset.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** The virtual module web/src/main.ts imports. */
export const EMOJI_SPRITE_MODULE = "parley:emoji-sprite.css";

/**
 * The 32 px sheet reduced to 256 colours (1.5 MB, fetched once when the first emoji is
 * drawn, then cached for good). Emoji are drawn at 20-28 px; the 64 px sheet (3.4 MB)
 * would decode to a 4092×4092 bitmap, 64 MB of memory per tab, against 16 MB.
 */
const SHEET = "32.png";

interface DatasourceEmoji {
  readonly unified: string;
  readonly sheet_x: number;
  readonly sheet_y: number;
  readonly has_img_google?: boolean;
}

/** Zulip's emoji code for a datasource `unified` (U+FE0F dropped, lower case), as tools/build-emoji.mjs. */
function zulipCode(unified: string): string {
  return unified
    .toLowerCase()
    .split("-")
    .filter((part) => part !== "fe0f")
    .join("-");
}

/** The stylesheet, and the directory its `url(32.png)` resolves against. */
export function emojiSpriteCss(): { css: string; resolveDir: string } {
  const require = createRequire(import.meta.url);
  const pkg = dirname(require.resolve("emoji-datasource-google/package.json"));
  const emoji = JSON.parse(readFileSync(join(pkg, "emoji.json"), "utf8")) as DatasourceEmoji[];
  const columns = Math.max(...emoji.map((e) => Math.max(e.sheet_x, e.sheet_y))) + 1;
  // background-size N×100% makes one cell the element's size; a position of p% puts
  // cell x at p = x / (N - 1). Each emoji's rule only names its cell (half the bytes
  // of a whole background-position per emoji).
  const at = (axis: string) => `calc(var(--${axis}) * ${100 / (columns - 1)}%)`;
  const rules = [
    `.emoji-sprite,span.emoji{display:inline-block;background:url(${SHEET}) no-repeat;` +
      `background-size:${columns * 100}% ${columns * 100}%;background-position:${at("x")} ${at("y")}}`,
  ];
  for (const e of emoji) {
    if (e.has_img_google === false) continue;
    rules.push(`.emoji-${zulipCode(e.unified)}{--x:${e.sheet_x};--y:${e.sheet_y}}`);
  }
  return { css: rules.join("\n"), resolveDir: join(pkg, "img", "google", "sheets-256") };
}
