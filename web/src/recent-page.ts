/**
 * Recent conversations: the newest messages this user can read (one GET /messages of
 * the combined feed) grouped into topics and DM conversations, newest first, with who
 * took part and the unread count. New messages move their conversation to the top.
 */
import { h } from "./dom.js";
import { conversationKey, conversationOf, type Narrow } from "./narrow.js";
import { errorText, type Page, type PageContext } from "./pages.js";
import { dmLabel } from "./sidebar.js";
import type { Message, ServerEvent } from "./types.js";
import { listDateTime } from "./time-format.js";

const MESSAGES_READ = 1000;
const ROWS_SHOWN = 200;

interface Row {
  readonly key: string;
  readonly narrow: Narrow;
  latest: Message;
  readonly senders: Set<number>;
}

export class RecentPage implements Page {
  readonly element = h("section", { class: "page recent-page", "aria-label": "Recent conversations" });
  readonly #list = h("ul", { class: "page-list", "aria-label": "Conversations" });
  readonly #status = h("p", { class: "list-notice", role: "status" });
  readonly #rows = new Map<string, Row>();

  constructor(private readonly ctx: PageContext) {
    this.element.append(this.#status, this.#list);
    void this.#load();
  }

  async #load(): Promise<void> {
    this.#status.textContent = "Loading conversations…";
    try {
      const reply = await this.ctx.api.get("/messages", {
        anchor: "newest",
        num_before: MESSAGES_READ,
        num_after: 0,
        narrow: [],
        apply_markdown: false,
        client_gravatar: true,
      });
      for (const m of (reply["messages"] ?? []) as Message[]) this.#note(m);
      this.#status.textContent = this.#rows.size === 0 ? "No conversations yet." : "";
    } catch (error) {
      this.#status.textContent = errorText(error, "Could not load conversations");
    }
    this.#draw();
  }

  #note(m: Message): void {
    const key = conversationKey(m, this.ctx.state.me);
    const row = this.#rows.get(key);
    if (!row) {
      this.#rows.set(key, {
        key,
        narrow: conversationOf(m, this.ctx.state.me),
        latest: m,
        senders: new Set([m.sender_id]),
      });
      return;
    }
    row.senders.add(m.sender_id);
    if (m.id > row.latest.id) row.latest = m;
  }

  onEvents(events: readonly ServerEvent[]): void {
    let changed = false;
    for (const e of events) {
      if (e.type === "message") this.#note(e["message"] as Message);
      if (e.type === "message" || e.type === "update_message_flags") changed = true;
    }
    if (changed) this.#draw();
  }

  #draw(): void {
    const state = this.ctx.state;
    const rows = [...this.#rows.values()].sort((a, b) => b.latest.id - a.latest.id).slice(0, ROWS_SHOWN);
    this.#list.replaceChildren(
      ...rows.map((r) => {
        const n = r.narrow;
        const label =
          n.kind === "topic"
            ? `#${state.channelName(n.streamId)} › ${n.topic}`
            : n.kind === "dm"
              ? dmLabel(state, n.userIds)
              : r.key;
        const unread = state.unreads.conversation(r.key);
        const when = new Date(r.latest.timestamp * 1000);
        const people = [...r.senders].map((id) => state.userName(id)).join(", ");
        return h(
          "li",
          { class: "page-row", "data-key": r.key },
          h(
            "button",
            { type: "button", class: "row-main link-button recent-open", onclick: () => this.ctx.open(n) },
            h("span", { class: "label" }, label),
            h("span", { class: "row-detail" }, people),
          ),
          unread > 0
            ? h("span", { class: "badge" }, String(unread), h("span", { class: "visually-hidden" }, " unread"))
            : null,
          h("time", { class: "row-detail", datetime: when.toISOString() }, listDateTime(when)),
        );
      }),
    );
  }
}
