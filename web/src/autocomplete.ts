/**
 * A suggestion list under a text field (ARIA combobox with a listbox): arrows move,
 * Enter or Tab insert, Escape closes, a click inserts. Its keys are taken before the
 * field's own (the compose box sends on Enter), only while the list is open.
 */
import { h } from "./dom.js";

export interface Suggestion {
  readonly label: readonly (Node | string)[];
  /** Replaces value[start, end). */
  readonly insert: string;
}

export interface Suggestions {
  readonly start: number;
  readonly end: number;
  readonly items: readonly Suggestion[];
}

/** Suggestions for the value and caret; may answer later (a fetch), or null for none. */
export type SuggestionSource = (value: string, caret: number) => Suggestions | null | Promise<Suggestions | null>;

export class Autocomplete {
  readonly #list: HTMLUListElement;
  #shown: Suggestions | null = null;
  #active = 0;
  /** Bumped per input: an answer for older text is dropped. */
  #asked = 0;

  constructor(
    private readonly input: HTMLInputElement | HTMLTextAreaElement,
    id: string,
    private readonly source: SuggestionSource,
    /** Where the list lives (positioned by style.css/content.css). */
    host: HTMLElement,
  ) {
    this.#list = h("ul", { id, class: "autocomplete", role: "listbox", hidden: true, "aria-label": "Suggestions" });
    host.append(this.#list);
    input.setAttribute("role", "combobox");
    input.setAttribute("aria-autocomplete", "list");
    input.setAttribute("aria-controls", id);
    input.setAttribute("aria-expanded", "false");
    input.addEventListener("input", () => void this.#update());
    input.addEventListener("blur", () => this.close());
    // Capture on the host: before the field's own Enter-to-send.
    host.addEventListener("keydown", (ev) => this.#onKey(ev), { capture: true });
    this.#list.addEventListener("mousedown", (ev) => {
      // Keep the focus (and the caret) in the field.
      ev.preventDefault();
      const option = ev.target instanceof Element ? ev.target.closest("li[data-index]") : null;
      if (option instanceof HTMLElement) this.#choose(Number(option.dataset["index"]));
    });
  }

  get isOpen(): boolean {
    return this.#shown !== null;
  }

  async #update(): Promise<void> {
    const asked = ++this.#asked;
    const value = this.input.value;
    const caret = this.input.selectionStart ?? value.length;
    const found = await this.source(value, caret);
    if (asked !== this.#asked || document.activeElement !== this.input) return;
    if (!found || found.items.length === 0) this.close();
    else this.#show(found);
  }

  #show(found: Suggestions): void {
    this.#shown = found;
    this.#active = 0;
    const id = this.#list.id;
    this.#list.replaceChildren(
      ...found.items.map((s, i) =>
        h("li", { id: `${id}-${i}`, role: "option", "data-index": i, "aria-selected": "false" }, ...s.label),
      ),
    );
    this.#list.hidden = false;
    this.input.setAttribute("aria-expanded", "true");
    this.#highlight(0);
  }

  #highlight(i: number): void {
    const options = this.#list.children;
    if (options.length === 0) return;
    this.#active = (i + options.length) % options.length;
    for (const [n, option] of [...options].entries()) option.setAttribute("aria-selected", String(n === this.#active));
    this.input.setAttribute("aria-activedescendant", `${this.#list.id}-${this.#active}`);
    options[this.#active]?.scrollIntoView({ block: "nearest" });
  }

  close(): void {
    this.#asked++;
    this.#shown = null;
    this.#list.hidden = true;
    this.#list.replaceChildren();
    this.input.setAttribute("aria-expanded", "false");
    this.input.removeAttribute("aria-activedescendant");
  }

  #onKey(ev: KeyboardEvent): void {
    if (ev.target !== this.input || !this.#shown || ev.isComposing) return;
    const handled = (): void => {
      ev.preventDefault();
      ev.stopImmediatePropagation();
    };
    if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
      handled();
      this.#highlight(this.#active + (ev.key === "ArrowDown" ? 1 : -1));
    } else if ((ev.key === "Enter" && !ev.shiftKey) || ev.key === "Tab") {
      handled();
      this.#choose(this.#active);
    } else if (ev.key === "Escape") {
      handled();
      this.close();
    }
  }

  #choose(i: number): void {
    const shown = this.#shown;
    const choice = shown?.items[i];
    if (!shown || !choice) return;
    const value = this.input.value;
    this.input.value = value.slice(0, shown.start) + choice.insert + value.slice(shown.end);
    const caret = shown.start + choice.insert.length;
    this.input.setSelectionRange(caret, caret);
    this.close();
    // The field's listeners (typing notices, drafts) see the change.
    this.input.dispatchEvent(new Event("input", { bubbles: true }));
  }
}
