/**
 * Who is online: this client reports itself active every 60 s (POST /users/me/presence,
 * as Zulip's web app does), and that reply carries everyone's presence; presence events
 * update it in between. A person is active when last active within 140 s, idle when
 * last connected within 140 s, else offline (Zulip's OFFLINE_THRESHOLD_SECS).
 */
import type { Api } from "./api.js";
import type { ServerEvent } from "./types.js";

const PING_MS = 60_000;
const OFFLINE_AFTER_S = 140;

export type PresenceStatus = "active" | "idle" | "offline";

interface Stamps {
  active: number;
  idle: number;
}

export class Presence {
  readonly #stamps = new Map<number, Stamps>();
  #timer: number | null = null;
  /** Seconds the server's clock is ahead of this one. */
  #skew = 0;

  constructor(
    private readonly api: Api,
    private readonly onChange: () => void,
  ) {}

  start(): void {
    void this.ping();
    this.#timer = window.setInterval(() => void this.ping(), PING_MS);
  }

  stop(): void {
    if (this.#timer !== null) window.clearInterval(this.#timer);
    this.#timer = null;
  }

  async ping(): Promise<void> {
    try {
      const status = document.visibilityState === "hidden" ? "idle" : "active";
      const reply = await this.api.post("/users/me/presence", { status, slim_presence: true });
      if (typeof reply["server_timestamp"] === "number") this.#skew = reply["server_timestamp"] - Date.now() / 1000;
      this.#note(reply["presences"]);
      this.onChange();
    } catch {
      // Shown by the event loop's reconnecting banner; the next ping tries again.
    }
  }

  /** Presence events in the modern shape (client_capabilities.simplified_presence_events). */
  apply(e: ServerEvent): boolean {
    if (e.type !== "presence") return false;
    this.#note(e["presences"]);
    return true;
  }

  #note(presences: unknown): void {
    if (typeof presences !== "object" || presences === null) return;
    for (const [id, value] of Object.entries(presences as Record<string, unknown>)) {
      const v = value as { active_timestamp?: unknown; idle_timestamp?: unknown } | null;
      if (!v || typeof v.active_timestamp !== "number" || typeof v.idle_timestamp !== "number") continue;
      this.#stamps.set(Number(id), { active: v.active_timestamp, idle: v.idle_timestamp });
    }
  }

  status(userId: number): PresenceStatus {
    const s = this.#stamps.get(userId);
    if (!s) return "offline";
    const now = Date.now() / 1000 + this.#skew;
    if (now - s.active <= OFFLINE_AFTER_S) return "active";
    if (now - s.idle <= OFFLINE_AFTER_S) return "idle";
    return "offline";
  }
}
