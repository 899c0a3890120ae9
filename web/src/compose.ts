/**
 * The compose box: to a channel and topic, or a DM; Enter sends, Shift+Enter is a new
 * line. While the user types it tells the server (POST /typing start, repeated every
 * 10 s as Zulip's clients do, and stop after 5 s idle or on send).
 */
import type { Api } from "./api.js";
import { ComposeAutocomplete } from "./compose-autocomplete.js";
import { h } from "./dom.js";
import { DraftSync, type WireDraft } from "./draft-sync.js";
import { ComposeUploads } from "./compose-uploads.js";
import { openEmojiPicker } from "./emoji-picker.js";
import type { ClientState } from "./state.js";

export type ComposeTarget =
  | { readonly kind: "channel"; readonly streamId: number; readonly topic: string }
  | { readonly kind: "dm"; readonly userIds: readonly number[] };

const TYPING_REPEAT_MS = 10_000;
const TYPING_IDLE_MS = 5_000;

export class Compose {
  readonly element: HTMLFormElement;
  readonly #mode: HTMLSelectElement;
  readonly #channel: HTMLSelectElement;
  readonly #topic: HTMLInputElement;
  readonly #to: HTMLInputElement;
  readonly #text: HTMLTextAreaElement;
  readonly #status: HTMLElement;
  readonly #channelFields: HTMLElement;
  readonly #dmFields: HTMLElement;
  readonly #people: HTMLDataListElement;
  #typingSentAt = 0;
  #typingTarget = "";
  #idleTimer: number | null = null;
  /** The half-written message, kept on the server (draft-sync). */
  readonly #drafts: DraftSync;
  readonly #uploads: ComposeUploads;

