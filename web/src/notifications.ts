/**
 * Desktop notifications for direct messages and mentions (the Notification API), as
 * the user's settings ask: enable_desktop_notifications, with the text of DMs shown only
 * under pm_content_in_desktop_notifications and @all only under wildcard_mentions_notify.
 * Nothing shows for one's own messages, nor for a message in the view the reader has
 * in front of them. Permission is asked only from a click (browsers refuse otherwise).
 */
import type { ClientState } from "./state.js";
import type { Message, ServerEvent } from "./types.js";

export interface ShownNotification {
  readonly title: string;
  readonly body: string;
  readonly messageId: number;
}

declare global {
  interface Window {
    /** Every notification shown (read by the browser test). */
    parleyNotifications?: ShownNotification[];
  }
}

function plainText(html: string): string {
  return new DOMParser().parseFromString(html, "text/html").body.textContent?.trim() ?? "";
}

export async function askNotificationPermission(): Promise<string> {
  if (typeof Notification === "undefined") return "not available";
  return Notification.permission === "default" ? await Notification.requestPermission() : Notification.permission;
}

export class Notifier {
  readonly shown: ShownNotification[] = [];

  constructor(
    private readonly state: ClientState,
    private readonly settings: Readonly<Record<string, unknown>>,
    /** Whether the message is in the view on screen while the window has focus. */
    private readonly inView: (m: Message) => boolean,
    private readonly onClick: (m: Message) => void,
  ) {
    window.parleyNotifications = this.shown;
  }

  apply(e: ServerEvent): void {
    if (e.type !== "message") return;
    const m = e["message"] as Message;
    const flags = (e["flags"] ?? []) as string[];
    if (m.sender_id === this.state.me || flags.includes("read")) return;
    if (this.settings["enable_desktop_notifications"] === false) return;
    const dm = m.type === "private";
    const mentioned =
      flags.includes("mentioned") ||
      (flags.includes("wildcard_mentioned") && this.settings["wildcard_mentions_notify"] !== false);
    if (!dm && !mentioned) return;
    if (document.visibilityState === "visible" && document.hasFocus() && this.inView(m)) return;
    if (typeof Notification === "undefined" || Notification.permission !== "granted") return;
    const where = dm ? "" : ` (#${this.state.channelName(m.stream_id ?? 0)} › ${m.subject})`;
    const title = `${m.sender_full_name}${where}`;
    const body =
      dm && this.settings["pm_content_in_desktop_notifications"] === false
        ? "New direct message"
        : plainText(m.content).slice(0, 150);
    try {
      const n = new Notification(title, { body, tag: String(m.id) });
      n.addEventListener("click", () => {
        window.focus();
        this.onClick(m);
        n.close();
      });
    } catch {
      // Some browsers allow notifications only from a service worker: nothing to show.
      return;
    }
    this.shown.push({ title, body, messageId: m.id });
  }
}
