/**
 * The full emoji picker: a dialog with a search field and every emoji (the realm's
 * custom ones first), for reactions and for the compose box. Typing filters by any of an
 * emoji's names; Enter picks the first match; Escape closes (the dialog's own).
 */
import { h } from "./dom.js";
import { emojiElement } from "./emoji.js";
import type { EmojiChoice } from "./emoji-catalog.js";
import type { ClientState } from "./state.js";

export async function openEmojiPicker(
  state: ClientState,
  title: string,
  onPick: (e: EmojiChoice) => void,
): Promise<void> {
  const catalog = state.emojiCatalog;
  const search = h("input", {
    type: "search",
    id: "emoji-search",
    autocomplete: "off",
    placeholder: "Search emoji",
    "aria-label": "Search emoji",
  });
  const grid = h("div", { class: "emoji-grid", role: "group", "aria-label": "Emoji" });
  const close = h("button", { type: "button", class: "emoji-picker-close" }, "Close");
  const dialog = h(
    "dialog",
    { class: "emoji-picker", "aria-label": title },
    h("div", { class: "emoji-picker-head" }, search, close),
    grid,
  );
  let shown: EmojiChoice[] = [];
  const draw = (): void => {
    shown = catalog.filter(search.value);
    grid.replaceChildren(
      ...shown.map((e, i) =>
        h(
          "button",
          { type: "button", "data-index": i, "data-name": e.name, title: `:${e.name}:`, "aria-label": e.name },
          emojiElement(e, state.realmEmoji),
        ),
      ),
    );
    if (shown.length === 0) grid.append(h("p", { class: "list-notice" }, "No emoji match."));
  };
  const pick = (e: EmojiChoice | undefined): void => {
    if (!e) return;
    dialog.close();
    onPick(e);
  };
  grid.addEventListener("click", (ev) => {
    const b = ev.target instanceof Element ? ev.target.closest("button[data-index]") : null;
    if (b instanceof HTMLElement) pick(shown[Number(b.dataset["index"])]);
  });
  search.addEventListener("input", draw);
  search.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") {
      ev.preventDefault();
      pick(shown[0]);
    }
  });
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  search.focus();
  draw();
  await catalog.load();
  if (dialog.open) draw();
}
