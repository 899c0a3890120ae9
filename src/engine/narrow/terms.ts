/**
 * @module narrow/terms
 * Narrow terms at two stages: RawTerm as parsed from the wire (operator names as
 * sent), and Term after normalization (aliases folded, names resolved to IDs).
 * Terms are plain readonly values, discriminated by `kind`.
 */

export interface RawTerm {
  readonly operator: string;
  readonly operand: string | number | readonly number[];
  readonly negated: boolean;
}

export type IsOperand = "dm" | "starred" | "unread" | "mentioned" | "alerted" | "resolved" | "followed" | "muted";
export type HasTermOperand = "link" | "image" | "attachment" | "reaction";

export type Term =
  | { readonly kind: "channel"; readonly channelId: number; readonly negated: boolean }
  | { readonly kind: "channels"; readonly which: "public" | "web-public"; readonly negated: boolean }
  | { readonly kind: "topic"; readonly topic: string; readonly negated: boolean }
  | { readonly kind: "sender"; readonly userId: number; readonly negated: boolean }
  /** Conversation of these users plus the caller (empty list: nothing matches). */
  | { readonly kind: "dm"; readonly userIds: readonly number[]; readonly empty: boolean; readonly negated: boolean }
  | { readonly kind: "dmIncluding"; readonly userId: number; readonly negated: boolean }
  | { readonly kind: "groupDmWith"; readonly userId: number; readonly negated: boolean }
  | { readonly kind: "is"; readonly what: IsOperand; readonly negated: boolean }
  | { readonly kind: "has"; readonly what: HasTermOperand; readonly negated: boolean }
  | { readonly kind: "inHome"; readonly negated: boolean }
  | { readonly kind: "search"; readonly query: string; readonly negated: boolean }
  | { readonly kind: "id"; readonly messageId: number; readonly negated: boolean }
  | { readonly kind: "mentions"; readonly userId: number; readonly negated: boolean };

export type TermKind = Term["kind"];
