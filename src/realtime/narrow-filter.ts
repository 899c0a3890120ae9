/**
 * @module realtime/narrow-filter
 * The `narrow` of POST /register: which message events a queue receives (Zulip's
 * narrow predicate for event queues). Supported operators: channel/stream (name or
 * ID), topic, sender (email or ID), is:dm/private/mentioned/starred/alerted/unread,
 * and search (every word of the operand, case-insensitive, in content or topic);
 * negation for all of them. Other operators are refused at register.
 */
import { BadNarrowError, type EngineEvent, type Store } from "../engine/index.js";

type MessageEvent = Extract<EngineEvent, { type: "message" }>;

export interface NarrowTermInput {
  readonly operator: string;
  readonly operand: unknown;
  readonly negated?: boolean;
}

export type MessagePredicate = (event: MessageEvent, userId: number) => boolean;

function lower(value: unknown): string {
  return String(value).trim().toLowerCase();
}

/** Builds the predicate, checking the terms at register time. */
export function narrowPredicate(store: Store, realmId: number, terms: readonly NarrowTermInput[]): MessagePredicate | null {
  if (terms.length === 0) return null;
  const tests: MessagePredicate[] = terms.map((term) => {
    const test = termTest(store, realmId, term);
    return term.negated ? (e, u) => !test(e, u) : test;
  });
  return (event, userId) => tests.every((t) => t(event, userId));
}

function termTest(store: Store, realmId: number, term: NarrowTermInput): MessagePredicate {
  const operand = term.operand;
  switch (term.operator) {
    case "channel":
    case "stream": {
      const wanted = typeof operand === "number" ? operand : lower(operand);
      return (e) => {
        if (e.message.recipient.type !== "channel") return false;
        if (typeof wanted === "number") return e.message.recipient.channelId === wanted;
        return lower(store.getChannel(e.message.recipient.channelId)?.name ?? "") === wanted;
      };
    }
    case "topic": {
      const wanted = lower(operand);
      return (e) => e.message.recipient.type === "channel" && e.message.topic.toLowerCase() === wanted;
    }
    case "sender": {
      if (typeof operand === "number") return (e) => e.message.senderId === operand;
      const user = store.findUserByEmail(realmId, String(operand));
      const id = user?.id ?? -1;
      return (e) => e.message.senderId === id;
    }
    case "is":
      switch (lower(operand)) {
        case "dm":
        case "private":
          return (e) => e.message.recipient.type === "direct";
        case "mentioned":
          return (e, u) => e.flagsFor(u).some((f) => f === "mentioned" || f === "wildcard_mentioned" || f === "group_mentioned");
        case "starred":
          return (e, u) => e.flagsFor(u).includes("starred");
        case "alerted":
          return (e, u) => e.flagsFor(u).includes("has_alert_word");
        case "unread":
          return (e, u) => !e.flagsFor(u).includes("read");
        default:
          throw new BadNarrowError(`is:${String(operand).slice(0, 100)}`);
      }
    case "search": {
      const words = lower(operand).split(/\s+/).filter((w) => w !== "");
      return (e) => {
        const text = `${e.message.topic} ${e.message.content}`.toLowerCase();
        return words.every((w) => text.includes(w));
      };
    }
    default:
      throw new BadNarrowError(String(term.operator).slice(0, 100));
  }
}
