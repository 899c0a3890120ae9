/**
 * @module queries/get-messages
 * GET /messages semantics: narrow -> plan -> bitmap -> anchor -> window -> messages
 * with the caller's flags and search highlights. Also used by flag updates by narrow.
 */
import type { NarrowReader } from "../directory.js";
import { BadRequestError, MissingArgumentError } from "../errors.js";
import { RoaringBitmap32 } from "../index/bitmap-store.js";
import { key } from "../index/keys.js";
import {
  executePlan,
  mutedHas,
  mutedSet,
  planNarrow,
  type Plan,
  type PlanContext,
  type UniverseKind,
} from "../narrow/plan.js";
import { lazyMatching, type MatchingSet } from "../narrow/lazy.js";
import { matchFloor, NO_MATCH_FLOOR } from "../narrow/first-unread.js";
import { normalizeNarrow } from "../narrow/normalize.js";
import { parseNarrow } from "../narrow/parse.js";
import type { Term } from "../narrow/terms.js";
import { NEWEST_ANCHOR, selectWindow, type WindowResult } from "../narrow/window.js";
import { highlightHtml, highlightTopic, parseSearchQuery } from "../search/index.js";
import type { Message } from "../types.js";
import { flagsForWindow, type ApiFlag } from "./message-flags.js";

export const MAX_MESSAGES_PER_FETCH = 5000;

export type AnchorSpec = number | "newest" | "oldest" | "first_unread" | "date";

export interface WindowInput {
  /** Decoded JSON of the narrow parameter (validated here). */
  readonly narrow?: unknown;
  readonly anchor?: AnchorSpec;
  /** ISO 8601 date or datetime, for anchor "date". */
  readonly anchorDate?: string;
  readonly includeAnchor?: boolean;
  readonly numBefore?: number;
  readonly numAfter?: number;
}

export interface GetMessagesInput extends WindowInput {
  readonly messageIds?: readonly number[];
}

/** A window as IDs and flags only: what a serializer with its own message cache needs. */
export interface MessageWindow {
  readonly anchor?: number;
  readonly foundAnchor: boolean;
  readonly foundOldest: boolean;
  readonly foundNewest: boolean;
  readonly historyLimited: boolean;
  readonly ids: readonly number[];
  /** Parallel to ids; equal flag lists are the same interned array. */
  readonly flags: readonly (readonly ApiFlag[])[];
  /** Stemmed search terms to highlight, when the narrow searches. */
  readonly searchTerms: ReadonlySet<string> | null;
}

export interface MessageView {
  readonly message: Message;
  readonly flags: readonly ApiFlag[];
  /** Highlighted HTML content and topic, for search narrows. */
  readonly matchContent?: string;
  readonly matchSubject?: string;
}

export interface GetMessagesResult {
  /** Absent in message_ids mode. */
  readonly anchor?: number;
  readonly foundAnchor: boolean;
  readonly foundOldest: boolean;
  readonly foundNewest: boolean;
  readonly historyLimited: boolean;
  readonly messages: readonly MessageView[];
}

const INCOMPATIBLE = ["num_before", "num_after", "anchor", "message_ids", "include_anchor", "use_first_unread_anchor"];

/** GET /messages as IDs and flags, without reading message records. */
export function getMessageWindow(ctx: PlanContext<NarrowReader>, input: GetMessagesInput): MessageWindow {
  const flagsOf = (ids: readonly number[], allRows: boolean) =>
    flagsForWindow(ctx.state, ctx.received, ctx.user.id, ctx.user.realmId, ids, allRows);
  // Zulip validates the range parameters before it looks at the narrow.
  if (input.messageIds !== undefined) {
    if (input.anchor !== undefined || input.numBefore || input.numAfter || input.includeAnchor === false) {
      throw new BadRequestError(`Unsupported parameter combination: ${INCOMPATIBLE.join(", ")}`, {
        parameters: INCOMPATIBLE.join(", "),
      });
    }
    if (input.messageIds.length > MAX_MESSAGES_PER_FETCH)
      throw new BadRequestError(`Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`);
  } else {
    checkWindow(input);
  }
  const terms = normalizeNarrow(ctx.state, ctx.user, parseNarrow(input.narrow));
  const searchTerms = searchTermsOf(terms);
  if (input.messageIds !== undefined) {
    const plan = planNarrow(ctx, terms);
    const matching = executePlan(ctx, plan);
    const wanted = new RoaringBitmap32(
      input.messageIds.filter((id) => Number.isInteger(id) && id >= 0 && id <= 0xffffffff),
    );
    const ids = RoaringBitmap32.and(matching, wanted).toArray();
    return {
      foundAnchor: false,
      foundOldest: false,
      foundNewest: false,
      historyLimited: false,
      ids,
      flags: flagsOf(ids, plan.universe === "personal"),
      searchTerms,
    };
  }
  const { window, anchor, universe } = selectNarrowWindow(ctx, terms, input);
  const ids = window.ids;
  return {
    anchor,
    foundAnchor: window.foundAnchor,
    foundOldest: window.foundOldest,
    foundNewest: window.foundNewest,
    historyLimited: window.historyLimited,
    ids,
    flags: flagsOf(ids, universe === "personal"),
    searchTerms,
  };
}

