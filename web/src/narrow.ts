/**
 * Narrows: what the centre shows. Each becomes Zulip's `narrow` parameter; the common
 * ones can also be matched against a live message, so new messages join the list
 * without a refetch (a full-text search cannot: the server decides those).
 */
import type { Message } from "./types.js";

export interface Term {
  readonly operator: string;
  readonly operand: string | number | readonly number[];
  readonly negated?: boolean;
}

export type Narrow =
  | { readonly kind: "all" }
  | { readonly kind: "channel"; readonly streamId: number }
  | { readonly kind: "topic"; readonly streamId: number; readonly topic: string }
  | { readonly kind: "dm"; readonly userIds: readonly number[] }
  | { readonly kind: "mentions" }
  | { readonly kind: "starred" }
  | { readonly kind: "search"; readonly query: string; readonly terms: readonly Term[] };

export function termsOf(narrow: Narrow): readonly Term[] {
  switch (narrow.kind) {
    case "all":
      return [];
    case "channel":
      return [{ operator: "channel", operand: narrow.streamId }];
    case "topic":
      return [
        { operator: "channel", operand: narrow.streamId },
        { operator: "topic", operand: narrow.topic },
      ];
    case "dm":
      return [{ operator: "dm", operand: narrow.userIds }];
    case "mentions":
      return [{ operator: "is", operand: "mentioned" }];
    case "starred":
      return [{ operator: "is", operand: "starred" }];
    case "search":
      return narrow.terms;
  }
}

export function sameNarrow(a: Narrow, b: Narrow): boolean {
  return JSON.stringify(termsOf(a)) === JSON.stringify(termsOf(b));
}

/** The other participants of a DM, sorted; a DM with oneself is [self]. */
export function dmUserIds(message: Message, me: number): number[] {
  if (typeof message.display_recipient === "string") return [];
  const others = message.display_recipient.map((r) => r.id).filter((id) => id !== me);
  return (others.length > 0 ? others : [me]).sort((a, b) => a - b);
}

/** The conversation a message belongs to, as a map key. */
export function conversationKey(message: Message, me: number): string {
  return message.type === "stream" ? topicKey(message.stream_id ?? 0, message.subject) : dmKey(dmUserIds(message, me));
}

export function topicKey(streamId: number, topic: string): string {
  // Zulip's topics are case-insensitive.
  return `s:${streamId}:${topic.toLowerCase()}`;
}

export function dmKey(userIds: readonly number[]): string {
  return `d:${[...userIds].sort((a, b) => a - b).join(",")}`;
}

/** The narrow of the conversation a message is in (what "reply" targets). */
export function conversationOf(message: Message, me: number): Narrow {
  return message.type === "stream"
    ? { kind: "topic", streamId: message.stream_id ?? 0, topic: message.subject }
    : { kind: "dm", userIds: dmUserIds(message, me) };
}

/** Whether a new message belongs in the narrow; null when only the server can tell. */
export function matches(narrow: Narrow, message: Message, me: number): boolean | null {
  switch (narrow.kind) {
    case "all":
      return true;
    case "channel":
      return message.type === "stream" && message.stream_id === narrow.streamId;
    case "topic":
      return (
        message.type === "stream" &&
        message.stream_id === narrow.streamId &&
        message.subject.toLowerCase() === narrow.topic.toLowerCase()
      );
    case "dm":
      return message.type === "private" && dmKey(dmUserIds(message, me)) === dmKey(narrow.userIds);
    case "mentions":
      return message.flags.some(
        (f) => f === "mentioned" || f === "stream_wildcard_mentioned" || f === "topic_wildcard_mentioned",
      );
    case "starred":
      return message.flags.includes("starred");
    case "search":
      return null;
  }
}

/** Whether the narrow shows every message of a channel topic (where messages moved to, say). */
export function holdsConversation(narrow: Narrow, streamId: number, topic: string): boolean {
  switch (narrow.kind) {
    case "all":
      return true;
    case "channel":
      return narrow.streamId === streamId;
    case "topic":
      return narrow.streamId === streamId && narrow.topic.toLowerCase() === topic.toLowerCase();
    default:
      return false;
  }
}

export interface Directory {
  channelIdByName(name: string): number | undefined;
  userIdByEmail(email: string): number | undefined;
  /** The reader's user ID (for `sender:me`). */
  readonly me?: number;
}

/** Words of a search, honouring double quotes: `topic:"a b"` is one token. */
function tokens(text: string): string[] {
  const out: string[] = [];
  const re = /(-?[a-z-]+:)?"([^"]*)"|(\S+)/giu;
  for (const m of text.matchAll(re)) out.push(m[3] ?? `${m[1] ?? ""}${m[2] ?? ""}`);
  return out;
}

const OPERATORS = new Set([
  "channel",
  "stream",
  "topic",
  "subject",
  "dm",
  "pm-with",
  "dm-including",
  "sender",
  "from",
  "is",
  "has",
  "near",
  "id",
  "search",
  "channels",
  "streams",
  "in",
]);

/**
 * Zulip's search grammar (`channel:design topic:"release 1.0" is:starred -sender:x words`):
 * operator:operand pairs, `-` negates, the rest is full-text search. Channel names and
 * emails become IDs when known. A search that is just a channel, a topic or a DM
 * becomes that narrow, so it stays live.
 */
export function parseSearch(query: string, dir: Directory): Narrow {
  const terms: Term[] = [];
  const words: string[] = [];
  for (const token of tokens(query.trim())) {
    const colon = token.indexOf(":");
    const negated = token.startsWith("-");
    const operator = (colon > 0 ? token.slice(negated ? 1 : 0, colon) : "").toLowerCase();
    if (!OPERATORS.has(operator)) {
      words.push(token);
      continue;
    }
    const operand = token.slice(colon + 1);
    const op =
      operator === "stream"
        ? "channel"
        : operator === "subject"
          ? "topic"
          : operator === "pm-with"
            ? "dm"
            : operator === "from"
              ? "sender"
              : operator === "streams"
                ? "channels"
                : operator;
    let value: Term["operand"] = operand;
    if (op === "channel") value = dir.channelIdByName(operand) ?? operand;
    // Zulip's `sender:me`, which its clients resolve: the server takes an email or an ID.
    if (op === "sender" && operand.toLowerCase() === "me" && dir.me !== undefined) value = dir.me;
    if (op === "dm") {
      const ids = operand.split(",").map((e) => dir.userIdByEmail(e.trim()));
      if (ids.every((id): id is number => id !== undefined)) value = ids;
    }
    terms.push(negated ? { operator: op, operand: value, negated: true } : { operator: op, operand: value });
  }
  if (words.length > 0) terms.push({ operator: "search", operand: words.join(" ") });
  const plain = terms.every((t) => !t.negated);
  const channel = terms.find((t) => t.operator === "channel");
  const topic = terms.find((t) => t.operator === "topic");
  if (plain && terms.length === 1 && channel && typeof channel.operand === "number")
    return { kind: "channel", streamId: channel.operand };
  if (
    plain &&
    terms.length === 2 &&
    channel &&
    topic &&
    typeof channel.operand === "number" &&
    typeof topic.operand === "string"
  )
    return { kind: "topic", streamId: channel.operand, topic: topic.operand };
  if (plain && terms.length === 1 && terms[0]?.operator === "dm" && Array.isArray(terms[0].operand))
    return { kind: "dm", userIds: terms[0].operand };
  if (terms.length === 0) return { kind: "all" };
  return { kind: "search", query: query.trim(), terms };
}
