/**
 * Changing a sent message: the in-place editor (PATCH content, with the SHA-256 of the
 * text it started from so an edit made elsewhere meanwhile is refused, not overwritten),
 * the delete confirmation, the move dialog and the resolve toggle. Every change comes
 * back as an update_message or delete_message event, which is what redraws the list.
 */
import type { Api } from "./api.js";
import { field, openDialog } from "./dialogs.js";
import { h } from "./dom.js";
import { isResolved, toggledTopic, type MessageActions } from "./permissions.js";
import type { ClientState } from "./state.js";
import type { Message } from "./types.js";

function errorText(error: unknown, fallback: string): string {
  return error instanceof Error && error.message !== "" ? error.message : fallback;
}

async function sha256Hex(text: string): Promise<string | undefined> {
  // crypto.subtle exists only in secure contexts (https, localhost); without it the
  // edit goes without the check, as older clients' do.
  if (!globalThis.crypto?.subtle) return undefined;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The edit form that takes the place of a message's body: Enter saves, Shift+Enter is
 * a new line, Escape cancels. The list keeps the form across redraws of the message.
 */
export class MessageEditor {
  readonly form: HTMLFormElement;
  readonly #text: HTMLTextAreaElement;
  readonly #status: HTMLElement;
  readonly #save: HTMLButtonElement;
  #original: string | null = null;
  #sha: string | undefined;
  #busy = false;

  constructor(
    private readonly api: Api,
    readonly messageId: number,
    private readonly onClose: () => void,
  ) {
    const textId = `edit-text-${messageId}`;
    this.#text = h("textarea", {
      id: textId,
      class: "edit-text",
      rows: "3",
      disabled: true,
      placeholder: "Loading…",
      "aria-busy": "true",
    });
    // Refusals only: progress shows on the controls, not read out.
    this.#status = h("p", { class: "edit-status", role: "alert" });
    this.#save = h("button", { type: "submit", class: "primary", disabled: true }, "Save");
    this.form = h(
      "form",
      { class: "edit-form", "aria-label": "Edit message" },
      h("label", { for: textId, class: "visually-hidden" }, "Edit message"),
      this.#text,
      h(
        "div",
        { class: "edit-buttons" },
        this.#save,
        h("button", { type: "button", class: "secondary", onclick: () => this.cancel() }, "Cancel"),
        h("span", { class: "edit-hint" }, "Enter to save, Shift+Enter for a new line, Escape to cancel"),
      ),
      this.#status,
    );
    this.form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      void this.save();
    });
    this.#text.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        void this.save();
      } else if (ev.key === "Escape") {
        // The app's Escape (back to the list) must not also run.
        ev.stopPropagation();
        this.cancel();
      }
    });
  }

  /** Fetches the message's Markdown (the list only has its HTML) and focuses the text. */
  async load(): Promise<void> {
    try {
      const reply = await this.api.get(`/messages/${this.messageId}`, { apply_markdown: false });
      const message = reply["message"] as { content?: unknown } | undefined;
      const raw = typeof message?.content === "string" ? message.content : String(reply["raw_content"] ?? "");
      this.#original = raw;
      this.#sha = await sha256Hex(raw);
      this.#text.value = raw;
      this.#text.disabled = false;
      this.#text.removeAttribute("aria-busy");
      this.#text.placeholder = "";
      this.#save.disabled = false;
      this.focus();
      this.#text.setSelectionRange(raw.length, raw.length);
    } catch (error) {
      this.#status.textContent = errorText(error, "Could not load the message");
    }
  }

  focus(): void {
    this.#text.focus({ preventScroll: true });
  }

  async save(): Promise<void> {
    if (this.#busy || this.#original === null) return;
    const content = this.#text.value;
    if (content === this.#original) {
      this.cancel();
      return;
    }
    this.#busy = true;
    this.#save.disabled = true;
    this.#save.textContent = "Saving…";
    this.#status.textContent = "";
    try {
      await this.api.patch(`/messages/${this.messageId}`, { content, prev_content_sha256: this.#sha });
      this.onClose();
    } catch (error) {
      this.#status.textContent = errorText(error, "Could not save the edit");
      this.#save.disabled = false;
      this.focus();
    } finally {
      this.#busy = false;
      this.#save.textContent = "Save";
    }
  }

  cancel(): void {
    this.onClose();
  }
}

/** Asks, then deletes the message. */
export function confirmDelete(api: Api, m: Message, preview: string): Promise<boolean> {
  const text = preview.length > 200 ? `${preview.slice(0, 200)}…` : preview;
  return openDialog({
    title: "Delete message?",
    body: [
      h("p", {}, "Deleting a message removes it for everyone. It cannot be undone."),
      h("blockquote", { class: "dialog-quote" }, text),
    ],
    submitLabel: "Delete",
    danger: true,
    onSubmit: async () => {
      try {
        await api.delete(`/messages/${m.id}`);
        return null;
      } catch (error) {
        return errorText(error, "Could not delete the message");
      }
    },
  });
}

/** Resolves or unresolves the message's topic (every message in it, as Zulip's clients do). */
export async function toggleResolve(api: Api, m: Message): Promise<void> {
  await api.patch(`/messages/${m.id}`, {
    topic: toggledTopic(m.subject),
    propagate_mode: "change_all",
    send_notification_to_old_thread: false,
    send_notification_to_new_thread: true,
  });
}

export function resolveLabel(topic: string): string {
  return isResolved(topic) ? "Mark as unresolved" : "Mark as resolved";
}

/**
 * The move dialog: new topic, target channel (when the user may move between
 * channels), which messages, and Notification Bot's notices (Zulip's defaults: none in
 * the old topic, one in the new).
 */
export function openMoveDialog(
  api: Api,
  state: ClientState,
  m: Message,
  actions: MessageActions,
  wholeTopic: boolean,
): Promise<boolean> {
  const streamId = m.stream_id ?? 0;
  const topic = h("input", {
    name: "topic",
    class: "move-topic",
    value: m.subject,
    maxlength: "60",
    autocomplete: "off",
    disabled: !actions.moveTopic,
  });
  const channel = h("select", { name: "channel", class: "move-channel", disabled: !actions.moveChannel });
  for (const s of [...state.subs.values()].sort((a, b) => a.name.localeCompare(b.name)))
    if (s.is_archived !== true) channel.append(h("option", { value: s.stream_id }, s.name));
  channel.value = String(streamId);
  const mode = h(
    "select",
    { name: "propagate_mode", class: "move-mode" },
    h("option", { value: "change_one" }, "Only this message"),
    h("option", { value: "change_later" }, "This and all later messages in the topic"),
    h("option", { value: "change_all" }, "All messages in the topic"),
  );
  mode.value = wholeTopic ? "change_all" : "change_later";
  const notifyOld = h("input", { type: "checkbox", name: "notify_old" });
  const notifyNew = h("input", { type: "checkbox", name: "notify_new", checked: true });
  const where = `#${state.channelName(streamId)} › ${m.subject}`;
  return openDialog({
    title: wholeTopic ? "Move topic" : "Move message",
    body: [
      h("p", { class: "dialog-from" }, `From ${where}`),
      field("New topic", topic),
      field("Channel", channel),
      field("Messages to move", mode),
      h("label", { class: "dialog-check" }, notifyOld, " Send a notice to the old topic"),
      h("label", { class: "dialog-check" }, notifyNew, " Send a notice to the new topic"),
    ],
    submitLabel: "Move",
    onSubmit: async () => {
      const newTopic = topic.value.trim();
      const newStream = Number(channel.value);
      const params: Record<string, string | number | boolean> = {
        propagate_mode: mode.value,
        send_notification_to_old_thread: notifyOld.checked,
        send_notification_to_new_thread: notifyNew.checked,
      };
      if (newTopic !== m.subject) params["topic"] = newTopic;
      if (newStream !== streamId) params["stream_id"] = newStream;
      if (params["topic"] === undefined && params["stream_id"] === undefined)
        return "Choose a new topic or channel first.";
      try {
        await api.patch(`/messages/${m.id}`, params);
        return null;
      } catch (error) {
        return errorText(error, "Could not move the messages");
      }
    },
  });
}
