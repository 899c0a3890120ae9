/**
 * The banner shown while the server cannot be reached: a countdown to the next try,
 * updated each second, and "Try now". It goes away when the event loop is heard again.
 */
import { h } from "./dom.js";

export class ReconnectBanner {
  readonly #text = h("span", {});
  readonly element: HTMLElement;
  #at: number | null = null;
  #timer: number | null = null;

  constructor(onTryNow: () => void) {
    this.element = h(
      "div",
      { class: "reconnect-banner", role: "status", hidden: true },
      this.#text,
      h("button", { type: "button", class: "secondary", onclick: () => onTryNow() }, "Try now"),
    );
  }

  /** The next try's time (Date.now() ms), or null when connected. */
  set(at: number | null): void {
    this.#at = at;
    if (at === null) {
      this.element.hidden = true;
      if (this.#timer !== null) window.clearInterval(this.#timer);
      this.#timer = null;
      return;
    }
    this.element.hidden = false;
    this.#tick();
    this.#timer ??= window.setInterval(() => this.#tick(), 1000);
  }

  #tick(): void {
    if (this.#at === null) return;
    const s = Math.max(0, Math.ceil((this.#at - Date.now()) / 1000));
    this.#text.textContent = s > 0 ? `Cannot reach the server. Trying again in ${s} s.` : "Reconnecting…";
  }

  destroy(): void {
    this.set(null);
  }
}
