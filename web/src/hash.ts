/**
 * The view in the address, in Zulip's hash format (`#inbox`, `#feed`,
 * `#narrow/channel/12-design/topic/release.201.2E0`, `#narrow/dm/7-Bob`), so reload,
 * Back/Forward and links copied from Zulip or from messages all name the same views.
 * Zulip's encoding: encodeURIComponent, then `%`, `(`, `)` and `.` written with `.`,
 * because some browsers decode `%` escapes in location.hash.
 */
import type { Narrow, Term } from "./narrow.js";

/** What the centre shows (sidebar.ts's View, repeated so dom.ts need not import the sidebar). */
type View = { readonly kind: "inbox" } | Narrow;

export interface HashDirectory {
  readonly me: number;
  channelIdByName(name: string): number | undefined;
  channelName(id: number): string;
  userIdByEmail(email: string): number | undefined;
  userName(id: number): string;
}

const REPLACEMENTS: Record<string, string> = { "%": ".", "(": ".28", ")": ".29", ".": ".2E" };

export function encodeHashComponent(text: string): string {
  return encodeURIComponent(text).replace(/[%().]/g, (c) => REPLACEMENTS[c] ?? c);
}

/** Null for text that no encoder made (a stray `.` followed by non-hex). */
export function decodeHashComponent(text: string): string | null {
  try {
    return decodeURIComponent(text.replace(/\./g, "%"));
  } catch {
    return null;
  }
}

/**
 * `12-design-team`: the ID carries the meaning, the name is a hint for people, dropped
 * (as Zulip drops it) when encoding would make it much longer than the name itself.
 */
function channelSlug(id: number, dir: HashDirectory): string {
  const slug = `${id}-${dir.channelName(id).replace(/ /g, "-")}`;
  const encoded = encodeHashComponent(slug);
  const longer = encoded.length - slug.length;
  return longer > Math.max(slug.length, 10) || encoded.length > slug.length * 1.5 ? String(id) : encoded;
}