/** GET /messages with message records and highlights (what embedders usually want). */
export function getMessages(ctx: PlanContext<NarrowReader>, input: GetMessagesInput): GetMessagesResult {
  const w = getMessageWindow(ctx, input);
  const messages: MessageView[] = [];
  const { ids, flags, searchTerms } = w;
  for (let i = 0; i < ids.length; i++) {
    const message = ctx.state.messageRecord(ids[i]!);
    if (!message) continue;
    if (searchTerms) messages.push({ message, flags: flags[i]!, ...highlightsFor(message, searchTerms) });
    else messages.push({ message, flags: flags[i]! });
  }
  // Fields listed, not rest and spread (microseconds a query); no anchor in message_ids mode, as before.
  const { foundAnchor, foundOldest, foundNewest, historyLimited } = w;
  return w.anchor === undefined
    ? { foundAnchor, foundOldest, foundNewest, historyLimited, messages }
    : { anchor: w.anchor, foundAnchor, foundOldest, foundNewest, historyLimited, messages };
}

/** The stems of every non-negated search term, or null when the narrow does not search. */
export function searchTermsOf(terms: readonly Term[]): ReadonlySet<string> | null {
  const query = terms
    .filter((t) => t.kind === "search" && !t.negated)
    .map((t) => (t.kind === "search" ? t.query : ""))
    .join(" ");
  return query === "" ? null : new Set(parseSearchQuery(query).terms);
}

/** Zulip's match_content / match_subject for one message. */
export function highlightsFor(
  message: Message,
  terms: ReadonlySet<string>,
): { matchContent: string; matchSubject: string } {
  return {
    matchContent: highlightHtml(message.renderedContent, terms),
    matchSubject: highlightTopic(message.topic, terms),
  };
}

/** Validates the range parameters, resolves the anchor and selects the window. */
export function selectNarrowWindow(
  ctx: PlanContext<NarrowReader>,
  terms: readonly Term[],
  input: WindowInput,
): { window: WindowResult; anchor: number; universe: UniverseKind } {
  const { numBefore, numAfter, includeAnchor } = checkWindow(input);

  const plan = planNarrow(ctx, terms);
  const floor = matchFloor(ctx, plan);
  const matching = lazyMatching(ctx, plan, [], floor);
  const anchor = resolveAnchor(ctx, terms, matching, plan, input, floor);
  return {
    window: selectWindow(matching, { anchor, numBefore, numAfter, includeAnchor }),
    anchor,
    universe: plan.universe,
  };
}

/** Validates the range parameters (presence, bounds, the 5000 cap, anchor exclusion). */
export function checkWindow(input: WindowInput): {
  anchor: AnchorSpec;
  numBefore: number;
  numAfter: number;
  includeAnchor: boolean;
} {
  const range = requireRange(input);
  if (range.numBefore + range.numAfter > MAX_MESSAGES_PER_FETCH)
    throw new BadRequestError(`Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`);
  const includeAnchor = input.includeAnchor ?? true;
  if (range.numBefore > 0 && range.numAfter > 0 && !includeAnchor)
    throw new BadRequestError("The anchor can only be excluded at an end of the range");
  // Fields listed, not spread: V8's object spread costs microseconds here, per query.
  return { anchor: range.anchor, numBefore: range.numBefore, numAfter: range.numAfter, includeAnchor };
}

