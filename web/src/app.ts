/**
 * The signed-in client: header (search, connection state, log out), sidebar, centre
 * (message list or Inbox), typing line and compose. One EventLoop feeds every part;
 * a re-register (BAD_EVENT_QUEUE_ID) rebuilds the state and reopens the same view.
 */
import type { Api } from "./api.js";
import { Compose } from "./compose.js";
import { h } from "./dom.js";
import { EventLoop } from "./events.js";
import { moveOf } from "./message-events.js";
import { hashOf, parseHash } from "./hash.js";
import { MessageList } from "./message-list.js";
import { conversationOf, dmKey, matches, parseSearch, sameNarrow, topicKey, type Narrow } from "./narrow.js";
import { dmLabel, renderInbox, renderSidebar, type View } from "./sidebar.js";
import { ClientState } from "./state.js";
import type { InitialState, ServerEvent, User } from "./types.js";
import { ChannelsPage } from "./channels-page.js";
import { moveInboxFocus, openKeyboardHelp } from "./keyboard.js";
import { openMessageMenu } from "./message-menu.js";
import { askNotificationPermission, Notifier } from "./notifications.js";
import { PAGES, pageOfHash, type Page, type PageContext, type PageName } from "./pages.js";
import { openUserCard, PeoplePage } from "./people.js";
import { Presence } from "./presence.js";
import { ReconnectBanner } from "./reconnect-banner.js";
import { RecentPage } from "./recent-page.js";
import { DraftsPage, ScheduledPage } from "./saved-pages.js";
import { OrganizationPage, SettingsPage, SettingsStore } from "./settings-page.js";
import { ROLE } from "./permissions.js";
import { setColorScheme } from "./theme.js";
import { setTwentyFourHourTime } from "./time-format.js";

/** Figures the browser measured (read by the browser test and the bench notes). */
export interface Timings {
  /** performance.now() when the first view was on screen (ms since navigation). */
  firstView: number | null;
  /** From the start of the client (credentials known) to the first view, ms. */
  bootToView: number | null;
  /** Each narrow switch, from the click to the list on screen, ms. */
  narrowSwitches: number[];
  /** The same switches with what was opened. */
  switchLog: { view: string; ms: number }[];
  /** Time spent building state from register's reply, and drawing the first view, ms. */
  phases: Record<string, number>;
}

declare global {
  interface Window {
    parleyTimings?: Timings;
  }
}

/** Events after which the message actions offered may differ. */
function changesPermissions(e: ServerEvent, me: number): boolean {
  switch (e.type) {
    case "realm":
    case "user_group":
      return true;
    case "subscription":
      // A new channel may name groups not asked about yet.
      return e["op"] === "add";
    case "realm_user": {
      const person = e["person"] as { user_id?: unknown; role?: unknown } | undefined;
      return person?.user_id === me && person.role !== undefined;
    }
    default:
      return false;
  }
}

function nextFrame(): Promise<void> {
  return new Promise((resolve) => requestAnimationFrame(() => resolve()));
}

