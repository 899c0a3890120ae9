/**
 * @module narrow/normalize
 * RawTerm[] -> Term[]: folds aliases (stream, pm-with, dm-with, is:private, ...),
 * resolves channel and user names to IDs, rewrites `with`, and rejects impossible
 * combinations, with Zulip's BAD_NARROW messages. Message access is enforced by the
 * universe (plan.ts); a channel the caller may not see is "unknown", like a missing one.
 */
import { canAccessMessage, canSeeChannel } from "../access.js";
import { BadNarrowError, clip } from "../errors.js";
import type { NarrowReader } from "../directory.js";
import type { Channel, User } from "../types.js";
import type { HasTermOperand, IsOperand, RawTerm, Term } from "./terms.js";

const MAX_MESSAGE_ID = 2147483647;
// A Map, not an object literal: operands are client input, and "constructor" or
// "__proto__" must not reach Object.prototype.
const IS_OPERANDS: ReadonlyMap<string, IsOperand> = new Map([
  ["dm", "dm"],
  ["private", "dm"],
  ["starred", "starred"],
  ["unread", "unread"],
  ["mentioned", "mentioned"],
  ["alerted", "alerted"],
  ["resolved", "resolved"],
  ["followed", "followed"],
  ["muted", "muted"],
]);
const HAS_OPERANDS = new Set<string>(["link", "image", "attachment", "reaction"]);

export function normalizeNarrow(state: NarrowReader, user: User, raw: readonly RawTerm[]): Term[] {
  const rewritten = rewriteWith(state, user, raw);
  const terms: Term[] = [];
  const searches: string[] = [];
  for (const t of rewritten) {
    const term = normalizeTerm(state, user, t);
    // Zulip joins every search operand into one search term, applied last; negation is dropped.
    if (term?.kind === "search") searches.push(term.query);
    else if (term) terms.push(term);
  }
  if (searches.length > 0) terms.push({ kind: "search", query: searches.join(" "), negated: false });
  checkChannelDmConflict(terms);
  return terms;
}

function normalizeTerm(state: NarrowReader, user: User, t: RawTerm): Term | null {
  const negated = t.negated;
  switch (t.operator) {
    case "channel":
    case "stream":
      return { kind: "channel", channelId: resolveChannel(state, user, t.operand), negated };
    case "channels":
    case "streams":
      if (t.operand !== "public" && t.operand !== "web-public")
        throw new BadNarrowError(`unknown channels operand ${quote(t.operand)}`);
      return { kind: "channels", which: t.operand, negated };
    case "topic":
      return { kind: "topic", topic: normalizeTopicOperand(state, user, String(t.operand)), negated };
    case "sender":
      return { kind: "sender", userId: resolveUser(state, user, t.operand, "unknown user"), negated };
    case "dm":
    case "pm-with":
    case "pm_with":
      return normalizeDm(state, user, t.operand, negated);
    case "dm-including":
    case "dm-with":
      return { kind: "dmIncluding", userId: resolveUser(state, user, t.operand, "unknown user"), negated };
    case "group-pm-with":
    case "group_pm_with":
      return { kind: "groupDmWith", userId: resolveUser(state, user, t.operand, "unknown user"), negated };
    case "is": {
      const what = IS_OPERANDS.get(String(t.operand));
      if (!what) throw new BadNarrowError(`unknown 'is' operand ${quote(t.operand)}`);
      return { kind: "is", what, negated };
    }
    case "has":
      if (!HAS_OPERANDS.has(String(t.operand))) throw new BadNarrowError(`unknown 'has' operand ${quote(t.operand)}`);
      return { kind: "has", what: t.operand as HasTermOperand, negated };
    case "in":
      if (t.operand === "home") return { kind: "inHome", negated };
      if (t.operand === "all") return null;
      throw new BadNarrowError(`unknown 'in' operand ${quote(t.operand)}`);
    case "search":
      return { kind: "search", query: String(t.operand), negated };
    case "id":
      return { kind: "id", messageId: parseMessageId(t.operand, "Invalid message ID"), negated };
    case "near":
      return null;
    case "mentions":
      return { kind: "mentions", userId: resolveUser(state, user, t.operand, "unknown user"), negated };
    default:
      throw new BadNarrowError(`unknown operator ${clip(t.operator)}`);
  }
}

function resolveChannel(state: NarrowReader, user: User, operand: RawTerm["operand"]): number {
  if (typeof operand === "number") {
    const channel = state.channelDirectory.get(operand);
    if (!channel || !mayNameChannel(state, user, channel)) throw new BadNarrowError(`unknown channel ${operand}`);
    return channel.id;
  }
  const name = String(operand);
  // Zulip accepts a numeric string as a channel ID too.
  const channel =
    state.channelDirectory.byName(user.realmId, name) ??
    (/^\d+$/.test(name) ? state.channelDirectory.get(Number(name)) : undefined);
  if (!channel || !mayNameChannel(state, user, channel)) throw new BadNarrowError(`unknown channel ${clip(name)}`);
  return channel.id;
}

/**
 * Zulip resolves a narrow's channel without an access check, so a private channel
 * answered an empty window where a missing one was "unknown channel": an existence
 * oracle. Here a channel the caller cannot see is unknown, unless they were ever
 * subscribed (they keep the messages they received, and know the channel).
 */
