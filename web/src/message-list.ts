/**
 * The centre: the messages of one narrow, fetched by anchor (first unread on entry,
 * older pages on scroll up, newer on scroll down), at most MAX_RENDERED at a time so the
 * DOM stays bounded at any history size. Live events update it in place. Messages are
 * marked read as they scroll into view; j/k move a selection; r replies; e edits.
 * Each message offers the changes its reader may make (edit in place, move, delete),
 * each topic header the resolve toggle and the topic move.
 */
import { ApiError, type Api } from "./api.js";
import { h, serverHtml } from "./dom.js";
import { emojiElement } from "./emoji.js";
import { openEmojiPicker } from "./emoji-picker.js";
import { enhanceContent } from "./rich-content.js";
import { confirmDelete, MessageEditor, openMoveDialog, resolveLabel, toggleResolve } from "./message-actions.js";
import { contentEditOf, deletedIdsOf, moveOf, type Move } from "./message-events.js";
import { avatar } from "./people.js";
import { dayHeading, fullDateTime, shortDateTime, timeOfDay } from "./time-format.js";
import { conversationKey, dmUserIds, holdsConversation, matches, termsOf, type Narrow } from "./narrow.js";
import { toggledTopic, type MessageActions } from "./permissions.js";
import type { ClientState } from "./state.js";
import type { Message, MessagesReply, Reaction, ServerEvent } from "./types.js";

/** Rendered messages at most; older or newer ones are dropped and fetched again on scroll. */
export const MAX_RENDERED = 400;
const PAGE = 100;
const FIRST_PAGE = 50;
/** Pixels from an edge at which the next page is fetched. */
const EDGE = 400;
/** Reactions offered by the picker (Zulip names; the server finds the code). */
export const QUICK_REACTIONS: readonly (readonly [string, string])[] = [
  ["thumbs_up", "1f44d"],
  ["heart", "2764"],
  ["tada", "1f389"],
  ["laughing", "1f606"],
  ["eyes", "1f440"],
  ["check", "2705"],
];

function sameDay(a: Date, b: Date): boolean {
  return a.getDate() === b.getDate() && a.getMonth() === b.getMonth() && a.getFullYear() === b.getFullYear();
}

/** The line above a day's first message: its date, the year only when not this one. */
function dateSeparator(when: Date): HTMLElement {
  return h(
    "div",
    { class: "date-separator", role: "separator" },
    h("time", { datetime: when.toISOString() }, dayHeading(when)),
  );
}

export interface ListHooks {
  /** Messages were marked read here (before the server confirms), for counts. */
  onMarkedRead(ids: readonly number[]): void;
  onError(text: string): void;
  /** The "more actions" menu of a message (message-menu.ts). */
  onMore?(m: Message): void;
  /** A sender's name was clicked (the user card). */
  onUser?(userId: number): void;
}

export class MessageList {
  readonly element: HTMLElement;
  readonly #list: HTMLOListElement;
  readonly #scroller: HTMLElement;
  readonly #notice: HTMLElement;
  #narrow: Narrow = { kind: "all" };
  #messages: Message[] = [];
  readonly #els = new Map<number, HTMLLIElement>();
  #foundOldest = false;
  #foundNewest = false;
  #loading = false;
  /** The open narrow's first page failed (say, the server was down): fetched again on reconnect. */
  #failed = false;
  /** Bumped on every narrow switch: replies for an older narrow are dropped. */
  #generation = 0;
  #selected: number | null = null;
  readonly #observer: IntersectionObserver;
  readonly #toMark = new Set<number>();
  #markTimer: number | null = null;
  /** After "mark as unread" here: nothing on screen is marked read until another narrow opens (as Zulip). */
  #readingHeld = false;
  /** Open edit forms by message ID (kept across redraws of the message). */
  readonly #editors = new Map<number, MessageEditor>();

