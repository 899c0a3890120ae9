/**
 * A message's "more actions" menu (a modal dialog, so it works the same by touch and
 * keyboard): quote and reply, copy a link to the message, mark unread from here (every
 * message from this one on in the open view, with Zulip's flags-for-narrow update), and
 * mute or unmute the message's topic (a user_topic visibility policy).
 */
import type { Api } from "./api.js";
import { h } from "./dom.js";
import { hashOf } from "./hash.js";
import { conversationOf, termsOf, type Narrow } from "./narrow.js";
import { errorText } from "./pages.js";
import type { ClientState } from "./state.js";
import type { Message } from "./types.js";

/** Zulip's user_topic visibility policies. */
export const VISIBILITY = { inherit: 0, muted: 1, unmuted: 2, followed: 3 } as const;

export interface MenuHooks {
  compose(target: Narrow, text: string): void;
  error(text: string): void;
  /** Whether the topic is muted as far as this client knows. */
  isTopicMuted(streamId: number, topic: string): boolean;
  noteTopicPolicy(streamId: number, topic: string, policy: number): void;
  /** Called before marking unread, so the open list does not mark the messages read again. */
  holdReading(): void;
}

/** `#narrow/channel/…/topic/…/near/ID`, the link Zulip's "Copy link" gives. */
export function messageLink(m: Message, state: ClientState): string {
  const hash = hashOf(conversationOf(m, state.me), state);
  return `${location.origin}/${hash}/near/${m.id}`;
}

/** Zulip's quote: a silent mention of the author, a link to the message, the source in a quote block. */
export function quoteOf(m: Message, raw: string, state: ClientState): string {
  const fence = raw.includes("```") ? "````" : "```";
  return `@_**${m.sender_full_name}|${m.sender_id}** [said](${messageLink(m, state)}):\n${fence}quote\n${raw}\n${fence}\n`;
}

async function copy(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

export function openMessageMenu(api: Api, state: ClientState, view: Narrow, m: Message, hooks: MenuHooks): void {
  const status = h("p", { class: "menu-status", role: "status" });
  const dialog = h("dialog", { class: "dialog message-menu", "aria-labelledby": `menu-title-${m.id}` });
  const close = (): void => {
    if (dialog.open) dialog.close();
  };
  const run = (fn: () => Promise<string | null>) => (): void => {
    status.textContent = "";
    fn().then(
      (failure) => {
        if (failure === null) close();
        else status.textContent = failure;
      },
      (error: unknown) => (status.textContent = errorText(error, "Something went wrong")),
    );
  };
  const button = (action: string, label: string, fn: () => Promise<string | null>): HTMLButtonElement =>
    h("button", { type: "button", class: "menu-item", "data-menu": action, onclick: run(fn) }, label);
  const items: HTMLElement[] = [
    button("quote", "Quote and reply", async () => {
      // The Markdown source, which the list (rendered HTML) does not have.
      const reply = await api.get(`/messages/${m.id}`, { apply_markdown: false });
      const raw = (reply["message"] as { content?: unknown } | undefined)?.content ?? reply["raw_content"];
      hooks.compose(conversationOf(m, state.me), quoteOf(m, String(raw ?? ""), state));
      return null;
    }),
    button("copy-link", "Copy link to message", async () => {
      const link = messageLink(m, state);
      if (await copy(link)) return null;
      // No clipboard (an insecure origin): show the link to copy by hand.
      const input = h("input", { readonly: true, value: link, "aria-label": "Link to the message" });
      status.replaceChildren("Copy this link: ", input);
      input.select();
      return "";
    }),
    button("mark-unread", "Mark as unread from here", async () => {
      hooks.holdReading();
      await api.post("/messages/flags/narrow", {
        anchor: String(m.id),
        include_anchor: true,
        num_before: 0,
        num_after: 5000,
        narrow: termsOf(view),
        op: "remove",
        flag: "read",
      });
      return null;
    }),
  ];
  if (m.type === "stream" && m.stream_id !== undefined) {
    const streamId = m.stream_id;
    const muted = hooks.isTopicMuted(streamId, m.subject);
    items.push(
      button(muted ? "unmute-topic" : "mute-topic", muted ? "Unmute topic" : "Mute topic", async () => {
        const policy = muted ? VISIBILITY.inherit : VISIBILITY.muted;
        await api.post("/user_topics", { stream_id: streamId, topic: m.subject, visibility_policy: policy });
        hooks.noteTopicPolicy(streamId, m.subject, policy);
        return null;
      }),
    );
  }
  dialog.append(
    h(
      "div",
      { class: "dialog-form" },
      h("h2", { id: `menu-title-${m.id}` }, `Message from ${m.sender_full_name}`),
      h("div", { class: "menu-items" }, ...items),
      status,
      h(
        "div",
        { class: "dialog-buttons" },
        h("button", { type: "button", class: "secondary", onclick: close }, "Close"),
      ),
    ),
  );
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}