function mayNameChannel(state: NarrowReader, user: User, channel: Channel): boolean {
  return (
    canSeeChannel(state, user, channel) ||
    (channel.realmId === user.realmId && state.channelDirectory.subscription(user.id, channel.id) !== undefined)
  );
}

function findUser(state: NarrowReader, me: User, ref: string | number): User | undefined {
  const text = typeof ref === "number" ? "" : ref.trim();
  const user =
    typeof ref === "number" || /^\d+$/.test(text)
      ? state.userDirectory.get(typeof ref === "number" ? ref : Number(text))
      : state.userDirectory.byEmail(me.realmId, text);
  return user && user.realmId === me.realmId ? user : undefined;
}

function resolveUser(state: NarrowReader, me: User, operand: RawTerm["operand"], prefix: string): number {
  if (Array.isArray(operand)) throw new BadNarrowError(`${prefix} ${quote(operand)}`);
  const user = findUser(state, me, operand as string | number);
  if (!user) throw new BadNarrowError(`${prefix} ${quote(operand)}`);
  return user.id;
}

function normalizeDm(state: NarrowReader, me: User, operand: RawTerm["operand"], negated: boolean): Term {
  const refs: (string | number)[] = Array.isArray(operand)
    ? [...operand]
    : String(operand)
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
  if (refs.length === 0) return { kind: "dm", userIds: [], empty: true, negated };
  const ids = new Set<number>();
  for (const ref of refs) {
    const user = findUser(state, me, ref);
    if (!user) throw new BadNarrowError(`unknown user in ${quote(operand)}`);
    ids.add(user.id);
  }
  ids.delete(me.id);
  return { kind: "dm", userIds: [...ids].sort((a, b) => a - b), empty: false, negated };
}

/** An operand as quoted in an error: long strings and lists are cut. */
function quote(operand: RawTerm["operand"]): string {
  if (!Array.isArray(operand)) return clip(String(operand));
  const shown = JSON.stringify(operand.slice(0, 20));
  return clip(operand.length > 20 ? `${shown.slice(0, -1)},…]` : shown);
}

function normalizeTopicOperand(state: NarrowReader, user: User, topic: string): string {
  const realm = state.realmDirectory.get(user.realmId);
  return topic === realm?.emptyTopicDisplayName ? "" : topic;
}

function parseMessageId(operand: RawTerm["operand"], error: string): number {
  const text = typeof operand === "number" ? String(operand) : typeof operand === "string" ? operand.trim() : "";
  if (!/^\d+$/.test(text)) throw new BadNarrowError(error);
  const id = Number(text);
  if (id > MAX_MESSAGE_ID) throw new BadNarrowError(error);
  return id;
}

/** Zulip's update_narrow_terms_containing_with_operator. */
function rewriteWith(state: NarrowReader, user: User, raw: readonly RawTerm[]): readonly RawTerm[] {
  const withTerms = raw.filter((t) => t.operator === "with");
  if (withTerms.length === 0) return raw;
  if (withTerms.length > 1) throw new BadNarrowError("Duplicate 'with' operators.", "combination");
  const operand = withTerms[0]!.operand;
  if (typeof operand !== "number" && (typeof operand !== "string" || !/^\d+$/.test(operand.trim()))) {
    throw new BadNarrowError("Invalid 'with' operator");
  }
  const messageId = Number(operand);
  const rest = raw.filter((t) => t.operator !== "with");
  const message = messageId <= MAX_MESSAGE_ID ? state.messageRecord(messageId) : undefined;
  if (!message || !canAccessMessage(state, user, message)) {
    const has = (ops: string[]) => rest.some((t) => ops.includes(t.operator) && !t.negated);
    const definesConversation = (has(["channel", "stream"]) && has(["topic"])) || has(["dm", "pm-with", "pm_with"]);
    if (definesConversation) return rest;
    throw new BadNarrowError("Invalid 'with' operator");
  }
  const conversationOps = ["channel", "stream", "topic", "dm", "pm-with", "pm_with"];
  const kept = rest.filter((t) => !conversationOps.includes(t.operator));
  if (message.recipient.type === "channel") {
    return [
      ...kept,
      { operator: "channel", operand: message.recipient.channelId, negated: false },
      { operator: "topic", operand: message.topic, negated: false },
    ];
  }
  const conversation = state.conversations.get(message.recipient.conversationId);
  return [...kept, { operator: "dm", operand: conversation ? [...conversation.userIds] : [], negated: false }];
}

/** Zulip: non-negated channel-ish terms and non-negated DM terms cannot be combined. */
function checkChannelDmConflict(terms: readonly Term[]): void {
  let channelish = false;
  let dmish = false;
  for (const t of terms) {
    if (t.kind === "is" && t.what === "dm") {
      if (t.negated) channelish = true;
      else dmish = true;
      continue;
    }
    if (t.negated) continue;
    if (t.kind === "channel" || t.kind === "channels" || t.kind === "topic") channelish = true;
    if (t.kind === "dm" || t.kind === "dmIncluding" || t.kind === "groupDmWith") dmish = true;
  }
  if (channelish && dmish) throw new BadNarrowError("No message can be both a channel message and direct message");
}