/** The required range parameters, present and non-negative. */
export function requireRange(input: WindowInput): { anchor: AnchorSpec; numBefore: number; numAfter: number } {
  if (input.anchor === undefined) throw new MissingArgumentError("anchor");
  if (input.numBefore === undefined) throw new MissingArgumentError("num_before");
  if (input.numAfter === undefined) throw new MissingArgumentError("num_after");
  const { numBefore, numAfter } = input;
  if (!Number.isInteger(numBefore) || numBefore < 0) throw new BadRequestError("num_before is too small");
  if (!Number.isInteger(numAfter) || numAfter < 0) throw new BadRequestError("num_after is too small");
  return { anchor: input.anchor, numBefore, numAfter };
}

/** `floor`: matchFloor of `plan` (the user's first unread position when the plan excludes read messages, else 0). */
function resolveAnchor(
  ctx: PlanContext<NarrowReader>,
  terms: readonly Term[],
  matching: MatchingSet,
  plan: Plan,
  input: WindowInput,
  floor: number,
): number {
  const anchor = input.anchor!;
  if (typeof anchor === "number") {
    if (!Number.isFinite(anchor)) throw new BadRequestError("Invalid anchor");
    return Math.min(Math.max(Math.trunc(anchor), 0), NEWEST_ANCHOR);
  }
  switch (anchor) {
    case "newest":
      return NEWEST_ANCHOR;
    case "oldest":
      return 0;
    case "first_unread":
      // The probe runs over personal history; when the window does too, reuse its plan.
      return plan.universe === "personal"
        ? firstUnreadAnchor(ctx, terms, { plan, matching, firstUnread: floor === 0 ? undefined : floor })
        : firstUnreadAnchor(ctx, terms);
    case "date":
      return dateAnchor(ctx, matching, input.anchorDate);
  }
}

/**
 * Zulip's find_first_unread_anchor: always over personal history, unread only,
 * skipping muted topics (and muted channels when no channel is named).
 */
export function firstUnreadAnchor(
  ctx: PlanContext<NarrowReader>,
  terms: readonly Term[],
  personal?: { readonly plan: Plan; readonly matching: MatchingSet; readonly firstUnread: number | undefined },
): number {
  // Zulip's get_channel_from_narrow_access_unchecked takes the first channel term, negated or not.
  const channelTerm = terms.find((t) => t.kind === "channel");
  const channelId = channelTerm?.kind === "channel" ? channelTerm.channelId : null;
  const read = ctx.state.bitmaps.get(key.userFlag(ctx.user.id, "read"));
  const plan = personal?.plan ?? planNarrow(ctx, terms, "personal");
  // Nothing below the user's oldest unread message can match (`firstUnread`, when the caller has it).
  const floor = personal?.firstUnread ?? matchFloor(ctx, plan, [read]);
  if (floor >= NO_MATCH_FLOOR) return NEWEST_ANCHOR;
  // Usually the oldest unread message itself matches (it is unread and received by
  // definition): then it is the anchor, found by probes, with no muted set built.
  if (personal && personal.matching.has(floor) && !mutedHas(ctx, channelId, floor)) return floor;
  const matching = lazyMatching(ctx, plan, [read, mutedSet(ctx, channelId)], floor);
  if (matching.has(floor)) return floor;
  // Else a walk from there, jumping over runs of read messages: the unread set is never built.
  return matching.firstFrom(null, 1)[0] ?? NEWEST_ANCHOR;
}

/** Parses ISO 8601 (date only = 00:00 UTC; no zone = UTC) to UNIX seconds. */
export function parseAnchorDate(text: string): number {
  const trimmed = text.trim();
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(trimmed);
  const hasZone = /(Z|[+-]\d{2}:?\d{2})$/i.test(trimmed);
  const iso = dateOnly ? `${trimmed}T00:00:00Z` : hasZone ? trimmed : `${trimmed}Z`;
  const ms = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/i.test(trimmed)
    ? Date.parse(iso.replace(" ", "T"))
    : NaN;
  if (Number.isNaN(ms)) throw new BadRequestError("Invalid anchor_date");
  return Math.floor(ms / 1000);
}

/** First matching message sent at or after anchor_date; otherwise the newest. */
function dateAnchor(ctx: PlanContext<NarrowReader>, matching: MatchingSet, anchorDate: string | undefined): number {
  if (anchorDate === undefined) throw new MissingArgumentError("anchor_date");
  const seconds = parseAnchorDate(anchorDate);
  const first = ctx.state.firstMessageSentFrom(seconds);
  return first === undefined ? NEWEST_ANCHOR : (matching.firstFrom(first, 1)[0] ?? NEWEST_ANCHOR);
}
