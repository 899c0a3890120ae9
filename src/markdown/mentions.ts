/**
 * @module markdown/mentions
 * User, wildcard and user-group mentions: `@**Name**`, `@**Name|id**`, `@**|id**`,
 * `@**all**`, `@**topic**`, `@*group*`, and their silent `@_` forms. Mentions
 * inside block quotes are silenced, as Zulip does, so quoting a message does not
 * re-notify the people it mentioned. A mention that does not resolve is left for
 * the other inline rules, so `@**Nobody**` renders as `@<strong>Nobody</strong>`
 * exactly like Zulip.
 */
import type { StateInline } from "markdown-it";
import type { RenderContext, RenderUser } from "../engine/render.js";
import { escapeAttr, escapeText } from "./escape.js";
import { pushInlineHtml } from "./raw-html.js";
import { renderStateOf, type RenderState } from "./render-state.js";

/** Bound on a mention body: keeps each attempt O(1) so hostile input stays linear. */
const MAX_NAME = 200;
/** `@**body**` or silent `@_**body**` at lastIndex: groups 1 (the `_`) and 2 (the body). */
export const USER_MENTION_RE = new RegExp(String.raw`@(_?)\*\*([^*]{1,${MAX_NAME}})\*\*`, "y");
const GROUP_MENTION_RE = new RegExp(String.raw`@(_?)\*([^*]{1,${MAX_NAME}})\*`, "y");
/** `Name|123` or `|123`: the id disambiguates users who share a name. */
const ID_SYNTAX_RE = /^(.+)?\|(\d{1,15})$/s;

const STREAM_WILDCARDS: ReadonlySet<string> = new Set(["all", "everyone", "stream", "channel"]);
const TOPIC_WILDCARD = "topic";

/**
 * Zulip only starts mentions and channel links at the start of the text, after
 * whitespace, or after one of `'"({[/<`, so e-mail-like text such as `a@**b**`
 * is left alone.
 */
export function mayStartMention(src: string, pos: number): boolean {
  if (pos === 0) return true;
  const prev = src[pos - 1] ?? "";
  return /\s/.test(prev) || `'"({[/<`.includes(prev);
}

/** What a recognised mention contributes: its HTML and the fact it records. */
export interface MentionMatch {
  readonly end: number;
  readonly html: string;
  readonly record: (state: RenderState) => void;
}

const recordNothing = (): void => undefined;

function resolveUser(body: string, context: RenderContext): RenderUser | undefined {
  const idSyntax = ID_SYNTAX_RE.exec(body);
  if (idSyntax) {
    const user = context.findUserById(Number(idSyntax[2]));
    const name = idSyntax[1];
    // @**Alice|7** where 7 is not Alice must not silently mention user 7.
    if (user && name !== undefined && user.fullName.toLowerCase() !== name.toLowerCase()) return undefined;
    return user;
  }
  const users = context.findUsersByName(body);
  // Several users share the name: Zulip cannot tell which one is meant.
  return users.length === 1 ? users[0] : undefined;
}

/** A user or wildcard mention's HTML and fact (plain.ts renders lines of text and mentions without markdown-it). */
export function userMention(body: string, silent: boolean, end: number, context: RenderContext): MentionMatch | null {
  const silentClass = silent ? " silent" : "";
  if (STREAM_WILDCARDS.has(body)) {
    const text = silent ? body : `@${body}`;
    return {
      end,
      html: `<span class="user-mention channel-wildcard-mention${silentClass}" data-user-id="*">${escapeText(text)}</span>`,
      record: silent ? recordNothing : (state) => void (state.streamWildcard = true),
    };
  }
  if (body === TOPIC_WILDCARD) {
    const text = silent ? body : `@${body}`;
    return {
      end,
      html: `<span class="topic-mention${silentClass}">${escapeText(text)}</span>`,
      record: silent ? recordNothing : (state) => void (state.topicWildcard = true),
    };
  }
  const user = resolveUser(body, context);
  if (!user) return null;
  const text = silent ? user.fullName : `@${user.fullName}`;
  return {
    end,
    html: `<span class="user-mention${silentClass}" data-user-id="${escapeAttr(String(user.id))}">${escapeText(text)}</span>`,
    record: silent ? recordNothing : (state) => void state.mentionedUserIds.add(user.id),
  };
}

function groupMention(body: string, silent: boolean, end: number, context: RenderContext): MentionMatch | null {
  const group = context.findGroupByName(body);
  if (!group) return null;
  const text = silent ? group.name : `@${group.name}`;
  return {
    end,
    html: `<span class="user-group-mention${silent ? " silent" : ""}" data-user-group-id="${escapeAttr(String(group.id))}">${escapeText(text)}</span>`,
    record: silent ? recordNothing : (state) => void state.mentionedGroupIds.add(group.id),
  };
}

function matchAt(re: RegExp, src: string, pos: number, max: number): RegExpExecArray | null {
  re.lastIndex = pos;
  const match = re.exec(src);
  return match && pos + match[0].length <= max ? match : null;
}

function findMention(state: StateInline, renderState: RenderState): MentionMatch | null {
  const { src, pos, posMax } = state;
  const quoted = renderState.quoteDepth > 0;
  const user = matchAt(USER_MENTION_RE, src, pos, posMax);
  if (user) {
    const found = userMention(user[2] ?? "", user[1] === "_" || quoted, pos + user[0].length, renderState.context);
    if (found) return found;
  }
  const group = matchAt(GROUP_MENTION_RE, src, pos, posMax);
  if (group) {
    return groupMention(group[2] ?? "", group[1] === "_" || quoted, pos + group[0].length, renderState.context);
  }
  return null;
}

/** markdown-it inline rule for everything starting with `@`. */
export function mentionRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x40 /* @ */) return false;
  if (!mayStartMention(state.src, state.pos)) return false;
  const renderState = renderStateOf(state.env);
  const mention = findMention(state, renderState);
  if (!mention) return false;
  // Silent mode only asks "does something match here?" (e.g. while scanning a link
  // label); facts are recorded when the token is really emitted.
  if (!silent) {
    mention.record(renderState);
    pushInlineHtml(state, mention.html);
  }
  state.pos = mention.end;
  return true;
}
