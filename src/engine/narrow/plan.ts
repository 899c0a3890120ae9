/**
 * @module narrow/plan
 * Term[] -> Plan -> bitmap of matching message IDs.
 *
 * Invariant (after Zulip's NarrowBuilder): every step only intersects with or
 * subtracts from the universe — the caller's personal history, or, when Zulip's
 * ok_to_include_history holds, the realm's messages narrowed by an accessible
 * channel (or public channels). No step can widen what the caller may read.
 */
import { canAccessChannelHistory } from "../access.js";
import { EMPTY, RoaringBitmap32, type Bitmap, type ReadonlyBitmap } from "../index/bitmap-store.js";
import { isIndexableTerm, key } from "../index/keys.js";
import { MAX_TOPIC_LENGTH } from "../actions/send-message.js";
import { exceedsCodePoints } from "../limits.js";
import type { ReceivedSets } from "../received.js";
import type { NarrowReader } from "../directory.js";
import type { User, UserTopic } from "../types.js";
import { ROLE } from "../types.js";
import { matchesPhrases, parseSearchQuery } from "../search/index.js";
import type { Term } from "./terms.js";

export type UniverseKind = "personal" | "shared";

/** One term, evaluated: the term is `bitmap` (or universe minus it, if `complement`). */
export interface PlanStep {
  readonly term: Term;
  readonly complement: boolean;
  readonly bitmap: ReadonlyBitmap;
}

export interface Plan {
  readonly universe: UniverseKind;
  readonly steps: readonly PlanStep[];
}

export interface PlanContext<S extends NarrowReader = NarrowReader> {
  readonly state: S;
  readonly received: ReceivedSets;
  readonly user: User;
}

/** Zulip's ok_to_include_history: search all of a realm's channel history? */
export function includesHistory(ctx: PlanContext, terms: readonly Term[]): boolean {
  let include = false;
  for (const t of terms) {
    if (t.kind === "channel" && !t.negated) {
      const channel = ctx.state.channelDirectory.get(t.channelId);
      include = channel !== undefined && canAccessChannelHistory(ctx.state, ctx.user, channel);
    } else if (t.kind === "channels" && t.which === "public" && !t.negated && ctx.user.role !== ROLE.GUEST) {
      include = true;
    }
  }
  if (terms.some((t) => t.kind === "is" && t.what !== "resolved")) include = false;
  return include;
}

export function planNarrow(
  ctx: PlanContext,
  terms: readonly Term[],
  universe: UniverseKind = includesHistory(ctx, terms) ? "shared" : "personal",
): Plan {
  // With a channel named, a topic is that channel's topic bitmap (the realm-wide one
  // intersected with the channel, already materialised): far smaller to walk.
  const channelTerm = terms.find((t) => t.kind === "channel" && !t.negated);
  const channelId = channelTerm?.kind === "channel" ? channelTerm.channelId : null;
  const steps = terms.map((term) => {
    const { bitmap, complement } =
      term.kind === "topic" && !term.negated && channelId !== null
        ? channelTopicStep(ctx, channelId, term.topic)
        : evaluateTerm(ctx, term);
    return { term, bitmap, complement: complement !== term.negated };
  });
  return { universe, steps };
}

/** The universe bitmap of a plan. */
export function universeOf(ctx: PlanContext, universe: UniverseKind): ReadonlyBitmap {
  return universe === "shared"
    ? ctx.state.bitmaps.get(key.realm(ctx.user.realmId))
    : ctx.received.personal(ctx.user.id);
}

/**
 * Bitmap algebra: the smallest positive step first, then the rest, then the universe,
 * then the complements. The universe is applied without being built when it can be:
 * a shared-history plan always has a positive channel (or channels:public) step, whose
 * messages are all in the realm; a personal plan with positive steps intersects each
 * part of the user's history with the (small) result. Only a plan with no positive
 * step starts from the whole (cached) personal set.
 */
export function executePlan(ctx: PlanContext, plan: Plan): ReadonlyBitmap {
  const positives = plan.steps.filter((s) => !s.complement).map((s) => s.bitmap);
  const negatives = plan.steps.filter((s) => s.complement).map((s) => s.bitmap);
  const channelStep = plan.steps.some(
    (s) => !s.complement && (s.term.kind === "channel" || s.term.kind === "channels"),
  );
  // One shared-history channel step and nothing else: the answer is that bitmap (no copy).
  if (positives.length === 1 && negatives.length === 0 && plan.universe === "shared" && channelStep)
    return positives[0]!;
  let result: Bitmap;
  if (positives.length === 0) {
    if (negatives.length === 0) return universeOf(ctx, plan.universe);
    result = RoaringBitmap32.andNot(universeOf(ctx, plan.universe), negatives[0]!);
    negatives.shift();
  } else {
    positives.sort((a, b) => a.size - b.size);
    result = new RoaringBitmap32(positives[0]!);
    for (let i = 1; i < positives.length && !result.isEmpty; i++) result.andInPlace(positives[i]!);
    if (plan.universe === "personal") result = ctx.received.restrictToPersonal(ctx.user.id, result);
    else if (!channelStep) result.andInPlace(universeOf(ctx, "shared"));
  }
  for (const negative of negatives) {
    if (result.isEmpty) break;
    result.andNotInPlace(negative);
  }
  return result;
}

