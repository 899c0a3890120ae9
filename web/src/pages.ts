/**
 * Views that are not message lists (channel browser, recent conversations, drafts,
 * scheduled messages, people, settings): each a module that draws into the centre.
 * They live in the address under Zulip's hashes where Zulip has one (`#channels/all`,
 * `#recent`, `#drafts`, `#scheduled`, `#settings/...`, `#organization/...`).
 */
import "./pages.css";
import type { Api } from "./api.js";
import type { Narrow } from "./narrow.js";
import type { ClientState } from "./state.js";
import type { ServerEvent } from "./types.js";

export const PAGES = {
  channels: { hash: "#channels/all", title: "All channels" },
  recent: { hash: "#recent", title: "Recent conversations" },
  drafts: { hash: "#drafts", title: "Drafts" },
  scheduled: { hash: "#scheduled", title: "Scheduled messages" },
  people: { hash: "#people", title: "People" },
  settings: { hash: "#settings/profile", title: "Settings" },
  organization: { hash: "#organization/organization-settings", title: "Organization settings" },
} as const;

export type PageName = keyof typeof PAGES;

export function isPageName(name: string): name is PageName {
  return Object.hasOwn(PAGES, name);
}

/** The page an address names (Zulip's sub-pages open the page itself), else null. */
export function pageOfHash(hash: string): PageName | null {
  const first = hash.replace(/^#/, "").split("/")[0] ?? "";
  if (first === "streams") return "channels";
  return isPageName(first) ? first : null;
}

/** What a page may use of the app. */
export interface PageContext {
  readonly api: Api;
  readonly state: ClientState;
  /** The register reply, for settings the client state does not keep. */
  readonly initial: Readonly<Record<string, unknown>>;
  open(view: Narrow | { readonly kind: "inbox" }): void;
  /** Opens the conversation with the compose box holding `text`. */
  compose(target: Narrow, text: string): void;
  showUser(userId: number): void;
  error(text: string): void;
}

export interface Page {
  readonly element: HTMLElement;
  /** Redraws after events that concern it (the app calls it with every batch). */
  onEvents?(events: readonly ServerEvent[]): void;
  destroy?(): void;
}

export function errorText(error: unknown, fallback: string): string {
  return error instanceof Error && error.message !== "" ? error.message : fallback;
}