  constructor(
    private readonly api: Api,
    private readonly state: ClientState,
    private readonly hooks: ListHooks,
  ) {
    this.#list = h("ol", { class: "messages", "aria-label": "Messages" });
    this.#notice = h("p", { class: "list-notice", role: "status" });
    this.#scroller = h("div", { class: "scroller", tabindex: "-1" }, this.#notice, this.#list);
    this.element = this.#scroller;
    this.#scroller.addEventListener("scroll", () => this.#onScroll(), { passive: true });
    this.#observer = new IntersectionObserver((entries) => this.#onVisible(entries), {
      root: this.#scroller,
      threshold: [0, 0.5, 1],
    });
    this.#list.addEventListener("click", (ev) => this.#onClick(ev));
  }

  get narrow(): Narrow {
    return this.#narrow;
  }

  get renderedCount(): number {
    return this.#els.size;
  }

  /** Opens a narrow: the page around the first unread (the newest for views and searches). */
  async open(narrow: Narrow): Promise<void> {
    const generation = ++this.#generation;
    this.#narrow = narrow;
    this.#readingHeld = false;
    this.#loading = true;
    const anchor =
      narrow.kind === "mentions" || narrow.kind === "starred" || narrow.kind === "search" ? "newest" : "first_unread";
    try {
      const reply = await this.#fetch(anchor, FIRST_PAGE, FIRST_PAGE);
      if (generation !== this.#generation) return;
      this.#reset(reply.messages);
      this.#failed = false;
      this.#foundOldest = reply.found_oldest;
      this.#foundNewest = reply.found_newest;
      this.#notice.textContent = reply.messages.length === 0 ? "No messages here yet." : "";
      // Start at the first unread when there is one, else at the bottom.
      const firstUnread = reply.messages.find((m) => !m.flags.includes("read"));
      const target = firstUnread ?? reply.messages[reply.messages.length - 1];
      if (target) {
        this.#select(target.id, false);
        const el = this.#els.get(target.id);
        if (firstUnread && el) this.#scroller.scrollTop = Math.max(0, el.offsetTop - 60);
        else this.#scroller.scrollTop = this.#scroller.scrollHeight;
      }
      // A page too short to scroll gives no scroll event: fetch the next ones now.
      if (this.#scroller.scrollHeight <= this.#scroller.clientHeight) {
        this.#loading = false;
        if (!this.#foundOldest) void this.#loadOlder();
        else if (!this.#foundNewest) void this.#loadNewer();
      }
    } catch (error) {
      if (generation === this.#generation) {
        this.#failed = true;
        // Nothing live is appended to a list that never loaded.
        this.#foundNewest = false;
        this.#reset([]);
        this.#notice.textContent = error instanceof ApiError ? error.message : "Could not load messages.";
      }
    } finally {
      if (generation === this.#generation) this.#loading = false;
    }
  }

  /** Opens the narrow again if its first page failed (the connection is back). */
  retryFailed(): void {
    if (this.#failed) void this.open(this.#narrow);
  }

  async #fetch(anchor: string | number, before: number, after: number): Promise<MessagesReply> {
    const reply = await this.api.get("/messages", {
      anchor: String(anchor),
      num_before: before,
      num_after: after,
      include_anchor: typeof anchor !== "number",
      narrow: termsOf(this.#narrow),
      apply_markdown: true,
      client_gravatar: true,
    });
    // GET /messages answers in the MessagesReply shape.
    const out = reply as unknown as MessagesReply;
    this.state.noteMessages(out.messages);
    return out;
  }

  #reset(messages: Message[]): void {
    this.#observer.disconnect();
    this.#els.clear();
    this.#editors.clear();
    this.#messages = messages;
    this.#selected = null;
    const frag = document.createDocumentFragment();
    let prev: Message | undefined;
    for (const m of messages) {
      frag.append(this.#render(m, prev));
      prev = m;
    }
    this.#list.replaceChildren(frag);
  }

  #onScroll(): void {
    if (this.#loading) return;
    const s = this.#scroller;
    if (s.scrollTop < EDGE && !this.#foundOldest) void this.#loadOlder();
    else if (s.scrollHeight - s.scrollTop - s.clientHeight < EDGE && !this.#foundNewest) void this.#loadNewer();
  }

  async #loadOlder(): Promise<void> {
    const first = this.#messages[0];
    if (!first) return;
    const generation = this.#generation;
    this.#loading = true;
    try {
      const reply = await this.#fetch(first.id, PAGE, 0);
      if (generation !== this.#generation) return;
      this.#foundOldest = reply.found_oldest;
      const older = reply.messages.filter((m) => m.id < first.id);
      if (older.length === 0) return;
      const heightBefore = this.#scroller.scrollHeight;
      const frag = document.createDocumentFragment();
      let prev: Message | undefined;
      for (const m of older) {
        frag.append(this.#render(m, prev));
        prev = m;
      }
      this.#list.prepend(frag);
      this.#messages = [...older, ...this.#messages];
      this.#rerender(first.id);
      this.#scroller.scrollTop += this.#scroller.scrollHeight - heightBefore;
      const excess = this.#messages.length - MAX_RENDERED;
      if (excess > 0) {
        for (const m of this.#messages.splice(MAX_RENDERED)) this.#drop(m.id);
        this.#foundNewest = false;
      }
    } catch (error) {
      this.hooks.onError(error instanceof Error ? error.message : "Could not load older messages");
    } finally {
      if (generation === this.#generation) this.#loading = false;
    }
  }

  async #loadNewer(): Promise<void> {
    const last = this.#messages[this.#messages.length - 1];
    if (!last) return;
    const generation = this.#generation;
    this.#loading = true;
    try {
      const reply = await this.#fetch(last.id, 0, PAGE);
      if (generation !== this.#generation) return;
      this.#foundNewest = reply.found_newest;
      this.#append(reply.messages.filter((m) => m.id > last.id));
    } catch (error) {
      this.hooks.onError(error instanceof Error ? error.message : "Could not load newer messages");
    } finally {
      if (generation === this.#generation) this.#loading = false;
    }
  }

  /** Appends, then drops from the top past the cap (keeping what the reader sees in place). */
  #append(newer: readonly Message[]): void {
    if (newer.length === 0) return;
    let prev = this.#messages[this.#messages.length - 1];
    const frag = document.createDocumentFragment();
    for (const m of newer) {
      frag.append(this.#render(m, prev));
      prev = m;
    }
    this.#list.append(frag);
    this.#messages.push(...newer);
    this.#notice.textContent = "";
    const excess = this.#messages.length - MAX_RENDERED;
    if (excess > 0) {
      const dropped = this.#messages.splice(0, excess);
      const keep = this.#messages[0];
      const keepEl = keep ? this.#els.get(keep.id) : undefined;
      const offsetBefore = keepEl?.offsetTop ?? 0;
      for (const m of dropped) this.#drop(m.id);
      if (keep) this.#rerender(keep.id);
      const offsetAfter = (keep ? this.#els.get(keep.id)?.offsetTop : 0) ?? 0;
      this.#scroller.scrollTop -= offsetBefore - offsetAfter;
      this.#foundOldest = false;
    }
  }

  #drop(id: number): void {
    const el = this.#els.get(id);
    if (el) {
      this.#observer.unobserve(el);
      el.remove();
    }
    this.#els.delete(id);
    if (this.#selected === id) this.#selected = null;
  }

  #rerender(id: number): void {
    const i = this.#messages.findIndex((m) => m.id === id);
    const m = this.#messages[i];
    const old = this.#els.get(id);
    if (!m || !old) return;
    const focusedRow = document.activeElement === old;
    // An open editor moves into the new row, which takes its focus away: give it back.
    const focusedEditor = !focusedRow && old.contains(document.activeElement);
    const fresh = this.#render(m, this.#messages[i - 1]);
    this.#observer.unobserve(old);
    old.replaceWith(fresh);
    if (this.#selected === id) fresh.classList.add("selected");
    if (focusedRow) fresh.focus({ preventScroll: true });
    else if (focusedEditor) this.#editors.get(id)?.focus();
  }

  #render(m: Message, prev: Message | undefined): HTMLLIElement {
    const me = this.state.me;
    const key = conversationKey(m, me);
    const newConversation = !prev || conversationKey(prev, me) !== key;
    const when = new Date(m.timestamp * 1000);
    const newDay = !prev || !sameDay(new Date(prev.timestamp * 1000), when);
    const continued =
      !newConversation &&
      !newDay &&
      prev !== undefined &&
      prev.sender_id === m.sender_id &&
      m.timestamp - prev.timestamp < 600;
    const starred = m.flags.includes("starred");
    const unread = !m.flags.includes("read");
    const actions = this.#actionsFor(m);
    const editor = this.#editors.get(m.id);
    let content: HTMLElement;
    if (editor) content = editor.form;
    else {
      content = h("div", { class: "content" });
      serverHtml(content, m.content);
      enhanceContent(content);
    }
    const li = h(
      "li",
      {
        class: `msg${continued ? " continued" : ""}${unread ? " unread" : ""}`,
        "data-id": m.id,
        tabindex: "-1",
        "aria-label": `${m.sender_full_name}, ${shortDateTime(when)}`,
      },
      newDay ? dateSeparator(when) : null,
      newConversation ? this.#recipientHeader(m, actions) : null,
      h(
        "div",
        { class: "meta" },
        continued
          ? null
          : h(
              "button",
              { type: "button", class: "sender", "data-action": "user-card" },
              avatar(
                this.state.users.get(m.sender_id) ?? { full_name: m.sender_full_name, avatar_url: m.avatar_url },
                m.sender_id,
                "tiny",
              ),
              m.sender_full_name,
            ),
        h("time", { datetime: when.toISOString(), title: fullDateTime(when) }, timeOfDay(when)),
        m.last_edit_timestamp !== undefined
          ? h("span", { class: "edited" }, "edited")
          : m.last_moved_timestamp !== undefined
            ? h("span", { class: "edited" }, "moved")
            : null,
        h(
          "button",
          {
            type: "button",
            class: "star",
            "data-action": "star",
            "aria-pressed": String(starred),
            "aria-label": starred ? "Unstar message" : "Star message",
            title: starred ? "Unstar" : "Star",
          },
          starred ? "★" : "☆",
        ),
        h(
          "button",
          {
            type: "button",
            class: "react",
            "data-action": "picker",
            "aria-label": "Add reaction",
            "aria-expanded": "false",
            title: "Add reaction",
          },
          "☺+",
        ),
        actions.edit ? this.#actionButton("edit", "Edit message", "Edit") : null,
        actions.moveTopic || actions.moveChannel ? this.#actionButton("move", "Move message", "Move") : null,
        actions.delete ? this.#actionButton("delete", "Delete message", "Delete") : null,
        this.#actionButton("more", "More actions", "⋯"),
      ),
      content,
      this.#reactions(m),
    );
    this.#els.set(m.id, li);
    if (unread && this.#narrow.kind !== "search" && !this.#readingHeld) this.#observer.observe(li);
    return li;
  }

  #actionButton(action: string, label: string, text: string): HTMLButtonElement {
    return h(
      "button",
      { type: "button", class: "msg-action", "data-action": action, "aria-label": label, title: label },
      text,
    );
  }

  /** What the reader may do to the message now (the server still decides). */
  #actionsFor(m: Message): MessageActions {
    const sub = m.stream_id === undefined ? undefined : this.state.subs.get(m.stream_id);
    return this.state.permissions.actions(m, sub, Date.now() / 1000, this.state.sentByMyBot(m));
  }

  /** The conversation's header; a channel topic's has the resolve toggle and the topic move. */
  #recipientHeader(m: Message, actions: MessageActions): HTMLElement {
    const header = h("div", { class: "recipient" }, h("span", { class: "recipient-label" }, this.#recipientLabel(m)));
    if (m.type !== "stream") return header;
    if (actions.resolve) {
      const label = resolveLabel(m.subject);
      header.append(
        h("button", { type: "button", class: "topic-action", "data-action": "resolve", title: label }, label),
      );
    }
    if (actions.moveTopic || actions.moveChannel)
      header.append(h("button", { type: "button", class: "topic-action", "data-action": "move-topic" }, "Move topic"));
    return header;
  }

  #recipientLabel(m: Message): string {
    if (m.type === "stream") return `#${this.state.channelName(m.stream_id ?? 0)} › ${m.subject}`;
    const names = dmUserIds(m, this.state.me).map((id) => this.state.userName(id));
    return `Direct message with ${names.join(", ")}`;
  }

  #reactions(m: Message): HTMLElement {
    const groups = new Map<string, { name: string; code: string; type: string; users: number[] }>();
    for (const r of m.reactions) {
      const key = `${r.reaction_type}:${r.emoji_code}`;
      const g = groups.get(key) ?? { name: r.emoji_name, code: r.emoji_code, type: r.reaction_type, users: [] };
      g.users.push(r.user_id);
      groups.set(key, g);
    }
    const box = h("div", { class: "reactions" });
    for (const g of groups.values()) {
      const mine = g.users.includes(this.state.me);
      const who = g.users.map((id) => (id === this.state.me ? "you" : this.state.userName(id))).join(", ");
      box.append(
        h(
          "button",
          {
            type: "button",
            class: "reaction",
            "data-action": "toggle-reaction",
            "data-name": g.name,
            "data-code": g.code,
            "data-type": g.type,
            "aria-pressed": String(mine),
            "aria-label": `${g.name} by ${who}`,
            title: `:${g.name}: by ${who}`,
          },
          h("span", { class: "glyph", "aria-hidden": "true" }, emojiElement(g, this.state.realmEmoji)),
          h("span", { class: "count" }, String(g.users.length)),
        ),
      );
    }
    return box;
  }

  #onClick(ev: MouseEvent): void {
    const target = ev.target instanceof Element ? ev.target.closest("button[data-action]") : null;
    const li = ev.target instanceof Element ? ev.target.closest("li.msg") : null;
    if (!(li instanceof HTMLLIElement)) return;
    const id = Number(li.dataset["id"]);
    const m = this.#messages.find((x) => x.id === id);
    if (!m) return;
    this.#select(id, false);
    if (!(target instanceof HTMLButtonElement)) return;
    const action = target.dataset["action"];
    if (action === "star") void this.toggleStar(m);
    else if (action === "picker") this.#togglePicker(li, target);
    else if (action === "edit") void this.edit(m);
    else if (action === "more") this.hooks.onMore?.(m);
    else if (action === "user-card") this.hooks.onUser?.(m.sender_id);
    else if (action === "delete") void this.#delete(m, li);
    else if (action === "move" || action === "move-topic") void this.#move(m, action === "move-topic");
    else if (action === "resolve")
      toggleResolve(this.api, m).catch((error: unknown) =>
        this.hooks.onError(
          error instanceof Error ? error.message : `Could not rename the topic to ${toggledTopic(m.subject)}`,
        ),
      );
    else if (action === "more-reactions") {
      li.querySelector(".picker")?.remove();
      void openEmojiPicker(this.state, "Add a reaction", (e) =>
        this.api
          .post(`/messages/${id}/reactions`, { emoji_name: e.name })
          .catch((error: unknown) => this.hooks.onError(error instanceof Error ? error.message : "Reaction failed")),
      );
    } else if (action === "toggle-reaction" || action === "add-reaction") {
      const name = target.dataset["name"] ?? "";
      const mine = m.reactions.some((r) => r.user_id === this.state.me && r.emoji_name === name);
      li.querySelector(".picker")?.remove();
      const params = { emoji_name: name };
      const call = mine
        ? this.api.delete(`/messages/${id}/reactions`, params)
        : this.api.post(`/messages/${id}/reactions`, params);
      call.catch((error: unknown) => this.hooks.onError(error instanceof Error ? error.message : "Reaction failed"));
    }
  }

  /** Stops marking messages read by showing them, until another narrow opens. */
  holdReading(): void {
    this.#readingHeld = true;
    this.#observer.disconnect();
    this.#toMark.clear();
  }

  /** Opens the in-place editor for one of the reader's messages (e on the selected one). */
  async edit(m: Message): Promise<void> {
    const open = this.#editors.get(m.id);
    if (open) {
      open.focus();
      return;
    }
    if (!this.#actionsFor(m).edit) {
      this.hooks.onError("You can no longer edit this message.");
      this.#rerender(m.id);
      return;
    }
    const editor = new MessageEditor(this.api, m.id, () => {
      if (this.#editors.get(m.id) !== editor) return;
      this.#editors.delete(m.id);
      this.#rerender(m.id);
      this.#els.get(m.id)?.focus({ preventScroll: true });
    });
    this.#editors.set(m.id, editor);
    this.#rerender(m.id);
    await editor.load();
  }

  /** Edits the selected message, when the reader may (the e key). */
  editSelected(): void {
    const m = this.selectedMessage();
    if (m && this.#actionsFor(m).edit) void this.edit(m);
  }

  async #delete(m: Message, li: HTMLLIElement): Promise<void> {
    const preview = li.querySelector(".content")?.textContent ?? "";
    await confirmDelete(this.api, m, preview.trim());
  }

  async #move(m: Message, wholeTopic: boolean): Promise<void> {
    await openMoveDialog(this.api, this.state, m, this.#actionsFor(m), wholeTopic);
  }

  /** Redraws every row (permissions became known or changed, or the time format did). */
  redrawRows(): void {
    for (const m of this.#messages) this.#rerender(m.id);
  }

  #togglePicker(li: HTMLLIElement, button: HTMLButtonElement): void {
    const open = li.querySelector(".picker");
    if (open) {
      open.remove();
      button.setAttribute("aria-expanded", "false");
      return;
    }
    const picker = h("div", { class: "picker", role: "group", "aria-label": "Choose a reaction" });
    for (const [name, code] of QUICK_REACTIONS) {
      picker.append(
        h(
          "button",
          { type: "button", "data-action": "add-reaction", "data-name": name, "aria-label": name, title: `:${name}:` },
          emojiElement({ type: "unicode_emoji", code, name }, this.state.realmEmoji),
        ),
      );
    }
    picker.append(
      h(
        "button",
        { type: "button", class: "more-emoji", "data-action": "more-reactions", "aria-label": "More emoji" },
        "More…",
      ),
    );
    button.setAttribute("aria-expanded", "true");
    li.querySelector(".meta")?.after(picker);
    picker.querySelector("button")?.focus();
  }

  /** Closes an open reaction picker; true when one was open (Esc). */
  closePicker(): boolean {
    const open = this.#list.querySelector(".picker");
    if (!open) return false;
    const li = open.closest("li");
    open.remove();
    li?.querySelector("button[data-action=picker]")?.setAttribute("aria-expanded", "false");
    if (li instanceof HTMLLIElement) li.focus();
    return true;
  }

  async toggleStar(m: Message): Promise<void> {
    const starred = m.flags.includes("starred");
    try {
      await this.api.post("/messages/flags", { messages: [m.id], op: starred ? "remove" : "add", flag: "starred" });
    } catch (error) {
      this.hooks.onError(error instanceof Error ? error.message : "Could not star");
    }
  }

  #onVisible(entries: IntersectionObserverEntry[]): void {
    if (document.visibilityState !== "visible" || !this.#scroller.isConnected) return;
    for (const entry of entries) {
      const rootHeight = entry.rootBounds?.height ?? 0;
      // Mostly visible, or filling half the view for messages taller than it.
      if (entry.intersectionRatio >= 0.5 || entry.intersectionRect.height >= rootHeight / 2) {
        const id = Number((entry.target as HTMLElement).dataset["id"]);
        this.#observer.unobserve(entry.target);
        this.#toMark.add(id);
      }
    }
    if (this.#toMark.size > 0 && this.#markTimer === null)
      this.#markTimer = window.setTimeout(() => this.#flushRead(), 150);
  }

  #flushRead(): void {
    this.#markTimer = null;
    const ids = [...this.#toMark];
    this.#toMark.clear();
    if (ids.length === 0) return;
    this.hooks.onMarkedRead(ids);
    for (const id of ids) {
      const m = this.#messages.find((x) => x.id === id);
      if (m && !m.flags.includes("read")) m.flags.push("read");
      this.#els.get(id)?.classList.remove("unread");
    }
    this.api
      .post("/messages/flags", { messages: ids, op: "add", flag: "read" })
      .catch((error: unknown) => this.hooks.onError(error instanceof Error ? error.message : "Could not mark read"));
  }

  /** Live updates for the open list. */
  apply(e: ServerEvent): void {
    switch (e.type) {
      case "message": {
        const m = { ...(e["message"] as Message), flags: [...((e["flags"] ?? []) as string[])] };
        m.reactions = [...(m.reactions ?? [])];
        if (
          !this.#foundNewest ||
          this.#loading ||
          this.#els.has(m.id) ||
          matches(this.#narrow, m, this.state.me) !== true
        )
          return;
        const s = this.#scroller;
        const atBottom = s.scrollHeight - s.scrollTop - s.clientHeight < 80;
        if (this.#messages.length >= MAX_RENDERED && !atBottom) {
          // The reader is up in history: the message is fetched when they scroll down.
          this.#foundNewest = false;
          return;
        }
        this.#append([m]);
        if (atBottom || m.sender_id === this.state.me) s.scrollTop = s.scrollHeight;
        return;
      }
      case "update_message_flags": {
        const flag = String(e["flag"]);
        const add = e["op"] === "add";
        const ids = e["all"] === true ? this.#messages.map((m) => m.id) : ((e["messages"] ?? []) as number[]);
        for (const id of ids) {
          const m = this.#messages.find((x) => x.id === id);
          if (!m) continue;
          const has = m.flags.includes(flag);
          if (add && !has) m.flags.push(flag);
          if (!add && has) m.flags = m.flags.filter((f) => f !== flag);
          if (flag === "starred" || (flag === "read" && !add)) this.#rerender(id);
          else if (flag === "read") this.#els.get(id)?.classList.remove("unread");
        }
        return;
      }
      case "reaction": {
        const m = this.#messages.find((x) => x.id === Number(e["message_id"]));
        if (!m) return;
        const r: Reaction = {
          emoji_name: String(e["emoji_name"]),
          emoji_code: String(e["emoji_code"]),
          reaction_type: String(e["reaction_type"]),
          user_id: Number(e["user_id"]),
        };
        const same = (x: Reaction) =>
          x.user_id === r.user_id && x.emoji_code === r.emoji_code && x.reaction_type === r.reaction_type;
        if (e["op"] === "add" && !m.reactions.some(same)) m.reactions.push(r);
        if (e["op"] === "remove") m.reactions = m.reactions.filter((x) => !same(x));
        const el = this.#els.get(m.id);
        el?.querySelector(".reactions")?.replaceWith(this.#reactions(m));
        return;
      }
      case "delete_message": {
        for (const id of deletedIdsOf(e)) this.#remove(id);
        return;
      }
      case "update_message": {
        const edit = contentEditOf(e);
        const i = edit ? this.#messages.findIndex((x) => x.id === edit.id) : -1;
        const m = this.#messages[i];
        if (edit && m) {
          const edited = edit.renderingOnly || edit.editedAt === null ? {} : { last_edit_timestamp: edit.editedAt };
          this.#messages[i] = { ...m, ...edited, content: edit.renderedContent, flags: [...(edit.flags ?? m.flags)] };
          this.#rerender(m.id);
        }
        const move = moveOf(e);
        if (move) this.#applyMove(move);
        return;
      }
      default:
        return;
    }
  }

  /** Takes a message out of the list (deleted, or moved out of this narrow). */
  #remove(id: number): void {
    this.#editors.delete(id);
    const i = this.#messages.findIndex((m) => m.id === id);
    if (i < 0) return;
    // The reader was on it (its delete button, say): keep them in the list.
    const focused = this.#els.get(id)?.contains(document.activeElement) === true;
    this.#messages.splice(i, 1);
    this.#drop(id);
    const next = this.#messages[i];
    if (next) this.#rerender(next.id);
    const neighbour = next ?? this.#messages[i - 1];
    if (focused && neighbour) this.#select(neighbour.id, true);
    if (this.#messages.length === 0) this.#notice.textContent = "No messages here yet.";
  }

  /**
   * Messages moved: those shown get their new channel and topic, and leave when this
   * narrow no longer holds them; when some that were not shown moved into the range
   * shown, the page is fetched again (only the server knows where they fall).
   */
  #applyMove(move: Move): void {
    const moved = new Set(move.ids);
    const resolveToggle = move.fromStream === move.toStream && toggledTopic(move.fromTopic) === move.toTopic;
    const placed: Partial<Message> = {
      stream_id: move.toStream,
      subject: move.toTopic,
      display_recipient: this.state.channelName(move.toStream),
      ...(move.movedAt !== null && !resolveToggle ? { last_moved_timestamp: move.movedAt } : {}),
    };
    const gone: number[] = [];
    const redraw = new Set<number>();
    let shown = 0;
    this.#messages.forEach((m, i) => {
      if (!moved.has(m.id)) return;
      shown++;
      const after: Message = { ...m, ...placed };
      this.#messages[i] = after;
      if (matches(this.#narrow, after, this.state.me) === false) gone.push(m.id);
      else {
        redraw.add(m.id);
        // The next message's header depends on this one's conversation.
        const next = this.#messages[i + 1];
        if (next) redraw.add(next.id);
      }
    });
    for (const id of gone) this.#remove(id);
    for (const id of redraw) this.#rerender(id);
    if (shown === move.ids.length || this.#loading) return;
    if (!holdsConversation(this.#narrow, move.toStream, move.toTopic)) return;
    const first = this.#messages[0];
    const last = this.#messages[this.#messages.length - 1];
    const inRange = move.ids.some(
      (id) => !first || !last || (id >= first.id && id <= last.id) || (this.#foundNewest && id > last.id),
    );
    if (inRange) void this.open(this.#narrow);
  }

  /** The selected message, else the newest one shown. */
  selectedMessage(): Message | undefined {
    return this.#messages.find((m) => m.id === this.#selected) ?? this.#messages[this.#messages.length - 1];
  }

  /** j/k: the next or previous message, focused for screen readers. */
  move(delta: 1 | -1): void {
    if (this.#messages.length === 0) return;
    const i = this.#messages.findIndex((m) => m.id === this.#selected);
    const next =
      this.#messages[i < 0 ? this.#messages.length - 1 : Math.min(this.#messages.length - 1, Math.max(0, i + delta))];
    if (next) this.#select(next.id, true);
    if (delta < 0 && i <= 0 && !this.#foundOldest) void this.#loadOlder();
    if (delta > 0 && i === this.#messages.length - 1 && !this.#foundNewest) void this.#loadNewer();
  }

  focusSelected(): void {
    const m = this.selectedMessage();
    if (m) this.#select(m.id, true);
    else this.#scroller.focus();
  }

  #select(id: number, focus: boolean): void {
    if (this.#selected !== null) this.#els.get(this.#selected)?.classList.remove("selected");
    this.#selected = id;
    const el = this.#els.get(id);
    if (!el) return;
    el.classList.add("selected");
    if (focus) {
      el.focus({ preventScroll: true });
      el.scrollIntoView({ block: "nearest" });
    }
  }

  /** Leaves the list for another view (Inbox): nothing here is shown, so nothing is read or appended. */
  suspend(): void {
    this.#generation++;
    this.#loading = false;
    this.#foundNewest = false;
    this.#reset([]);
  }

  /** Closes the list (logout): stops observing. */
  destroy(): void {
    this.#observer.disconnect();
    if (this.#markTimer !== null) clearTimeout(this.#markTimer);
    this.#generation++;
  }
}
