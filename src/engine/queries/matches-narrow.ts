/**
 * @module queries/matches-narrow
 * GET /messages/matches_narrow (Zulip's messages_in_narrow_backend): which of the given messages a narrow holds for
 * the caller, asked of the narrow predicate event queues use, so the answer is what GET /messages would return;
 * each match with Zulip's search fields (highlighted when the narrow searches, the plain HTML and topic otherwise).
 */
import type { NarrowReader } from "../directory.js";
import { RoaringBitmap32 } from "../index/bitmap-store.js";
import { normalizeNarrow } from "../narrow/normalize.js";
import { parseNarrow } from "../narrow/parse.js";
import type { PlanContext } from "../narrow/plan.js";
import { compileTerms } from "../narrow/predicate.js";
import type { Message } from "../types.js";
import { highlightsFor, searchTermsOf } from "./get-messages.js";

export interface NarrowMatch {
  readonly message: Message;
  readonly matchContent: string;
  readonly matchSubject: string;
}

const NO_TERMS: ReadonlySet<string> = new Set();

/** The messages of `messageIds` the narrow holds for the caller, each once, by ID. */
export function messagesMatchingNarrow(
  ctx: PlanContext<NarrowReader>,
  narrow: unknown,
  messageIds: readonly number[],
): NarrowMatch[] {
  const terms = normalizeNarrow(ctx.state, ctx.user, parseNarrow(narrow));
  const matcher = compileTerms(terms, () => ctx);
  const valid = messageIds.filter((id) => Number.isInteger(id) && id >= 0 && id <= 0xffffffff);
  const wanted = new RoaringBitmap32(valid);
  // An empty narrow holds for every message the caller has (as GET /messages without one).
  const candidates = matcher === null ? ctx.received.restrictToPersonal(ctx.user.id, wanted) : wanted;
  const search = searchTermsOf(terms) ?? NO_TERMS;
  const out: NarrowMatch[] = [];
  for (const id of candidates.toArray()) {
    if (matcher !== null && !matcher(id)) continue;
    const message = ctx.state.messageRecord(id);
    if (message !== undefined) out.push({ message, ...highlightsFor(message, search) });
  }
  return out;
}