function dmSlug(userIds: readonly number[], dir: HashDirectory): string {
  const [only] = userIds;
  const suffix =
    userIds.length === 1 && only !== undefined ? dir.userName(only).replace(/[ "%/<>`\p{C}]+/gu, "-") : "group";
  return encodeHashComponent(`${userIds.join(",")}-${suffix}`);
}

function termPath(term: Term, dir: HashDirectory): string {
  const op = `${term.negated ? "-" : ""}${term.operator}`;
  const operand = term.operand;
  if (term.operator === "channel" && typeof operand === "number") return `${op}/${channelSlug(operand, dir)}`;
  if (Array.isArray(operand)) return `${op}/${dmSlug(operand as readonly number[], dir)}`;
  return `${op}/${encodeHashComponent(String(operand))}`;
}

export function hashOf(view: View, dir: HashDirectory): string {
  switch (view.kind) {
    case "inbox":
      return "#inbox";
    case "all":
      return "#feed";
    case "mentions":
      return "#narrow/is/mentioned";
    case "starred":
      return "#narrow/is/starred";
    case "channel":
      return `#narrow/channel/${channelSlug(view.streamId, dir)}`;
    case "topic":
      return `#narrow/channel/${channelSlug(view.streamId, dir)}/topic/${encodeHashComponent(view.topic)}`;
    case "dm":
      return `#narrow/dm/${dmSlug(view.userIds, dir)}`;
    case "search":
      return `#narrow/${view.terms.map((t) => termPath(t, dir)).join("/")}`;
  }
}

/** Zulip's older names for operators still appear in links people kept. */
const CANONICAL: Record<string, string> = {
  stream: "channel",
  subject: "topic",
  "pm-with": "dm",
  "group-pm-with": "dm-including",
  from: "sender",
  streams: "channels",
};

/** Operators that only place the view around a message: the conversation opens whole. */
const POSITION_ONLY = new Set(["near", "with", "id"]);

function operandOf(operator: string, text: string, dir: HashDirectory): Term["operand"] {
  if (operator === "channel") {
    const id = /^(\d+)(-.*)?$/su.exec(text)?.[1];
    return id !== undefined ? Number(id) : (dir.channelIdByName(text) ?? text);
  }
  if (operator === "dm") {
    const ids = /^(\d+(?:,\d+)*)(-.*)?$/su.exec(text)?.[1];
    if (ids !== undefined) {
      const all = ids.split(",").map(Number);
      const others = all.filter((id) => id !== dir.me);
      return (others.length > 0 ? others : [dir.me]).sort((a, b) => a - b);
    }
    const byEmail = text.split(",").map((e) => dir.userIdByEmail(e.trim()));
    return byEmail.every((id): id is number => id !== undefined) ? byEmail.sort((a, b) => a - b) : text;
  }
  if (operator === "sender" || operator === "dm-including") {
    const id = /^(\d+)(-.*)?$/su.exec(text)?.[1];
    return id !== undefined ? Number(id) : text;
  }
  return text;
}

/** How a search box would spell the term (the view's title shows it). */
function termText(term: Term, dir: HashDirectory): string {
  const o = term.operand;
  let operand: string;
  if (typeof o === "string") operand = o;
  else if (typeof o === "number") operand = term.operator === "channel" ? dir.channelName(o) : dir.userName(o);
  else operand = o.map((id) => dir.userName(id)).join(",");
  if (term.operator === "search") return operand;
  const text = /\s/.test(operand) ? `"${operand}"` : operand;
  return `${term.negated ? "-" : ""}${term.operator}:${text}`;
}

/** The view a location.hash names; null when it names none (the caller picks a default). */
export function parseHash(hash: string, dir: HashDirectory): View | null {
  const path = hash.replace(/^#/, "").replace(/\/$/, "");
  if (path === "inbox") return { kind: "inbox" };
  if (path === "feed" || path === "all_messages" || path === "narrow") return { kind: "all" };
  const parts = path.split("/");
  if (parts[0] !== "narrow") return null;
  const terms: Term[] = [];
  for (let i = 1; i + 1 < parts.length; i += 2) {
    const raw = parts[i] ?? "";
    const negated = raw.startsWith("-");
    const name = raw.slice(negated ? 1 : 0).toLowerCase();
    const operator = CANONICAL[name] ?? name;
    const text = decodeHashComponent(parts[i + 1] ?? "");
    if (text === null || operator === "") return null;
    if (POSITION_ONLY.has(operator)) continue;
    const operand = operandOf(operator, text, dir);
    terms.push(negated ? { operator, operand, negated: true } : { operator, operand });
  }
  return narrowOf(terms, dir);
}

function narrowOf(terms: readonly Term[], dir: HashDirectory): Narrow {
  const plain = terms.every((t) => !t.negated);
  const [first, second] = terms;
  if (plain && first?.operator === "channel" && typeof first.operand === "number") {
    if (terms.length === 1) return { kind: "channel", streamId: first.operand };
    if (terms.length === 2 && second?.operator === "topic" && typeof second.operand === "string")
      return { kind: "topic", streamId: first.operand, topic: second.operand };
  }
  if (plain && terms.length === 1 && first?.operator === "dm" && Array.isArray(first.operand))
    return { kind: "dm", userIds: first.operand as readonly number[] };
  if (plain && terms.length === 1 && first?.operator === "is" && first.operand === "mentioned")
    return { kind: "mentions" };
  if (plain && terms.length === 1 && first?.operator === "is" && first.operand === "starred")
    return { kind: "starred" };
  if (terms.length === 0) return { kind: "all" };
  return { kind: "search", query: terms.map((t) => termText(t, dir)).join(" "), terms };
}

/**
 * A link inside a message that names a view of this app (`/#narrow/...` on this
 * server, or a bare `#narrow/...`): its hash, else null.
 */
export function inAppHash(href: string, base: string): string | null {
  let url: URL;
  try {
    url = new URL(href, base);
  } catch {
    return null;
  }
  const here = new URL(base);
  if (url.origin !== here.origin || url.pathname !== "/" || url.search !== "") return null;
  return url.hash.startsWith("#narrow/") || url.hash === "#inbox" || url.hash === "#feed" ? url.hash : null;
}
