/**
 * One register + long-poll loop, as Zulip's clients run it: POST /register gives the
 * initial state and a queue; GET /events waits on it. BAD_EVENT_QUEUE_ID (the queue was
 * collected, or the server forgot it) means register again and rebuild from the new
 * state; network and server errors back off exponentially with jitter (Retry-After on
 * 429); 401 ends the session.
 */
import { ApiError, type Api } from "./api.js";
import type { InitialState, ServerEvent } from "./types.js";

const EVENT_TYPES = [
  "message",
  "update_message_flags",
  "reaction",
  "subscription",
  "typing",
  "realm_user",
  "recent_private_conversations",
  "delete_message",
  "update_message",
  // The realm's edit, move and delete rules, and changes to them.
  "realm",
  "user_group",
  "realm_emoji",
  // Channel browser, user list, settings pages and mute state (pages.ts).
  "stream",
  "presence",
  "user_settings",
  "user_topic",
];
/**
 * The initial state leaves out realm_users: with thousands of people it is most of
 * register's bytes (3.8 MB of 4 MB for 10,000 users), and the first view needs none of
 * it. The client fetches GET /users after the first view; realm_user events still flow.
 * realm_user_groups likewise (~200 KB of member IDs for 10,000 users): the client asks
 * only whether it is in the few groups the message permissions name. Channels not
 * subscribed to and presence are fetched when a page needs them (GET /streams; POST
 * /users/me/presence answers with everyone's), not in every register.
 */
const NOT_FETCHED = new Set(["realm_user", "user_group", "stream", "presence"]);
const FETCH_EVENT_TYPES = EVENT_TYPES.filter((t) => !NOT_FETCHED.has(t));
const MAX_BACKOFF_MS = 30_000;

export interface EventLoopHandlers {
  /** A new initial state: the first, or after a re-register. */
  onState(state: InitialState): void | Promise<void>;
  onEvents(events: readonly ServerEvent[]): void;
  /** Connection state for the status line ("" when healthy). */
  onStatus(text: string): void;
  /** The credentials stopped working. */
  onUnauthorized(): void;
  /** The next try's time (Date.now() ms) while the server cannot be reached, null once it answers. */
  onRetry?(at: number | null): void;
}

export class EventLoop {
  #queueId: string | null = null;
  #lastEventId = -1;
  #stopped = false;
  #failures = 0;
  readonly #abort = new AbortController();
  /** Ends the wait before the next try ("Try now"). */
  #wake: (() => void) | null = null;

  constructor(
    private readonly api: Api,
    private readonly handlers: EventLoopHandlers,
  ) {}

  get queueId(): string | null {
    return this.#queueId;
  }

  /** Registers (resolves with the first state's arrival), then polls in the background. */
  async start(): Promise<void> {
    await this.#register();
    void this.#poll();
  }

  /** The last register's round trip including JSON parsing, ms (for the bench). */
  registerMs = 0;

  async #register(): Promise<void> {
    const started = performance.now();
    const reply = await this.api.post("/register", {
      event_types: EVENT_TYPES,
      fetch_event_types: FETCH_EVENT_TYPES,
      apply_markdown: true,
      client_gravatar: true,
      include_subscribers: false,
      slim_presence: true,
      client_capabilities: {
        notification_settings_null: true,
        stream_typing_notifications: true,
        user_avatar_url_field_optional: true,
        empty_topic_name: false,
        // One delete_message event with message_ids for a batch, not one per message.
        bulk_message_deletion: true,
        // presence events by user ID with both timestamps (presence.ts).
        simplified_presence_events: true,
      },
    });
    // The server's register reply is the InitialState shape (types.ts lists what is read).
    const state = reply as unknown as InitialState;
    this.registerMs = performance.now() - started;
    this.#queueId = state.queue_id;
    this.#lastEventId = state.last_event_id;
    await this.handlers.onState(state);
  }

  async #poll(): Promise<void> {
    while (!this.#stopped) {
      try {
        if (this.#queueId === null) await this.#register();
        const reply = await this.api.get(
          "/events",
          // After a failure, a poll that answers at once tells the client the server is back.
          { queue_id: this.#queueId ?? "", last_event_id: this.#lastEventId, dont_block: this.#failures > 0 },
          this.#abort.signal,
        );
        const events = (reply["events"] ?? []) as ServerEvent[];
        for (const e of events) this.#lastEventId = Math.max(this.#lastEventId, e.id);
        if (this.#failures > 0) {
          this.handlers.onStatus("");
          this.handlers.onRetry?.(null);
        }
        this.#failures = 0;
        const real = events.filter((e) => e.type !== "heartbeat");
        if (real.length > 0) this.handlers.onEvents(real);
      } catch (error) {
        if (this.#stopped) return;
        if (error instanceof ApiError && error.status === 401) {
          this.handlers.onUnauthorized();
          return;
        }
        if (error instanceof ApiError && error.code === "BAD_EVENT_QUEUE_ID") {
          // Events since the last state are gone: a new register rebuilds everything.
          this.#queueId = null;
          continue;
        }
        this.#failures++;
        const wait =
          error instanceof ApiError && error.retryAfter !== null
            ? error.retryAfter * 1000
            : Math.min(MAX_BACKOFF_MS, 500 * 2 ** this.#failures) * (0.5 + Math.random() / 2);
        this.handlers.onStatus(`Reconnecting in ${Math.ceil(wait / 1000)} s…`);
        this.handlers.onRetry?.(Date.now() + wait);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          this.#wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.#wake = null;
      }
    }
  }

  /** Tries again at once instead of waiting out the back-off. */
  retryNow(): void {
    this.#wake?.();
  }

  /** Stops polling and deletes the queue (logout). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort();
    const queueId = this.#queueId;
    this.#queueId = null;
    if (queueId !== null) await this.api.delete("/events", { queue_id: queueId }).catch(() => undefined);
  }
}