/** A stable, human-readable description of a plan (for tests and debugging). */
export function explainPlan(plan: Plan): string {
  const parts = plan.steps.map((s) => `${s.complement ? "-" : "+"}${describe(s.term)}[${s.bitmap.size}]`);
  return `${plan.universe}(${parts.join(" ")})`;
}

function describe(t: Term): string {
  switch (t.kind) {
    case "channel":
      return `channel:${t.channelId}`;
    case "channels":
      return `channels:${t.which}`;
    case "topic":
      return `topic:${JSON.stringify(t.topic)}`;
    case "sender":
      return `sender:${t.userId}`;
    case "dm":
      return `dm:${t.userIds.join(",")}`;
    case "dmIncluding":
      return `dm-including:${t.userId}`;
    case "groupDmWith":
      return `group-pm-with:${t.userId}`;
    case "is":
      return `is:${t.what}`;
    case "has":
      return `has:${t.what}`;
    case "inHome":
      return "in:home";
    case "search":
      return `search:${JSON.stringify(t.query)}`;
    case "id":
      return `id:${t.messageId}`;
    case "mentions":
      return `mentions:${t.userId}`;
  }
}

export function channelTopicStep(
  ctx: PlanContext,
  channelId: number,
  topic: string,
): { bitmap: ReadonlyBitmap; complement: boolean } {
  return {
    bitmap: exceedsCodePoints(topic, MAX_TOPIC_LENGTH)
      ? EMPTY
      : ctx.state.bitmaps.get(key.channelTopic(channelId, topic)),
    complement: false,
  };
}

export function evaluateTerm(ctx: PlanContext, t: Term): { bitmap: ReadonlyBitmap; complement: boolean } {
  const { state, user } = ctx;
  const b = state.bitmaps;
  const realmId = user.realmId;
  const plain = (bitmap: ReadonlyBitmap) => ({ bitmap, complement: false });
  switch (t.kind) {
    case "channel":
      return plain(b.get(key.channel(t.channelId)));
    case "channels": {
      const parts: ReadonlyBitmap[] = [];
      for (const c of state.channelDirectory.all()) {
        if (c.realmId !== realmId) continue;
        if (t.which === "public" ? !c.inviteOnly : c.isWebPublic) parts.push(b.get(key.channel(c.id)));
      }
      return plain(RoaringBitmap32.orMany(parts));
    }
    case "topic":
      // Topics are cut to MAX_TOPIC_LENGTH when sent: a longer operand names no topic.
      return plain(exceedsCodePoints(t.topic, MAX_TOPIC_LENGTH) ? EMPTY : b.get(key.topic(realmId, t.topic)));
    case "sender":
      return plain(b.get(key.sender(t.userId)));
    case "dm": {
      if (t.empty) return plain(EMPTY);
      const members = [...new Set([...t.userIds, user.id])].sort((x, y) => x - y);
      const id = state.conversations.idOf(realmId, members);
      return plain(id === undefined ? EMPTY : b.get(key.conversation(id)));
    }
    case "dmIncluding": {
      const mine = b.get(key.userFlag(user.id, "dm"));
      return plain(t.userId === user.id ? mine : RoaringBitmap32.and(mine, b.get(key.userFlag(t.userId, "dm"))));
    }
    case "groupDmWith": {
      const shared = RoaringBitmap32.and(b.get(key.userFlag(user.id, "dm")), b.get(key.userFlag(t.userId, "dm")));
      return plain(shared.andInPlace(b.get(key.groupDirect(realmId))));
    }
    case "is":
      switch (t.what) {
        case "dm":
          return plain(b.get(key.allDirect(realmId)));
        case "starred":
          return plain(b.get(key.userFlag(user.id, "starred")));
        case "unread":
          return { bitmap: b.get(key.userFlag(user.id, "read")), complement: true };
        case "mentioned":
          return plain(mentionedSet(ctx));
        case "alerted":
          return plain(b.get(key.userFlag(user.id, "has_alert_word")));
        case "resolved":
          return plain(b.get(key.resolved(realmId)));
        case "followed":
          return plain(topicPolicySet(ctx, 3, null));
        case "muted":
          return plain(mutedSet(ctx, null));
      }
      break;
    case "has":
      return plain(b.get(key.has(realmId, t.what)));
    case "inHome":
      return { bitmap: mutedSet(ctx, null), complement: true };
    case "search":
      return plain(searchSet(ctx, t.query));
    case "id":
      return plain(new RoaringBitmap32([t.messageId]));
    case "mentions":
      return plain(b.get(key.userFlag(t.userId, "mentioned")));
  }
  return plain(EMPTY);
}

