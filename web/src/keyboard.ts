/**
 * Keyboard help (the `?` key) and moving through the Inbox with the arrow keys or
 * j/k (Enter opens the focused conversation, as any button does).
 */
import { h } from "./dom.js";

const SHORTCUTS: readonly (readonly [string, string])[] = [
  ["?", "Show these keyboard shortcuts"],
  ["/", "Search"],
  ["c", "New message (focus the compose box)"],
  ["j / ↓", "Next message, or next conversation in the Inbox"],
  ["k / ↑", "Previous message, or previous conversation in the Inbox"],
  ["Enter", "Open the focused conversation"],
  ["r", "Reply to the selected message"],
  ["e", "Edit the selected message"],
  ["s", "Star or unstar the selected message"],
  ["Escape", "Leave the search or compose box; close a dialog or the menu"],
  ["Enter (in compose)", "Send; Shift+Enter for a new line"],
];

export function openKeyboardHelp(): void {
  if (document.getElementById("keyboard-help")) return;
  const dialog = h("dialog", { class: "dialog keyboard-help", id: "keyboard-help", "aria-labelledby": "kbd-title" });
  const table = h(
    "table",
    { class: "shortcuts" },
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Key"), h("th", { scope: "col" }, "Action"))),
    h("tbody", {}, ...SHORTCUTS.map(([key, what]) => h("tr", {}, h("td", {}, h("kbd", {}, key)), h("td", {}, what)))),
  );
  dialog.append(
    h(
      "div",
      { class: "dialog-form" },
      h("h2", { id: "kbd-title" }, "Keyboard shortcuts"),
      table,
      h(
        "div",
        { class: "dialog-buttons" },
        h("button", { type: "button", class: "secondary", onclick: () => dialog.close() }, "Close"),
      ),
    ),
  );
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}

/** Moves focus to the next (1) or previous (-1) Inbox row; true when there was an Inbox. */
export function moveInboxFocus(root: HTMLElement, delta: 1 | -1): boolean {
  const items = [...root.querySelectorAll<HTMLElement>("button.inbox-item")];
  if (items.length === 0) return false;
  const at = items.findIndex((b) => b === document.activeElement);
  const next = at === -1 ? (delta === 1 ? 0 : items.length - 1) : Math.min(items.length - 1, Math.max(0, at + delta));
  items[next]?.focus();
  return true;
}
