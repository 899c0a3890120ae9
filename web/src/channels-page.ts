/**
 * The channel browser: every channel this user can see (GET /streams), with
 * subscribe/unsubscribe and mute toggles, a filter, and a form to create one. The
 * subscription events that follow a change redraw it, so a second tab or a second
 * user sees a new channel appear.
 */
import { field } from "./dialogs.js";
import { h } from "./dom.js";
import { errorText, type Page, type PageContext } from "./pages.js";
import type { ServerEvent } from "./types.js";

interface ChannelRow {
  readonly stream_id: number;
  readonly name: string;
  readonly description: string;
  readonly invite_only: boolean;
}

function rowsOf(reply: Record<string, unknown>): ChannelRow[] {
  const streams = Array.isArray(reply["streams"]) ? (reply["streams"] as Record<string, unknown>[]) : [];
  return streams.map((s) => ({
    stream_id: Number(s["stream_id"]),
    name: String(s["name"] ?? ""),
    description: String(s["description"] ?? ""),
    invite_only: s["invite_only"] === true,
  }));
}

export class ChannelsPage implements Page {
  readonly element = h("section", { class: "page channels-page", "aria-label": "All channels" });
  readonly #list = h("ul", { class: "page-list", "aria-label": "Channels" });
  readonly #filter = h("input", { id: "channel-filter", type: "search", autocomplete: "off" });
  readonly #status = h("p", { class: "list-notice", role: "status" });
  #rows: ChannelRow[] = [];

  constructor(private readonly ctx: PageContext) {
    this.#filter.addEventListener("input", () => this.#draw());
    this.element.append(
      h(
        "div",
        { class: "page-tools" },
        h("label", { for: "channel-filter" }, "Filter channels"),
        this.#filter,
        h("button", { type: "button", class: "primary", onclick: () => this.#showCreate() }, "Create channel"),
      ),
      this.#createForm(),
      this.#status,
      this.#list,
    );
    void this.#load();
  }

  async #load(): Promise<void> {
    this.#status.textContent = "Loading channels…";
    try {
      this.#rows = rowsOf(await this.ctx.api.get("/streams", { include_public: true, include_subscribed: true }));
      this.#status.textContent = "";
    } catch (error) {
      this.#status.textContent = errorText(error, "Could not load channels");
    }
    this.#draw();
  }

  onEvents(events: readonly ServerEvent[]): void {
    if (events.some((e) => e.type === "subscription" || e.type === "stream")) void this.#load();
  }

  #draw(): void {
    const needle = this.#filter.value.trim().toLowerCase();
    const state = this.ctx.state;
    const rows = this.#rows.filter((r) => needle === "" || r.name.toLowerCase().includes(needle));
    const focused = document.activeElement instanceof HTMLElement ? document.activeElement.dataset["key"] : undefined;
    this.#list.replaceChildren(
      ...rows.map((r) => {
        const sub = state.subs.get(r.stream_id);
        const muted = sub?.is_muted === true;
        const buttons = h(
          "span",
          { class: "row-buttons" },
          h(
            "button",
            {
              type: "button",
              class: sub ? "secondary" : "primary",
              "data-key": `sub:${r.stream_id}`,
              "aria-label": `${sub ? "Unsubscribe from" : "Subscribe to"} ${r.name}`,
              onclick: () => void this.#toggleSubscribed(r, sub !== undefined),
            },
            sub ? "Unsubscribe" : "Subscribe",
          ),
          sub
            ? h(
                "button",
                {
                  type: "button",
                  class: "secondary",
                  "data-key": `mute:${r.stream_id}`,
                  "aria-pressed": String(muted),
                  "aria-label": `Mute ${r.name}`,
                  onclick: () => void this.#setMuted(r, !muted),
                },
                muted ? "Muted" : "Mute",
              )
            : null,
        );
        return h(
          "li",
          { class: "page-row", "data-channel": r.name },
          h(
            "span",
            { class: "row-main" },
            h(
              "button",
              {
                type: "button",
                class: "link-button",
                onclick: () => this.ctx.open({ kind: "channel", streamId: r.stream_id }),
              },
              `#${r.name}`,
            ),
            r.invite_only ? h("span", { class: "row-detail" }, "Private channel") : null,
            r.description !== "" ? h("span", { class: "row-detail" }, r.description) : null,
          ),
          buttons,
        );
      }),
    );
    if (rows.length === 0 && this.#status.textContent === "") this.#status.textContent = "No channels match.";
    else if (rows.length > 0 && this.#status.textContent === "No channels match.") this.#status.textContent = "";
    if (focused !== undefined)
      for (const b of this.#list.querySelectorAll<HTMLElement>("button[data-key]"))
        if (b.dataset["key"] === focused) b.focus();
  }

  async #toggleSubscribed(r: ChannelRow, subscribed: boolean): Promise<void> {
    try {
      if (subscribed) await this.ctx.api.delete("/users/me/subscriptions", { subscriptions: [r.name] });
      else await this.ctx.api.post("/users/me/subscriptions", { subscriptions: [{ name: r.name }] });
    } catch (error) {
      this.ctx.error(errorText(error, "Could not change the subscription"));
    }
  }

  async #setMuted(r: ChannelRow, muted: boolean): Promise<void> {
    try {
      await this.ctx.api.post("/users/me/subscriptions/properties", {
        subscription_data: [{ stream_id: r.stream_id, property: "is_muted", value: muted }],
      });
    } catch (error) {
      this.ctx.error(errorText(error, "Could not mute the channel"));
    }
  }

  #createForm(): HTMLElement {
    const name = h("input", { name: "name", required: true, maxlength: "60", autocomplete: "off" });
    const description = h("input", { name: "description", maxlength: "1024", autocomplete: "off" });
    const priv = h("input", { type: "checkbox", name: "invite_only" });
    const error = h("p", { class: "error-line", role: "alert" });
    const form = h(
      "form",
      { class: "create-channel", id: "create-channel", hidden: true, "aria-label": "Create a channel" },
      h("h2", {}, "Create a channel"),
      field("Name", name),
      field("Description", description),
      h("label", { class: "check-field" }, priv, h("span", {}, "Private (invited people only)")),
      error,
      h(
        "div",
        { class: "dialog-buttons" },
        h("button", { type: "button", class: "secondary", onclick: () => (form.hidden = true) }, "Cancel"),
        h("button", { type: "submit", class: "primary" }, "Create"),
      ),
    );
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      error.textContent = "";
      const channel = name.value.trim();
      this.ctx.api
        .post("/users/me/subscriptions", {
          subscriptions: [{ name: channel, description: description.value.trim() }],
          invite_only: priv.checked,
        })
        .then(() => {
          form.hidden = true;
          name.value = "";
          description.value = "";
          void this.#load();
        })
        .catch((e: unknown) => (error.textContent = errorText(e, "Could not create the channel")));
    });
    return form;
  }

  #showCreate(): void {
    const form = this.element.querySelector<HTMLFormElement>("#create-channel");
    if (!form) return;
    form.hidden = false;
    form.querySelector("input")?.focus();
  }
}
