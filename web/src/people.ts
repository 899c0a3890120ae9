/**
 * People: avatars, the user list with presence (a page: everyone, active first) and
 * the user card (a dialog: name, email where the realm shows it, role, status text,
 * presence, and "Send direct message"). Avatars (here, in the message list and in
 * compose suggestions) are the server's own images when it has one for the person,
 * else initials on a colour derived from the user ID. Gravatar is not loaded: the
 * page's CSP allows images from this server only, and proxying Gravatar through the
 * server's camo (/external_content) would have the server send the MD5 of every
 * person's email address (reversible for most addresses by guessing) to gravatar.com,
 * needs a camo key the server may not have, and fails on servers without internet
 * access; for the many people with no Gravatar it would only show an identicon.
 */
import type { Api } from "./api.js";
import { h } from "./dom.js";
import type { Narrow } from "./narrow.js";
import type { Page, PageContext } from "./pages.js";
import type { Presence, PresenceStatus } from "./presence.js";
import type { ClientState } from "./state.js";
import type { ServerEvent, User } from "./types.js";

const ROLE_NAMES: Record<number, string> = {
  100: "Owner",
  200: "Administrator",
  300: "Moderator",
  400: "Member",
  600: "Guest",
};

export function roleName(role: number | undefined): string {
  return ROLE_NAMES[role ?? 400] ?? "Member";
}

const STATUS_TEXT: Record<PresenceStatus, string> = { active: "Active", idle: "Idle", offline: "Offline" };

function initials(name: string): string {
  const words = name
    .trim()
    .split(/\s+/u)
    .filter((w) => w !== "");
  const letters = words.length > 1 ? [words[0], words[words.length - 1]] : [words[0]];
  return letters.map((w) => [...(w ?? "?")][0]?.toUpperCase() ?? "").join("") || "?";
}

/** A URL the page's CSP lets an image load from: this server's own (an uploaded avatar). */
function sameOrigin(url: unknown): url is string {
  return typeof url === "string" && url.startsWith("/") && !url.startsWith("//");
}

function initialsAvatar(name: string, id: number, size: AvatarSize): HTMLElement {
  const el = h("span", { class: `avatar ${size}`, "aria-hidden": "true" }, initials(name));
  // A stable hue per person; lightness low enough for white text (contrast ≥ 4.5:1).
  el.style.backgroundColor = `hsl(${(id * 137) % 360} 55% 32%)`;
  return el;
}

export type AvatarSize = "tiny" | "small" | "large";

/**
 * A person's avatar: the image the server hosts, else initials on a colour. With
 * client_gravatar the server sends no URL for Gravatar avatars (Zulip's clients compute
 * it); the page does not load them, see the module comment. A message's sender may
 * be known by the message alone (`{ full_name, avatar_url }` from it).
 */
export function avatar(
  user: Pick<User, "full_name" | "avatar_url"> | undefined,
  id: number,
  size: AvatarSize = "small",
): HTMLElement {
  const name = user?.full_name ?? `user ${id}`;
  const url = user?.avatar_url;
  if (!sameOrigin(url)) return initialsAvatar(name, id, size);
  const img = h("img", { class: `avatar ${size}`, src: url, alt: "" });
  // A removed image (an avatar deleted since) shows the initials rather than a broken picture.
  img.addEventListener("error", () => img.replaceWith(initialsAvatar(name, id, size)), { once: true });
  return img;
}

export function presenceDot(status: PresenceStatus): HTMLElement {
  return h(
    "span",
    { class: `presence ${status}`, title: STATUS_TEXT[status] },
    h("span", { class: "visually-hidden" }, STATUS_TEXT[status]),
  );
}

const ORDER: Record<PresenceStatus, number> = { active: 0, idle: 1, offline: 2 };

export class PeoplePage implements Page {
  readonly element = h("section", { class: "page people-page", "aria-label": "People" });
  readonly #list = h("ul", { class: "page-list people", "aria-label": "People" });
  readonly #filter = h("input", { id: "people-filter", type: "search", autocomplete: "off" });

  constructor(
    private readonly ctx: PageContext,
    private readonly presence: Presence,
  ) {
    this.#filter.addEventListener("input", () => this.draw());
    this.element.append(
      h("div", { class: "page-tools" }, h("label", { for: "people-filter" }, "Filter people"), this.#filter),
      this.#list,
    );
    this.draw();
  }

  onEvents(events: readonly ServerEvent[]): void {
    if (events.some((e) => e.type === "presence" || e.type === "realm_user")) this.draw();
  }

  draw(): void {
    const needle = this.#filter.value.trim().toLowerCase();
    const people = [...this.ctx.state.users.values()]
      .filter((u) => u.is_active !== false && !u.is_bot)
      .filter((u) => needle === "" || u.full_name.toLowerCase().includes(needle))
      .map((u) => ({ u, status: this.presence.status(u.user_id) }))
      .sort((a, b) => ORDER[a.status] - ORDER[b.status] || a.u.full_name.localeCompare(b.u.full_name))
      .slice(0, 500);
    this.#list.replaceChildren(
      ...people.map(({ u, status }) =>
        h(
          "li",
          { class: "page-row person", "data-user-id": u.user_id, "data-presence": status },
          h(
            "button",
            { type: "button", class: "row-main link-button", onclick: () => this.ctx.showUser(u.user_id) },
            avatar(u, u.user_id),
            h("span", { class: "label" }, u.full_name),
            presenceDot(status),
          ),
        ),
      ),
    );
  }
}

/** The user card, opened from a sender's name or the people list. */
export function openUserCard(
  api: Api,
  state: ClientState,
  presence: Presence,
  userId: number,
  open: (view: Narrow) => void,
): void {
  const user = state.users.get(userId);
  const name = user?.full_name ?? state.userName(userId);
  const status = h("p", { class: "user-status" });
  const email = (user as { delivery_email?: unknown } | undefined)?.delivery_email ?? (user ? user.email : undefined);
  const dialog = h("dialog", { class: "dialog user-card", "aria-labelledby": "user-card-name" });
  const close = (): void => dialog.close();
  const details = h(
    "dl",
    { class: "user-details" },
    h("dt", {}, "Email"),
    h("dd", {}, typeof email === "string" ? email : "Hidden"),
    h("dt", {}, "Role"),
    h("dd", {}, user?.is_bot === true ? "Bot" : roleName(user?.role)),
    h("dt", {}, "Presence"),
    h("dd", {}, presenceDot(presence.status(userId)), " ", STATUS_TEXT[presence.status(userId)]),
  );
  dialog.append(
    h(
      "div",
      { class: "dialog-form" },
      h("div", { class: "user-head" }, avatar(user, userId, "large"), h("h2", { id: "user-card-name" }, name)),
      status,
      details,
      h(
        "div",
        { class: "dialog-buttons" },
        h("button", { type: "button", class: "secondary", onclick: close }, "Close"),
        h(
          "button",
          {
            type: "button",
            class: "primary",
            onclick: () => {
              close();
              open({ kind: "dm", userIds: [userId] });
            },
          },
          userId === state.me ? "Message yourself" : "Send direct message",
        ),
      ),
    ),
  );
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  // GET /users/{id}/status: the status text and emoji people set themselves.
  api
    .get(`/users/${userId}/status`)
    .then((reply) => {
      const s = (reply["status"] ?? {}) as { status_text?: unknown; away?: unknown };
      const text = typeof s.status_text === "string" ? s.status_text : "";
      status.textContent = text !== "" ? `Status: ${text}` : "";
    })
    .catch(() => undefined);
}