  constructor(
    private readonly api: Api,
    private readonly state: ClientState,
    private readonly onError: (text: string) => void,
  ) {
    this.#mode = h(
      "select",
      { id: "compose-mode", name: "mode" },
      h("option", { value: "channel" }, "Channel"),
      h("option", { value: "dm" }, "Direct message"),
    );
    this.#channel = h("select", { id: "compose-channel", name: "channel" });
    this.#topic = h("input", {
      id: "compose-topic",
      name: "topic",
      autocomplete: "off",
      maxlength: "60",
      placeholder: "Topic",
    });
    this.#people = h("datalist", { id: "compose-people" });
    this.#to = h("input", {
      id: "compose-to",
      name: "to",
      autocomplete: "off",
      list: "compose-people",
      placeholder: "email, email…",
    });
    this.#text = h("textarea", {
      id: "compose-text",
      name: "content",
      rows: "2",
      placeholder: "Message (Enter to send, Shift+Enter for a new line)",
    });
    this.#status = h("span", { class: "compose-status", role: "status" });
    this.#channelFields = h(
      "span",
      { class: "compose-fields" },
      h("label", { for: "compose-channel" }, "Channel"),
      this.#channel,
      h("label", { for: "compose-topic" }, "Topic"),
      this.#topic,
    );
    this.#dmFields = h(
      "span",
      { class: "compose-fields", hidden: true },
      h("label", { for: "compose-to" }, "To"),
      this.#to,
      this.#people,
    );
    this.element = h(
      "form",
      { class: "compose", "aria-label": "Compose a message" },
      h(
        "div",
        { class: "compose-head" },
        h("label", { for: "compose-mode", class: "visually-hidden" }, "Send to"),
        this.#mode,
        this.#channelFields,
        this.#dmFields,
      ),
      h(
        "div",
        { class: "compose-body" },
        h("label", { for: "compose-text", class: "visually-hidden" }, "Message"),
        this.#text,
        h(
          "button",
          {
            type: "button",
            class: "compose-emoji",
            "aria-label": "Add emoji",
            title: "Add emoji",
            onclick: () => void openEmojiPicker(state, "Add emoji to the message", (e) => this.#insert(`:${e.name}: `)),
          },
          "☺",
        ),
        ...(this.#uploads = new ComposeUploads(this.#text, this.#status, this.#text, onError)).elements,
        h("button", { type: "submit", class: "send" }, "Send"),
      ),
      this.#status,
    );
    this.#mode.addEventListener("change", () => this.#showMode());
    this.#to.addEventListener("input", () => this.#suggest());
    this.element.addEventListener("submit", (ev) => {
      ev.preventDefault();
      void this.send();
    });
    this.#text.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        void this.send();
      }
    });
    this.#text.addEventListener("input", () => this.#typing());
    this.#drafts = new DraftSync(api);
    for (const field of [this.#text, this.#topic, this.#to, this.#mode, this.#channel])
      field.addEventListener(field instanceof HTMLSelectElement ? "change" : "input", () => this.#draftChanged());
    new ComposeAutocomplete(
      api,
      state,
      this.#text,
      this.#topic,
      () => (this.#mode.value === "channel" ? Number(this.#channel.value) || null : null),
      this.element,
    );
    this.refreshChoices();
  }

  /** Text typed in at the caret (an emoji from the picker), the caret after it. */
  #insert(text: string): void {
    const t = this.#text;
    const at = t.selectionStart ?? t.value.length;
    t.value = t.value.slice(0, at) + text + t.value.slice(t.selectionEnd ?? at);
    t.focus();
    t.setSelectionRange(at + text.length, at + text.length);
    t.dispatchEvent(new Event("input", { bubbles: true }));
  }

  /** Channel and people choices, after subscriptions or users change. */
  refreshChoices(): void {
    const current = this.#channel.value;
    this.#channel.replaceChildren(
      ...[...this.state.subs.values()]
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((s) => h("option", { value: s.stream_id }, s.name)),
    );
    if (current) this.#channel.value = current;
    this.#suggest();
  }

  /** Suggestions for the last name being typed in To: a few matches, not the whole realm (which may have thousands). */
  #suggest(): void {
    const typed = (this.#to.value.split(",").pop() ?? "").trim().toLowerCase();
    const out: HTMLOptionElement[] = [];
    if (typed.length > 0) {
      for (const u of this.state.users.values()) {
        if (
          u.is_active === false ||
          !(u.full_name.toLowerCase().includes(typed) || u.email.toLowerCase().includes(typed))
        )
          continue;
        out.push(h("option", { value: u.email }, u.full_name));
        if (out.length >= 12) break;
      }
    }
    this.#people.replaceChildren(...out);
  }

  #showMode(): void {
    const dm = this.#mode.value === "dm";
    this.#channelFields.hidden = dm;
    this.#dmFields.hidden = !dm;
  }

  /** Points compose at a conversation (opening a narrow, or r to reply). */
  setTarget(target: ComposeTarget): void {
    if (target.kind === "channel") {
      this.#mode.value = "channel";
      this.#channel.value = String(target.streamId);
      this.#topic.value = target.topic;
    } else {
      this.#mode.value = "dm";
      this.#to.value = target.userIds
        .filter((id) => id !== this.state.me || target.userIds.length === 1)
        .map((id) => this.state.users.get(id)?.email ?? "")
        .join(", ");
    }
    this.#showMode();
  }

  /**
   * Follows the view the user opened, unless a message is half written: that one keeps
   * its own recipient (it would otherwise be sent to the new view's conversation).
   */
  followView(target: ComposeTarget): void {
    if (this.#text.value.trim() === "") this.setTarget(target);
  }

  /** Puts back the draft this tab was writing before a reload (draft-sync), if compose is still empty. */
  async restoreDraft(): Promise<void> {
    const draft = await this.#drafts.restore();
    if (draft === null || this.#text.value !== "") return;
    if (draft.type === "stream" && draft.to[0] !== undefined)
      this.setTarget({ kind: "channel", streamId: draft.to[0], topic: draft.topic });
    else if (draft.type === "private" && draft.to.length > 0) this.setTarget({ kind: "dm", userIds: draft.to });
    this.#text.value = draft.content;
  }

  #draftChanged(): void {
    const target = this.#target();
    const timestamp = Math.floor(Date.now() / 1000);
    const content = this.#text.value;
    const draft: WireDraft =
      typeof target === "string"
        ? { type: "", to: [], topic: "", content, timestamp }
        : target.kind === "channel"
          ? { type: "stream", to: [target.streamId], topic: target.topic, content, timestamp }
          : { type: "private", to: target.userIds, topic: "", content, timestamp };
    this.#drafts.changed(draft);
  }

  focus(): void {
    (this.#mode.value === "channel" && this.#topic.value === "" ? this.#topic : this.#text).focus();
  }

  #target(): ComposeTarget | string {
    if (this.#mode.value === "channel") {
      const streamId = Number(this.#channel.value);
      if (!streamId) return "Choose a channel.";
      return { kind: "channel", streamId, topic: this.#topic.value.trim() };
    }
    const names = this.#to.value
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "");
    if (names.length === 0) return "Choose who to send to.";
    const ids: number[] = [];
    for (const n of names) {
      const id =
        this.state.userIdByEmail(n) ??
        [...this.state.users.values()].find((u) => u.full_name.toLowerCase() === n.toLowerCase())?.user_id;
      if (id === undefined) return `No one is called ${n}.`;
      ids.push(id);
    }
    return { kind: "dm", userIds: ids };
  }

  async send(): Promise<void> {
    const content = this.#text.value;
    if (content.trim() === "") return;
    const target = this.#target();
    if (typeof target === "string") {
      this.#status.textContent = target;
      return;
    }
    if (this.#uploads.busy) {
      this.#status.textContent = "Wait for the upload to finish.";
      return;
    }
    this.#stopTyping();
    this.#status.textContent = "Sending…";
    // client=website: Zulip's name for its web app, one of the clients whose sends start
    // read for the sender (a browser cannot set the User-Agent it would be read from).
    const params =
      target.kind === "channel"
        ? { type: "stream", to: target.streamId, topic: target.topic, content, client: "website" }
        : { type: "direct", to: target.userIds, content, client: "website" };
    try {
      await this.api.post("/messages", params);
      // Only clear what was sent: the user may have typed on meanwhile.
      if (this.#text.value === content) this.#text.value = "";
      this.#drafts.sent();
      // Typed on while it was sent: that is a new draft.
      if (this.#text.value !== "") this.#draftChanged();
      this.#status.textContent = "";
    } catch (error) {
      this.#status.textContent = error instanceof Error ? error.message : "Could not send";
      this.onError(this.#status.textContent);
    }
  }

  #typingParams(target: ComposeTarget): Record<string, string | number | readonly number[]> {
    return target.kind === "channel"
      ? { type: "stream", stream_id: target.streamId, topic: target.topic }
      : { type: "direct", to: target.userIds };
  }

  #typing(): void {
    const target = this.#target();
    if (typeof target === "string" || (target.kind === "channel" && target.topic === "")) return;
    const key = JSON.stringify(target);
    if (this.#text.value === "") {
      this.#stopTyping();
      return;
    }
    const now = Date.now();
    if (key !== this.#typingTarget) this.#stopTyping();
    if (key !== this.#typingTarget || now - this.#typingSentAt > TYPING_REPEAT_MS) {
      this.#typingTarget = key;
      this.#typingSentAt = now;
      this.api.post("/typing", { op: "start", ...this.#typingParams(target) }).catch(() => undefined);
    }
    if (this.#idleTimer !== null) clearTimeout(this.#idleTimer);
    this.#idleTimer = window.setTimeout(() => this.#stopTyping(), TYPING_IDLE_MS);
  }

  #stopTyping(): void {
    if (this.#idleTimer !== null) clearTimeout(this.#idleTimer);
    this.#idleTimer = null;
    if (this.#typingTarget === "") return;
    const target = JSON.parse(this.#typingTarget) as ComposeTarget;
    this.#typingTarget = "";
    this.#typingSentAt = 0;
    this.api.post("/typing", { op: "stop", ...this.#typingParams(target) }).catch(() => undefined);
  }

  /** Clears timers (logout). */
  destroy(): void {
    this.#stopTyping();
    this.#drafts.flush();
  }
}
