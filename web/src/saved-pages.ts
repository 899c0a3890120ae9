/**
 * Messages not sent yet: drafts (GET /drafts, the ones the server keeps for this
 * user) and scheduled messages (GET /scheduled_messages). A draft can be restored into
 * the compose box of its conversation or deleted; a scheduled message deleted.
 */
import { h } from "./dom.js";
import type { Narrow } from "./narrow.js";
import { errorText, type Page, type PageContext } from "./pages.js";
import { dmLabel } from "./sidebar.js";
import type { ServerEvent } from "./types.js";
import { listDateTime } from "./time-format.js";

interface Saved {
  readonly id: number;
  readonly narrow: Narrow;
  readonly content: string;
  /** Seconds: when it was saved (drafts) or when it will be sent (scheduled). */
  readonly time: number;
  readonly failed: boolean;
}

function narrowOf(type: unknown, to: unknown, topic: unknown, me: number): Narrow {
  const ids = Array.isArray(to) ? to.map(Number) : [Number(to)];
  if (type === "stream" || type === "channel")
    return { kind: "topic", streamId: ids[0] ?? 0, topic: String(topic ?? "") };
  const others = ids.filter((id) => id !== me);
  return { kind: "dm", userIds: (others.length > 0 ? others : [me]).sort((a, b) => a - b) };
}

abstract class SavedPage implements Page {
  readonly element: HTMLElement;
  readonly #list = h("ul", { class: "page-list" });
  readonly #status = h("p", { class: "list-notice", role: "status" });

  constructor(
    protected readonly ctx: PageContext,
    label: string,
  ) {
    this.element = h("section", { class: "page saved-page", "aria-label": label }, this.#status, this.#list);
    this.#list.setAttribute("aria-label", label);
    void this.load();
  }

  protected abstract fetch(): Promise<Saved[]>;
  protected abstract remove(item: Saved): Promise<void>;
  protected abstract readonly empty: string;
  protected abstract readonly timeLabel: string;
  protected restore(_item: Saved): void {}
  protected readonly restorable: boolean = false;

  async load(): Promise<void> {
    try {
      const items = await this.fetch();
      this.#status.textContent = items.length === 0 ? this.empty : "";
      this.#draw(items.sort((a, b) => b.time - a.time));
    } catch (error) {
      this.#status.textContent = errorText(error, "Could not load");
    }
  }

  #draw(items: readonly Saved[]): void {
    const state = this.ctx.state;
    this.#list.replaceChildren(
      ...items.map((item) => {
        const n = item.narrow;
        const where =
          n.kind === "topic"
            ? `#${state.channelName(n.streamId)} › ${n.topic}`
            : n.kind === "dm"
              ? dmLabel(state, n.userIds)
              : "";
        const when = new Date(item.time * 1000);
        return h(
          "li",
          { class: "page-row saved-item", "data-id": item.id },
          h(
            "span",
            { class: "row-main" },
            h("span", { class: "label" }, where),
            h("span", { class: "saved-content" }, item.content),
            h(
              "span",
              { class: "row-detail" },
              `${this.timeLabel} `,
              h("time", { datetime: when.toISOString() }, listDateTime(when)),
              item.failed ? " (failed to send)" : "",
            ),
          ),
          h(
            "span",
            { class: "row-buttons" },
            this.restorable
              ? h("button", { type: "button", class: "secondary", onclick: () => this.restore(item) }, "Restore")
              : null,
            h(
              "button",
              {
                type: "button",
                class: "danger",
                onclick: () =>
                  void this.remove(item).then(
                    () => this.load(),
                    (e: unknown) => this.ctx.error(errorText(e, "Could not delete")),
                  ),
              },
              "Delete",
            ),
          ),
        );
      }),
    );
  }
}

export class DraftsPage extends SavedPage {
  protected readonly empty = "No drafts.";
  protected readonly timeLabel = "Saved";
  protected override readonly restorable = true;

  constructor(ctx: PageContext) {
    super(ctx, "Drafts");
  }

  onEvents(events: readonly ServerEvent[]): void {
    if (events.some((e) => e.type === "drafts")) void this.load();
  }

  protected async fetch(): Promise<Saved[]> {
    const reply = await this.ctx.api.get("/drafts");
    const drafts = Array.isArray(reply["drafts"]) ? (reply["drafts"] as Record<string, unknown>[]) : [];
    return drafts.map((d) => ({
      id: Number(d["id"]),
      narrow: narrowOf(d["type"], d["to"], d["topic"], this.ctx.state.me),
      content: String(d["content"] ?? ""),
      time: Number(d["timestamp"] ?? 0),
      failed: false,
    }));
  }

  protected async remove(item: Saved): Promise<void> {
    await this.ctx.api.delete(`/drafts/${item.id}`);
  }

  protected override restore(item: Saved): void {
    this.ctx.compose(item.narrow, item.content);
  }
}

export class ScheduledPage extends SavedPage {
  protected readonly empty = "No scheduled messages.";
  protected readonly timeLabel = "Sends at";

  constructor(ctx: PageContext) {
    super(ctx, "Scheduled messages");
  }

  onEvents(events: readonly ServerEvent[]): void {
    if (events.some((e) => e.type === "scheduled_messages")) void this.load();
  }

  protected async fetch(): Promise<Saved[]> {
    const reply = await this.ctx.api.get("/scheduled_messages");
    const list = Array.isArray(reply["scheduled_messages"])
      ? (reply["scheduled_messages"] as Record<string, unknown>[])
      : [];
    return list.map((s) => ({
      id: Number(s["scheduled_message_id"]),
      narrow: narrowOf(s["type"], s["to"], s["topic"], this.ctx.state.me),
      content: String(s["content"] ?? ""),
      time: Number(s["scheduled_delivery_timestamp"] ?? 0),
      failed: s["failed"] === true,
    }));
  }

  protected async remove(item: Saved): Promise<void> {
    await this.ctx.api.delete(`/scheduled_messages/${item.id}`);
  }
}