/** Zulip's is:mentioned mask 120: personal, stream-wildcard, topic-wildcard, group mentions. */
export function mentionedSet(ctx: PlanContext): ReadonlyBitmap {
  const b = ctx.state.bitmaps;
  const id = ctx.user.id;
  const wildcard = b.get(key.streamWildcard(ctx.user.realmId));
  const parts = [
    b.get(key.userFlag(id, "mentioned")),
    b.get(key.userFlag(id, "group_mentioned")),
    b.get(key.userFlag(id, "topic_wildcard_mentioned")),
  ];
  if (!wildcard.isEmpty) parts.push(ctx.received.restrictToReceivedAtSend(id, wildcard));
  // Usually only personal mentions exist: that (cached, read-only) bitmap itself.
  const present = parts.filter((part) => !part.isEmpty);
  return present.length === 1 ? present[0]! : RoaringBitmap32.orMany(present);
}

/** Messages in topics the user gave `policy` (restricted to one channel if given). */
function topicPolicySet(ctx: PlanContext, policy: number, channelId: number | null): Bitmap {
  const parts: ReadonlyBitmap[] = [];
  for (const ut of ctx.state.userTopics.withPolicy(ctx.user.id, policy)) {
    if (channelId === null || ut.channelId === channelId) parts.push(ctx.state.bitmaps.get(topicKeyOf(ut)));
  }
  return RoaringBitmap32.orMany(parts);
}

/**
 * A user-topic record's channel-topic bitmap key, folded once per record (muted topics
 * are looked up on every first_unread). Records are replaced, never changed, on update.
 */
const TOPIC_KEYS = new WeakMap<UserTopic, string>();
export function topicKeyOf(ut: UserTopic): string {
  let k = TOPIC_KEYS.get(ut);
  if (k === undefined) TOPIC_KEYS.set(ut, (k = key.channelTopic(ut.channelId, ut.topic)));
  return k;
}

/**
 * Zulip's exclude_stream_and_topic_mutes, as the set to exclude: muted topics (in
 * `channelId` only, if given), plus — only when no channel is named — muted channels
 * minus their unmuted and followed topics.
 */
export function mutedSet(ctx: PlanContext, channelId: number | null): Bitmap {
  const { state, user } = ctx;
  const parts: ReadonlyBitmap[] = [topicPolicySet(ctx, 1, channelId)];
  if (channelId === null) {
    for (const mutedChannel of state.mutedChannelsOf(user.id)) {
      const channel = RoaringBitmap32.andNot(
        state.bitmaps.get(key.channel(mutedChannel)),
        topicPolicySet(ctx, 2, mutedChannel),
      );
      parts.push(channel.andNotInPlace(topicPolicySet(ctx, 3, mutedChannel)));
    }
  }
  return RoaringBitmap32.orMany(parts);
}

/** Whether mutedSet(ctx, channelId) holds `id`, without building it (bitmap probes only). */
export function mutedHas(ctx: PlanContext, channelId: number | null, id: number): boolean {
  const { state, user } = ctx;
  const inTopic = (ut: UserTopic) => state.bitmaps.get(topicKeyOf(ut)).has(id);
  for (const ut of state.userTopics.withPolicy(user.id, 1))
    if ((channelId === null || ut.channelId === channelId) && inTopic(ut)) return true;
  if (channelId !== null) return false;
  for (const mutedChannel of state.mutedChannelsOf(user.id)) {
    if (!state.bitmaps.get(key.channel(mutedChannel)).has(id)) continue;
    // In a muted channel: muted unless in one of its unmuted or followed topics.
    const excepted = (ut: UserTopic) => ut.channelId === mutedChannel && inTopic(ut);
    if (
      !state.userTopics.withPolicy(user.id, 2).some(excepted) &&
      !state.userTopics.withPolicy(user.id, 3).some(excepted)
    )
      return true;
  }
  return false;
}

/** Full-text match: every stemmed term (AND), then quoted phrases as substrings. */
function searchSet(ctx: PlanContext, query: string): ReadonlyBitmap {
  const { state, user } = ctx;
  const parsed = parseSearchQuery(query);
  if (parsed.terms.length === 0 && parsed.phrases.length === 0) return new RoaringBitmap32();
  let candidates: Bitmap;
  if (parsed.terms.length === 0) {
    candidates = new RoaringBitmap32(state.bitmaps.get(key.realm(user.realmId)));
  } else {
    const sets = parsed.terms
      .map((term) => (isIndexableTerm(term) ? state.bitmaps.get(key.term(user.realmId, term)) : EMPTY))
      .sort((a, b) => a.size - b.size);
    // One word and no phrase: the term's own (cached, never mutated here) bitmap, not a copy.
    if (sets.length === 1 && parsed.phrases.length === 0) return sets[0]!;
    candidates = new RoaringBitmap32(sets[0]!);
    for (let i = 1; i < sets.length && !candidates.isEmpty; i++) candidates.andInPlace(sets[i]!);
  }
  if (parsed.phrases.length === 0) return candidates;
  const out = new RoaringBitmap32();
  for (const id of candidates) {
    const m = state.messageRecord(id);
    if (m && matchesPhrases(m.topic, m.content, parsed.phrases)) out.add(id);
  }
  return out;
}
