/**
 * @module narrow/predicate
 * A narrow asked of one message at a time: "would GET /messages with this narrow
 * return message `id` to this user now?". Event queues filter new messages with it,
 * so a narrowed queue and GET /messages cannot disagree: the narrow goes through the
 * same parse and normalize, and each term through the same index (the same topic
 * fold, the same search tokenizer and stemmer, the same muting rules) as the plan.
 * Terms whose plan step builds a union over many bitmaps (mentions, followed and
 * muted topics, public channels, phrase search) are answered by probes instead of
 * building the union for every message; test/engine/narrow/predicate.property.test.ts
 * checks the two against each other.
 */
import type { NarrowReader } from "../directory.js";
import { RoaringBitmap32 } from "../index/bitmap-store.js";
import { isIndexableTerm, key } from "../index/keys.js";
import { matchesPhrases, parseSearchQuery } from "../search/index.js";
import type { UserTopic } from "../types.js";
import { normalizeNarrow } from "./normalize.js";
import { parseNarrow } from "./parse.js";
import {
  channelTopicStep,
  evaluateTerm,
  includesHistory,
  mutedHas,
  topicKeyOf,
  universeOf,
  type PlanContext,
} from "./plan.js";
import type { Term } from "./terms.js";

/** Whether one message matches; false for an ID that names no message. */
export type MessageMatcher = (messageId: number) => boolean;

/**
 * Parses and resolves `narrow` for `ctx.user` now (unknown operators, channels and
 * users are refused here, with GET /messages' errors), and returns the matcher, or
 * null for an empty narrow (everything matches). `context` gives the live state at
 * each call (user records are replaced when they change).
 */
export function compileNarrow(
  ctx: PlanContext<NarrowReader>,
  narrow: unknown,
  context: () => PlanContext<NarrowReader> | null,
): MessageMatcher | null {
  return compileTerms(normalizeNarrow(ctx.state, ctx.user, parseNarrow(narrow)), context);
}

/** compileNarrow for terms already parsed and resolved. */
export function compileTerms(
  terms: readonly Term[],
  context: () => PlanContext<NarrowReader> | null,
): MessageMatcher | null {
  if (terms.length === 0) return null;
  const query = searchQueryOf(terms);
  return (id) => {
    const now = context();
    return now !== null && matchesMessage(now, terms, query, id);
  };
}

type SearchQuery = ReturnType<typeof parseSearchQuery>;

/** normalizeNarrow joins every search operand into one search term. */
function searchQueryOf(terms: readonly Term[]): SearchQuery | null {
  const search = terms.find((t) => t.kind === "search");
  return search?.kind === "search" ? parseSearchQuery(search.query) : null;
}

function matchesMessage(
  ctx: PlanContext<NarrowReader>,
  terms: readonly Term[],
  query: SearchQuery | null,
  id: number,
): boolean {
  if (!Number.isInteger(id) || id < 0 || id > 0xffffffff) return false;
  const channelTerm = terms.find((t) => t.kind === "channel" && !t.negated);
  const namedChannel = channelTerm?.kind === "channel" ? channelTerm.channelId : null;
  for (const term of terms) {
    if (termHolds(ctx, term, namedChannel, query, id) === term.negated) return false;
  }
  if (includesHistory(ctx, terms)) return universeOf(ctx, "shared").has(id);
  return ctx.received.restrictToPersonal(ctx.user.id, new RoaringBitmap32([id])).has(id);
}

/** Whether message `id` satisfies `term` read without its negation. */
function termHolds(
  ctx: PlanContext<NarrowReader>,
  term: Term,
  namedChannel: number | null,
  query: SearchQuery | null,
  id: number,
): boolean {
  const { state, user } = ctx;
  switch (term.kind) {
    case "topic":
      if (!term.negated && namedChannel !== null) return channelTopicStep(ctx, namedChannel, term.topic).bitmap.has(id);
      break;
    case "channels": {
      const message = state.messageRecord(id);
      if (message?.recipient.type !== "channel") return false;
      const channel = state.channelDirectory.get(message.recipient.channelId);
      return (
        channel !== undefined &&
        channel.realmId === user.realmId &&
        (term.which === "public" ? !channel.inviteOnly : channel.isWebPublic)
      );
    }
    case "is":
      if (term.what === "mentioned") return mentionedHas(ctx, id);
      if (term.what === "followed") return userTopicHas(ctx, 3, id);
      if (term.what === "muted") return mutedHas(ctx, null, id);
      break;
    case "inHome":
      // The plan removes the muted set: in:home holds where the message is not muted.
      return !mutedHas(ctx, null, id);
    case "search":
      return query !== null && searchHas(ctx, query, id);
  }
  const { bitmap, complement } = evaluateTerm(ctx, term);
  return bitmap.has(id) !== complement;
}

/** plan.ts mentionedSet, probed. */
function mentionedHas(ctx: PlanContext<NarrowReader>, id: number): boolean {
  const b = ctx.state.bitmaps;
  const userId = ctx.user.id;
  if (b.get(key.userFlag(userId, "mentioned")).has(id)) return true;
  if (b.get(key.userFlag(userId, "group_mentioned")).has(id)) return true;
  if (b.get(key.userFlag(userId, "topic_wildcard_mentioned")).has(id)) return true;
  if (!b.get(key.streamWildcard(ctx.user.realmId)).has(id)) return false;
  return ctx.received.restrictToReceivedAtSend(userId, new RoaringBitmap32([id])).has(id);
}

/** Whether `id` is in a topic the user gave `policy` (plan.ts topicPolicySet, probed). */
function userTopicHas(ctx: PlanContext<NarrowReader>, policy: number, id: number): boolean {
  const inTopic = (ut: UserTopic) => ctx.state.bitmaps.get(topicKeyOf(ut)).has(id);
  return ctx.state.userTopics.withPolicy(ctx.user.id, policy).some(inTopic);
}

/** plan.ts searchSet, probed: every stemmed term indexed for the message, then the phrases. */
function searchHas(ctx: PlanContext<NarrowReader>, query: SearchQuery, id: number): boolean {
  if (query.terms.length === 0 && query.phrases.length === 0) return false;
  const realmId = ctx.user.realmId;
  for (const term of query.terms) {
    if (!isIndexableTerm(term) || !ctx.state.bitmaps.get(key.term(realmId, term)).has(id)) return false;
  }
  if (query.terms.length === 0 && !ctx.state.bitmaps.get(key.realm(realmId)).has(id)) return false;
  if (query.phrases.length === 0) return true;
  const message = ctx.state.messageRecord(id);
  return message !== undefined && matchesPhrases(message.topic, message.content, query.phrases);
}