export class App {
  readonly #root: HTMLElement;
  readonly #loop: EventLoop;
  #state: ClientState | null = null;
  #list: MessageList | null = null;
  #compose: Compose | null = null;
  #view: View = { kind: "inbox" };
  readonly #sidebar = h("div", { class: "sidebar-inner" });
  readonly #centre = h("div", { class: "centre-body" });
  readonly #title = h("h1", { class: "view-title", id: "view-title" });
  readonly #typing = h("p", { class: "typing", "aria-live": "polite" });
  readonly #conn = h("span", { class: "conn", role: "status" });
  readonly #error = h("p", { class: "error-line", role: "alert" });
  readonly #search: HTMLInputElement;
  readonly #composeSlot = h("div", { class: "compose-slot" });
  /** Shows the sidebar on narrow screens, where it sits over the centre (style.css). */
  readonly #menu = h(
    "button",
    {
      type: "button",
      class: "menu-toggle",
      "aria-controls": "sidebar",
      "aria-expanded": "false",
      onclick: () => this.#showSidebar(this.#menu.getAttribute("aria-expanded") !== "true"),
    },
    h("span", { "aria-hidden": "true" }, "☰"),
    h("span", { class: "visually-hidden" }, "Channels and conversations"),
  );
  #drawPending = false;
  readonly #timings: Timings = { firstView: null, bootToView: null, narrowSwitches: [], switchLog: [], phases: {} };
  readonly #startedAt = performance.now();
  readonly #keyHandler = (ev: KeyboardEvent) => this.#onKey(ev);
  /** Back/Forward, an edited address, or a `#narrow/...` link clicked in a message. */
  readonly #urlHandler = () => this.#onUrl();
  #typingTimer: number | null = null;
  #self: Promise<Record<string, unknown>> | null = null;
  /** The channel whose whole topic list the sidebar shows (else the newest few). */
  #allTopicsOf: number | null = null;
  /** Topic lists being fetched, by channel. */
  readonly #topicFetches = new Set<number>();
  /** The page in the centre instead of a view (pages.ts), if any. */
  #page: { readonly name: PageName; readonly page: Page } | null = null;
  readonly #pagesNav = h("nav", { class: "pages-nav", "aria-labelledby": "pages-heading" });
  readonly #presence: Presence;
  readonly #banner = new ReconnectBanner(() => this.#loop.retryNow());
  #settings = new SettingsStore({});
  #notifier: Notifier | null = null;

  constructor(
    root: HTMLElement,
    private readonly api: Api,
    private readonly onLogout: (message: string) => void,
  ) {
    this.#root = root;
    window.parleyTimings = this.#timings;
    this.#presence = new Presence(api, () => this.#page?.page.onEvents?.([{ id: -1, type: "presence" }]));
    this.#search = h("input", {
      id: "search",
      type: "search",
      autocomplete: "off",
      placeholder: "Search: channel:name topic:x is:starred words",
      "aria-describedby": "search-help",
    });
    this.#loop = new EventLoop(api, {
      onState: (state) => this.#onState(state),
      onEvents: (events) => this.#onEvents(events),
      onStatus: (text) => {
        this.#conn.textContent = text;
        if (text === "") this.#reconnected();
      },
      onUnauthorized: () => void this.logout("Your session ended: log in again."),
      onRetry: (at) => this.#banner.set(at),
    });
  }

  async start(): Promise<void> {
    const searchForm = h(
      "form",
      { role: "search", class: "search" },
      h("label", { for: "search", class: "visually-hidden" }, "Search messages"),
      this.#search,
      h(
        "span",
        { id: "search-help", class: "visually-hidden" },
        "Zulip's search operators: channel:, topic:, dm:, sender:, is:starred, is:mentioned, has:link; other words search the text. Enter to search, Escape to leave.",
      ),
    );
    searchForm.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const state = this.#state;
      if (!state) return;
      const q = this.#search.value.trim();
      void this.open(q === "" ? { kind: "all" } : parseSearch(q, state));
    });
    const logout = h("button", { type: "button", class: "logout", onclick: () => void this.logout("") }, "Log out");
    this.#root.replaceChildren(
      h(
        "div",
        { class: "app" },
        h(
          "header",
          { class: "top" },
          this.#menu,
          h("span", { class: "brand" }, "parley"),
          searchForm,
          this.#conn,
          h("span", { class: "whoami" }, this.api.email),
          logout,
        ),
        h("aside", { class: "sidebar", id: "sidebar", "aria-label": "Conversations" }, this.#sidebar, this.#pagesNav),
        h(
          "main",
          { class: "centre", "aria-labelledby": "view-title" },
          this.#banner.element,
          this.#title,
          this.#error,
          this.#centre,
          this.#typing,
          this.#composeSlot,
        ),
      ),
    );
    document.addEventListener("keydown", this.#keyHandler);
    window.addEventListener("hashchange", this.#urlHandler);
    window.addEventListener("popstate", this.#urlHandler);
    // Who we are: in register's realm_user section, which this client does not fetch
    // (see events.ts); asked for alongside register, so it costs no extra round trip.
    this.#self = this.api.get("/users/me");
    this.#self.catch(() => undefined);
    try {
      await this.#loop.start();
    } catch (error) {
      this.#unlisten();
      throw error;
    }
  }

  async #onState(initial: InitialState): Promise<void> {
    const self = this.#self ? await this.#self : await this.api.get("/users/me");
    const first = this.#state === null;
    this.#list?.destroy();
    this.#compose?.destroy();
    this.#timings.phases["register"] = this.#loop.registerMs;
    const t0 = performance.now();
    const state = new ClientState(
      { ...initial, user_id: Number(self["user_id"]) },
      {
        email: String(self["email"]),
        full_name: String(self["full_name"]),
        ...(typeof self["role"] === "number" ? { role: self["role"] } : {}),
      },
    );
    this.#state = state;
    const raw = initial as unknown as Record<string, unknown>;
    this.#settings = new SettingsStore(raw);
    setColorScheme(this.#settings.user["color_scheme"]);
    setTwentyFourHourTime(this.#settings.user["twenty_four_hour_time"]);
    this.#notifier = new Notifier(
      state,
      this.#settings.user,
      (m) => this.#page === null && this.#view.kind !== "inbox" && matches(this.#view, m, state.me) === true,
      (m) => void this.open(conversationOf(m, state.me)),
    );
    this.#list = new MessageList(this.api, state, {
      onMore: (m) => {
        const view = this.#view;
        if (view.kind === "inbox") return;
        openMessageMenu(this.api, state, view, m, {
          compose: (target, text) => this.#composeText(target, text, false),
          error: (text) => this.#showError(text),
          isTopicMuted: (streamId, topic) => state.isMutedTopic(streamId, topic),
          noteTopicPolicy: (streamId, topic, policy) => state.setTopicPolicy(streamId, topic, policy),
          holdReading: () => this.#list?.holdReading(),
        });
      },
      onUser: (userId) => this.#showUser(userId),
      onMarkedRead: (ids) => {
        for (const id of ids) state.unreads.remove(id);
        this.#scheduleDraw();
      },
      onError: (text) => this.#showError(text),
    });
    this.#compose = new Compose(this.api, state, (text) => this.#showError(text));
    this.#composeSlot.replaceChildren(this.#compose.element);
    void this.#compose.restoreDraft();
    this.#timings.phases["state"] = performance.now() - t0;
    void this.#loadMemberships(state);
    // First view: the one the address names (a reload, a deep link), else Inbox when
    // something is unread, else the combined feed.
    const fallback: View = state.unreads.total > 0 ? { kind: "inbox" } : { kind: "all" };
    const view: View = first ? (parseHash(location.hash, state) ?? fallback) : this.#view;
    const page = first ? pageOfHash(location.hash) : (this.#page?.name ?? null);
    this.#drawPagesNav();
    const shown = page !== null ? this.openPage(page, "replace") : this.open(view, "replace");
    void shown.then(() => {
      if (this.#timings.firstView === null) {
        this.#timings.firstView = performance.now();
        this.#timings.bootToView = performance.now() - this.#startedAt;
        document.body.dataset["ready"] = "1";
      }
      void this.#loadPeople(state);
      if (first) this.#presence.start();
    });
  }

  /** Opens a page (pages.ts) in the centre; the address follows as in open(). */
  async openPage(name: PageName, history: "push" | "replace" | "keep" = "push"): Promise<void> {
    const state = this.#state;
    if (!state) return;
    this.#showSidebar(false);
    this.#closePage();
    const hash = PAGES[name].hash;
    if (history !== "keep" && location.hash !== hash) {
      if (history === "push") window.history.pushState(null, "", hash);
      else window.history.replaceState(null, "", hash);
    }
    this.#list?.suspend();
    this.#error.textContent = "";
    this.#title.textContent = PAGES[name].title;
    this.#composeSlot.hidden = true;
    this.#typing.hidden = true;
    const page = this.#makePage(name, state);
    this.#page = { name, page };
    this.#centre.replaceChildren(page.element);
    this.#drawSidebar();
    this.#drawPagesNav();
    this.#updateDocumentTitle();
    await nextFrame();
  }

  #makePage(name: PageName, state: ClientState): Page {
    const ctx: PageContext = {
      api: this.api,
      state,
      initial: {},
      open: (view) => void this.open(view),
      compose: (target, text) => this.#composeText(target, text, true),
      showUser: (userId) => this.#showUser(userId),
      error: (text) => this.#showError(text),
    };
    switch (name) {
      case "channels":
        return new ChannelsPage(ctx);
      case "recent":
        return new RecentPage(ctx);
      case "drafts":
        return new DraftsPage(ctx);
      case "scheduled":
        return new ScheduledPage(ctx);
      case "people":
        return new PeoplePage(ctx, this.#presence);
      case "settings":
        return new SettingsPage(ctx, this.#settings, askNotificationPermission);
      case "organization":
        return new OrganizationPage(ctx, this.#settings, state.permissions.role <= ROLE.admin);
    }
  }

  #closePage(): void {
    if (!this.#page) return;
    this.#page.page.destroy?.();
    this.#page = null;
    this.#composeSlot.hidden = false;
    this.#typing.hidden = false;
    this.#drawPagesNav();
  }

  /** Links to the pages, under the sidebar's lists. */
  #drawPagesNav(): void {
    const current = this.#page?.name;
    const state = this.#state;
    const names = (Object.keys(PAGES) as PageName[]).filter(
      (n) => n !== "organization" || (state !== null && state.permissions.role <= ROLE.admin),
    );
    this.#pagesNav.replaceChildren(
      h("h2", { id: "pages-heading" }, "More"),
      h(
        "ul",
        { class: "nav-list" },
        ...names.map((n) =>
          h(
            "li",
            {},
            h(
              "button",
              {
                type: "button",
                class: "nav-item",
                "data-page": n,
                "aria-current": n === current ? "page" : undefined,
                onclick: () => void this.openPage(n),
              },
              h("span", { class: "label" }, PAGES[n].title),
            ),
          ),
        ),
      ),
    );
  }

  #showUser(userId: number): void {
    const state = this.#state;
    if (state) openUserCard(this.api, state, this.#presence, userId, (view) => void this.open(view));
  }

  /** Puts text into the compose box for a conversation (quote and reply, a restored draft). */
  #composeText(target: Narrow, text: string, navigate: boolean): void {
    const go = navigate ? this.open(target) : Promise.resolve();
    void go.then(() => {
      this.#reply(target);
      const box = this.#composeSlot.querySelector<HTMLTextAreaElement>("textarea");
      if (!box) return;
      box.value = box.value === "" ? text : `${box.value}\n${text}`;
      box.dispatchEvent(new Event("input", { bubbles: true }));
      box.focus();
      box.setSelectionRange(box.value.length, box.value.length);
    });
  }

  /** "(3) Inbox - parley": the unread count where a tab strip shows it. */
  #updateDocumentTitle(): void {
    const total = this.#state?.unreads.total ?? 0;
    const view = this.#title.textContent ?? "";
    const text = `${total > 0 ? `(${total}) ` : ""}${view === "" ? "" : `${view} - `}parley`;
    if (document.title !== text) document.title = text;
  }

  /**
   * Opens a view: Inbox, or a narrow's message list (with compose pointed at it). The
   * address follows: a new history entry ("push", so Back returns), the current one
   * rewritten ("replace"), or left as it is ("keep", when the address chose the view).
   */
  async open(view: View, history: "push" | "replace" | "keep" = "push"): Promise<void> {
    const state = this.#state;
    const list = this.#list;
    if (!state || !list) return;
    const started = performance.now();
    this.#view = view;
    this.#closePage();
    this.#showSidebar(false);
    const hash = hashOf(view, state);
    if (history !== "keep" && location.hash !== hash) {
      if (history === "push") window.history.pushState(null, "", hash);
      else window.history.replaceState(null, "", hash);
    }
    this.#error.textContent = "";
    this.#title.textContent = this.#titleOf(view);
    this.#updateDocumentTitle();
    this.#drawSidebar();
    if (view.kind === "channel" || view.kind === "topic") void this.#loadTopics(state, view.streamId);
    if (view.kind === "inbox") {
      list.suspend();
      renderInbox(this.#centre, state, (v) => void this.open(v));
      this.#drawTyping();
      await nextFrame();
      this.#timings.phases["inbox"] = performance.now() - started;
      return;
    }
    this.#search.value = view.kind === "search" ? view.query : "";
    if (view.kind === "channel" || view.kind === "topic")
      this.#compose?.followView({
        kind: "channel",
        streamId: view.streamId,
        topic: view.kind === "topic" ? view.topic : "",
      });
    if (view.kind === "dm") this.#compose?.followView({ kind: "dm", userIds: view.userIds });
    if (this.#centre.firstChild !== list.element) this.#centre.replaceChildren(list.element);
    await list.open(view);
    if (this.#view !== view) return;
    this.#drawSidebar();
    this.#drawTyping();
    await nextFrame();
    const ms = performance.now() - started;
    this.#timings.narrowSwitches.push(ms);
    this.#timings.switchLog.push({ view: JSON.stringify(view), ms });
  }

  #showSidebar(shown: boolean): void {
    this.#menu.setAttribute("aria-expanded", String(shown));
    this.#root.querySelector(".app")?.classList.toggle("sidebar-open", shown);
  }

  #onUrl(): void {
    const state = this.#state;
    if (!state) return;
    const page = pageOfHash(location.hash);
    if (page !== null) {
      if (this.#page?.name !== page) void this.openPage(page, "keep");
      return;
    }
    const view = parseHash(location.hash, state);
    if (view && (this.#page !== null || !this.isOpen(view))) void this.open(view, "keep");
  }

  #unlisten(): void {
    document.removeEventListener("keydown", this.#keyHandler);
    window.removeEventListener("hashchange", this.#urlHandler);
    window.removeEventListener("popstate", this.#urlHandler);
  }

  #titleOf(view: View): string {
    const state = this.#state;
    if (!state) return "";
    switch (view.kind) {
      case "inbox":
        return "Inbox";
      case "all":
        return "Combined feed";
      case "mentions":
        return "Mentions";
      case "starred":
        return "Starred messages";
      case "channel":
        return `#${state.channelName(view.streamId)}`;
      case "topic":
        return `#${state.channelName(view.streamId)} › ${view.topic}`;
      case "dm":
        return `Direct messages with ${dmLabel(state, view.userIds)}`;
      case "search":
        return `Search: ${view.query}`;
    }
  }

  /**
   * Whether this user is in each group the realm's and channels' message permissions
   * name (a few small requests, instead of every group's members in register); the
   * list then shows the actions they allow.
   */
  async #loadMemberships(state: ClientState): Promise<boolean> {
    const p = state.permissions;
    const ids = p.unknownGroups(state.subs.values());
    if (ids.length === 0) return false;
    await Promise.all(
      ids.map(async (id) => {
        try {
          const reply = await this.api.get(`/user_groups/${id}/members/${state.me}`);
          p.setMember(id, reply["is_user_group_member"] === true);
        } catch {
          // Not visible to this user, or gone: no permission through it.
          p.setMember(id, false);
        }
      }),
    );
    if (this.#state === state) this.#list?.redrawRows();
    return true;
  }

  /** The channel's topics from GET /users/me/{stream_id}/topics, when not known or out of date. */
  async #loadTopics(state: ClientState, streamId: number): Promise<void> {
    if (state.topicsLoaded.has(streamId) && !state.topicsStale.has(streamId)) return;
    if (this.#topicFetches.has(streamId)) return;
    this.#topicFetches.add(streamId);
    // Set again by any move or deletion while the request is on its way.
    const wasStale = state.topicsStale.delete(streamId);
    let reply: Record<string, unknown>;
    try {
      reply = await this.api.get(`/users/me/${streamId}/topics`);
    } catch (error) {
      if (wasStale) state.topicsStale.add(streamId);
      this.#showError(error instanceof Error ? `Could not load topics: ${error.message}` : "Could not load topics");
      return;
    } finally {
      this.#topicFetches.delete(streamId);
    }
    if (this.#state !== state) return;
    const changedMeanwhile = state.topicsStale.has(streamId);
    // GET /users/me/{stream_id}/topics answers { topics: [{ name, max_id }] }, newest first.
    const topics = Array.isArray(reply["topics"]) ? (reply["topics"] as { name: string; max_id: number }[]) : [];
    state.setChannelTopics(streamId, topics);
    this.#scheduleDraw();
    if (changedMeanwhile) {
      state.topicsStale.add(streamId);
      if (this.#openChannel() === streamId) void this.#loadTopics(state, streamId);
    }
  }

  /** The channel open in the centre (its topics show in the sidebar). */
  #openChannel(): number | null {
    const v = this.#view;
    return v.kind === "channel" || v.kind === "topic" ? v.streamId : null;
  }

  /** Everyone in the realm, after the first view (see FETCH_EVENT_TYPES in events.ts). */
  async #loadPeople(state: ClientState): Promise<void> {
    try {
      const reply = await this.api.get("/users", { client_gravatar: true });
      if (this.#state !== state) return;
      // GET /users answers { members: User[] }.
      state.setUsers((reply["members"] ?? []) as User[]);
      this.#compose?.refreshChoices();
      this.#scheduleDraw();
    } catch (error) {
      this.#showError(error instanceof Error ? `Could not load people: ${error.message}` : "Could not load people");
    }
  }

  #onEvents(events: readonly ServerEvent[]): void {
    const state = this.#state;
    if (!state) return;
    let choices = false;
    let permissions = false;
    let follow: Narrow | null = null;
    /** Every row shows something that changed: the time format, or someone's avatar. */
    let rows = false;
    for (const e of events) {
      follow = this.#followMove(e) ?? follow;
      state.apply(e);
      this.#presence.apply(e);
      if (this.#settings.apply(e) && e.type === "user_settings") {
        if (e["property"] === "color_scheme") setColorScheme(e["value"]);
        if (e["property"] === "twenty_four_hour_time" && setTwentyFourHourTime(e["value"])) rows = true;
      }
      this.#notifier?.apply(e);
      this.#list?.apply(e);
      if (e.type === "subscription" || e.type === "realm_user") choices = true;
      if (e.type === "realm_user" && e["op"] === "update" && isAvatarChange(e)) rows = true;
      if (e.type === "user_group") state.permissions.forgetMemberships();
      if (changesPermissions(e, state.me)) permissions = true;
    }
    if (choices) this.#compose?.refreshChoices();
    if (rows) this.#list?.redrawRows();
    if (permissions)
      void this.#loadMemberships(state).then((loaded) => {
        if (!loaded && this.#state === state) this.#list?.redrawRows();
      });
    const channel = this.#openChannel();
    if (channel !== null && state.topicsStale.has(channel)) void this.#loadTopics(state, channel);
    if (follow && this.#page === null) void this.open(follow, "replace");
    this.#page?.page.onEvents?.(events);
    if (events.some((e) => e.type === "realm_user")) this.#drawPagesNav();
    this.#scheduleDraw();
  }

  /** Sidebar, Inbox and typing redraw at most once a frame, however many events came. */
  #scheduleDraw(): void {
    if (this.#drawPending) return;
    this.#drawPending = true;
    requestAnimationFrame(() => {
      this.#drawPending = false;
      this.#drawSidebar();
      const state = this.#state;
      if (state && this.#view.kind === "inbox" && this.#page === null)
        renderInbox(this.#centre, state, (v) => void this.open(v));
      this.#drawTyping();
      this.#updateDocumentTitle();
    });
  }

  /**
   * Zulip's clients follow a topic that moves away under the reader: when the open
   * topic's selected message moved with the ones after it, open where it went.
   */
  #followMove(e: ServerEvent): Narrow | null {
    const move = moveOf(e);
    const view = this.#view;
    if (!move || move.mode === "change_one" || view.kind !== "topic") return null;
    if (view.streamId !== move.fromStream || view.topic.toLowerCase() !== move.fromTopic.toLowerCase()) return null;
    const selected = this.#list?.selectedMessage();
    if (selected && !move.ids.includes(selected.id)) return null;
    return { kind: "topic", streamId: move.toStream, topic: move.toTopic };
  }

  #drawSidebar(): void {
    // With a page open, no view in the sidebar is the current one (no item has this narrow).
    const page = this.#page?.name;
    const current: View =
      page !== undefined ? { kind: "search", query: "", terms: [{ operator: "page", operand: page }] } : this.#view;
    if (this.#state)
      renderSidebar(this.#sidebar, this.#state, current, (v) => void this.open(v), {
        allTopicsOf: this.#allTopicsOf,
        onToggleTopics: (streamId) => {
          this.#allTopicsOf = this.#allTopicsOf === streamId ? null : streamId;
          this.#drawSidebar();
        },
      });
  }

  #drawTyping(): void {
    const state = this.#state;
    if (!state) return;
    const now = Date.now();
    state.typing = state.typing.filter((t) => t.until > now);
    const view = this.#view;
    const here = state.typing.filter((t) => {
      if (view.kind === "topic") return t.key === topicKey(view.streamId, view.topic);
      if (view.kind === "channel") return t.key.startsWith(`s:${view.streamId}:`);
      if (view.kind === "dm") return t.key === dmKey(view.userIds);
      return false;
    });
    const names = [...new Set(here.map((t) => state.userName(t.userId)))];
    const text = names.length === 0 ? "" : `${names.join(", ")} ${names.length === 1 ? "is" : "are"} typing…`;
    if (this.#typing.textContent !== text) this.#typing.textContent = text;
    // Typists expire without an event: look again while any is shown.
    if (state.typing.length > 0 && this.#typingTimer === null) {
      this.#typingTimer = window.setTimeout(() => {
        this.#typingTimer = null;
        this.#drawTyping();
      }, 1000);
    }
  }

  /** The server answers again: what failed to load meanwhile loads now, and its error goes. */
  #reconnected(): void {
    this.#error.textContent = "";
    if (this.#view.kind !== "inbox") this.#list?.retryFailed();
    const state = this.#state;
    const channel = this.#openChannel();
    if (state && channel !== null) void this.#loadTopics(state, channel);
  }

  #showError(text: string): void {
    this.#error.textContent = text;
  }

  #reply(target: Narrow): void {
    if (target.kind === "topic")
      this.#compose?.setTarget({ kind: "channel", streamId: target.streamId, topic: target.topic });
    else if (target.kind === "dm") this.#compose?.setTarget({ kind: "dm", userIds: target.userIds });
    this.#compose?.focus();
  }

  #onKey(ev: KeyboardEvent): void {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    // A modal dialog handles its own keys (Escape closes it).
    if (document.querySelector("dialog[open]")) return;
    const t = ev.target;
    const typing = t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement;
    if (ev.key === "Escape") {
      if (this.#list?.closePicker()) return;
      if (this.#menu.getAttribute("aria-expanded") === "true") {
        this.#showSidebar(false);
        this.#menu.focus();
        return;
      }
      if (typing) (t as HTMLElement).blur();
      if (t === this.#search && this.#search.value !== "") this.#search.value = "";
      if (this.#view.kind !== "inbox") this.#list?.focusSelected();
      return;
    }
    if (typing) return;
    const list = this.#list;
    const state = this.#state;
    if (!list || !state) return;
    if (ev.key === "?") {
      ev.preventDefault();
      openKeyboardHelp();
      return;
    }
    if (this.#page !== null) return;
    const inbox = this.#view.kind === "inbox";
    if (inbox && ["ArrowDown", "ArrowUp", "j", "k"].includes(ev.key)) {
      const down = ev.key === "ArrowDown" || ev.key === "j";
      if (moveInboxFocus(this.#centre, down ? 1 : -1)) ev.preventDefault();
      return;
    }
    const inList = this.#view.kind !== "inbox";
    if ((ev.key === "j" || ev.key === "k") && inList) {
      ev.preventDefault();
      list.move(ev.key === "j" ? 1 : -1);
    } else if (ev.key === "r" && inList) {
      const m = list.selectedMessage();
      if (!m) return;
      ev.preventDefault();
      this.#reply(conversationOf(m, state.me));
    } else if (ev.key === "e" && inList) {
      ev.preventDefault();
      list.editSelected();
    } else if (ev.key === "s" && inList) {
      const m = list.selectedMessage();
      if (m) void list.toggleStar(m);
    } else if (ev.key === "c") {
      ev.preventDefault();
      this.#compose?.focus();
    } else if (ev.key === "/") {
      ev.preventDefault();
      this.#search.focus();
    }
  }

  /** The current narrow (tests and the status line read it). */
  get narrow(): Narrow | null {
    return this.#view.kind === "inbox" ? null : this.#view;
  }

  isOpen(view: View): boolean {
    return view.kind === "inbox"
      ? this.#view.kind === "inbox"
      : this.#view.kind !== "inbox" && sameNarrow(view, this.#view);
  }

  /** Deletes the event queue, then forgets the key. */
  async logout(message: string): Promise<void> {
    this.#unlisten();
    this.#presence.stop();
    this.#banner.destroy();
    this.#closePage();
    this.#list?.destroy();
    this.#compose?.destroy();
    await this.#loop.stop();
    this.onLogout(message);
  }
}

function isAvatarChange(e: ServerEvent): boolean {
  const person = e["person"];
  return typeof person === "object" && person !== null && "avatar_url" in person;
}
