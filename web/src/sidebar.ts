/**
 * The left pane (views, channels with the open channel's topics newest first, DM
 * conversations) and
 * the Inbox view (unread conversations). Both are redrawn whole from ClientState — a
 * few hundred elements at most, since every list is capped — keeping keyboard focus.
 */
import { h } from "./dom.js";
import { dmKey, sameNarrow, topicKey, type Narrow } from "./narrow.js";
import type { ClientState } from "./state.js";
import { topicsToShow } from "./topics.js";

export type View = { readonly kind: "inbox" } | Narrow;

const DMS_SHOWN = 25;

export interface SidebarOptions {
  /** The channel whose every topic is listed, not only the newest. */
  readonly allTopicsOf: number | null;
  readonly onToggleTopics: (streamId: number) => void;
}

function badge(count: number): HTMLElement | null {
  return count > 0
    ? h("span", { class: "badge" }, String(count), h("span", { class: "visually-hidden" }, " unread"))
    : null;
}

function item(
  label: Node | string,
  count: number,
  view: View,
  current: View,
  data: Record<string, string>,
  onOpen: (v: View) => void,
  extraClass = "",
): HTMLLIElement {
  const active = current.kind === "inbox" ? view.kind === "inbox" : view.kind !== "inbox" && sameNarrow(view, current);
  const attrs: Record<string, string | EventListener> = {
    type: "button",
    class: `nav-item${extraClass}`,
    onclick: () => onOpen(view),
  };
  for (const [k, v] of Object.entries(data)) attrs[`data-${k}`] = v;
  if (active) attrs["aria-current"] = "page";
  return h("li", {}, h("button", attrs, h("span", { class: "label" }, label), badge(count)));
}

export function dmLabel(state: ClientState, userIds: readonly number[]): string {
  return userIds.map((id) => (id === state.me ? `${state.userName(id)} (you)` : state.userName(id))).join(", ");
}

export function renderSidebar(
  root: HTMLElement,
  state: ClientState,
  current: View,
  onOpen: (v: View) => void,
  options: SidebarOptions = { allTopicsOf: null, onToggleTopics: () => undefined },
): void {
  const focusedKey =
    document.activeElement instanceof HTMLElement && root.contains(document.activeElement)
      ? document.activeElement.dataset["key"]
      : undefined;
  const u = state.unreads;
  const views = h(
    "ul",
    { class: "nav-list" },
    item("Inbox", u.total, { kind: "inbox" }, current, { key: "view:inbox" }, onOpen),
    item("Combined feed", 0, { kind: "all" }, current, { key: "view:all" }, onOpen),
    item("Mentions", u.mentions, { kind: "mentions" }, current, { key: "view:mentions" }, onOpen),
    item("Starred", 0, { kind: "starred" }, current, { key: "view:starred" }, onOpen),
  );
  const openChannel = current.kind === "channel" || current.kind === "topic" ? current.streamId : null;
  const channels = h("ul", { class: "nav-list" });
  for (const sub of [...state.subs.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    const swatch = h("span", { class: "swatch", "aria-hidden": "true" });
    // CSSOM, not a style attribute: the page's CSP allows no inline styles.
    if (/^#[0-9a-fA-F]{3,8}$/.test(sub.color)) swatch.style.backgroundColor = sub.color;
    const li = item(
      h("span", {}, swatch, sub.name),
      state.channelUnread(sub.stream_id),
      { kind: "channel", streamId: sub.stream_id },
      current,
      { key: `channel:${sub.stream_id}`, "channel-id": String(sub.stream_id) },
      onOpen,
    );
    if (sub.stream_id === openChannel) {
      const expanded = options.allTopicsOf === sub.stream_id;
      const { shown, total } = topicsToShow(state, sub.stream_id, expanded);
      const listId = `topics-${sub.stream_id}`;
      const topics = h("ul", { class: "topics", id: listId, "aria-label": `Topics in ${sub.name}` });
      for (const { name } of shown) {
        topics.append(
          item(
            name,
            u.conversation(topicKey(sub.stream_id, name)),
            { kind: "topic", streamId: sub.stream_id, topic: name },
            current,
            { key: `topic:${topicKey(sub.stream_id, name)}`, topic: name },
            onOpen,
            " topic",
          ),
        );
      }
      li.append(topics);
      if (expanded || total > shown.length)
        li.append(
          h(
            "button",
            {
              type: "button",
              class: "more-topics",
              "data-key": `more-topics:${sub.stream_id}`,
              "aria-expanded": String(expanded),
              "aria-controls": listId,
              onclick: () => options.onToggleTopics(sub.stream_id),
            },
            expanded ? "Fewer topics" : `All topics (${total})`,
          ),
        );
    }
    channels.append(li);
  }
  const dms = h("ul", { class: "nav-list" });
  for (const c of [...state.dms.values()].sort((a, b) => b.maxId - a.maxId).slice(0, DMS_SHOWN)) {
    const key = dmKey(c.userIds);
    dms.append(
      item(
        dmLabel(state, c.userIds),
        u.conversation(key),
        { kind: "dm", userIds: c.userIds },
        current,
        { key: `dm:${key}`, "dm-key": key },
        onOpen,
      ),
    );
  }
  root.replaceChildren(
    h("nav", { "aria-label": "Views" }, views),
    h("nav", { "aria-labelledby": "channels-heading" }, h("h2", { id: "channels-heading" }, "Channels"), channels),
    h("nav", { "aria-labelledby": "dms-heading" }, h("h2", { id: "dms-heading" }, "Direct messages"), dms),
  );
  if (focusedKey !== undefined) {
    for (const b of root.querySelectorAll<HTMLElement>("button[data-key]"))
      if (b.dataset["key"] === focusedKey) b.focus();
  }
}

/** Inbox: every conversation with unread messages, newest first. */
export function renderInbox(root: HTMLElement, state: ClientState, onOpen: (v: View) => void): void {
  const focusedKey =
    document.activeElement instanceof HTMLElement && root.contains(document.activeElement)
      ? document.activeElement.dataset["key"]
      : undefined;
  const convs = state.unreads
    .conversations()
    .filter((c) => c.conv.streamId === null || !state.isMutedTopic(c.conv.streamId, c.conv.topic))
    .slice(0, 300);
  if (convs.length === 0) {
    root.replaceChildren(h("p", { class: "list-notice" }, "You have no unread messages."));
    return;
  }
  const list = h("ul", { class: "inbox", "aria-label": "Unread conversations" });
  for (const { conv, count } of convs) {
    const view: View =
      conv.streamId !== null
        ? { kind: "topic", streamId: conv.streamId, topic: conv.topic }
        : { kind: "dm", userIds: conv.userIds };
    const label =
      conv.streamId !== null ? `#${state.channelName(conv.streamId)} › ${conv.topic}` : dmLabel(state, conv.userIds);
    list.append(
      h(
        "li",
        {},
        h(
          "button",
          { type: "button", class: "inbox-item", "data-key": conv.key, onclick: () => onOpen(view) },
          h("span", { class: "label" }, label),
          badge(count),
        ),
      ),
    );
  }
  root.replaceChildren(list);
  // Redrawn on every event: keep the reader's place.
  if (focusedKey !== undefined)
    for (const b of list.querySelectorAll<HTMLElement>("button[data-key]"))
      if (b.dataset["key"] === focusedKey) b.focus();
}
