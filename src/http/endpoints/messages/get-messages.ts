/**
 * @module http/endpoints/messages/get-messages
 * GET /messages — https://zulip.com/api/get-messages
 * All parameters of Zulip 12.0 (FL 445), including anchor=date with anchor_date and
 * message_ids. Unauthenticated (spectator) access to web-public channels is not
 * offered: the endpoint requires a login.
 */
import { BadRequestError, MAX_MESSAGES_PER_FETCH, MAX_NARROW_TERMS, type AnchorSpec } from "../../../engine/index.js";
import type { WorstCase } from "../../endpoint-testing.js";
import { defineEndpoint } from "../../endpoint.js";
import { j, p, ref } from "../../params.js";
import { RawJson } from "../../respond.js";
import { hiddenSendersFor, placeholderEmailDomain } from "../../views/limited-guest-users.js";
import { z } from "zod";

const INCOMPATIBLE = "anchor, use_first_unread_anchor";

/** Zulip's parse_anchor_value (clamping happens in the engine). */
export function parseAnchor(raw: string | undefined): AnchorSpec | undefined {
  if (raw === undefined) return undefined;
  const text = raw.trim().replace(/^"(.*)"$/, "$1");
  if (text === "newest" || text === "oldest" || text === "first_unread" || text === "date") return text;
  if (/^-?\d+$/.test(text)) return Number(text);
  throw new BadRequestError("Invalid anchor");
}

/** The engine's bound on narrow terms, with `others` (a window's anchor and size) beside the narrow. */
export function tooManyNarrowTerms(others: Readonly<Record<string, string>>): WorstCase {
  return {
    label: "5000 narrow terms",
    params: () => ({ ...others, narrow: JSON.stringify(Array.from({ length: 5000 }, () => ["in", "home"])) }),
    status: 400,
    code: "BAD_REQUEST",
    msg: `narrow is too long (limit: ${MAX_NARROW_TERMS} terms)`,
  };
}

export default defineEndpoint({
  method: "GET",
  path: "/messages",
  auth: "user",
  params: {
    anchor: ref(p.str(), "anchor").optional(),
    anchor_date: p.str().optional(),
    include_anchor: p.bool().optional(),
    num_before: p.int({ min: 0 }).optional(),
    num_after: p.int({ min: 0 }).optional(),
    narrow: ref(p.json(z.unknown()), "narrow").optional(),
    client_gravatar: p.bool().default(true),
    apply_markdown: p.bool().default(true),
    // Zulip counts message_ids after parsing; here the count is checked before the list is walked.
    message_ids: ref(
      p.json(j.intList(), {
        maxItems: MAX_MESSAGES_PER_FETCH,
        tooMany: `Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`,
      }),
      "messageList",
    ).optional(),
    allow_empty_topic_name: p.bool().default(false),
    use_first_unread_anchor: p.bool().default(false),
  },
  testing: {
    // Numeric anchors are positional: the sweep's data puts every readable message first.
    sweepBases: [
      { params: { anchor: "newest", num_before: "5", num_after: "0" }, for: ["narrow"] },
      { params: { num_before: "1", num_after: "1" }, for: ["anchor"] },
      { params: {}, for: ["message_ids"] },
    ],
    worst: { extra: [tooManyNarrowTerms({ anchor: "newest", num_before: "10", num_after: "0" })] },
  },
  async handler(ctx, input) {
    // Every parameter that shapes the answer (message_ids lists are not kept).
    const key =
      input.message_ids === undefined
        ? JSON.stringify([
            input.anchor ?? null,
            input.anchor_date ?? null,
            input.include_anchor ?? null,
            input.num_before ?? null,
            input.num_after ?? null,
            input.narrow ?? null,
            input.client_gravatar,
            input.apply_markdown,
            input.allow_empty_topic_name,
            input.use_first_unread_anchor,
          ])
        : null;
    if (key !== null) {
      const kept = ctx.windows.get(ctx.user.id, key);
      if (kept) return kept;
    }
    const epoch = ctx.windows.epoch;
    let anchor = parseAnchor(input.anchor);
    if (input.use_first_unread_anchor) {
      if (anchor !== undefined)
        throw new BadRequestError(`Unsupported parameter combination: ${INCOMPATIBLE}`, { parameters: INCOMPATIBLE });
      anchor = "first_unread";
    }
    const result = ctx.store.getMessageWindow(ctx.user.id, {
      narrow: input.narrow,
      ...(anchor !== undefined ? { anchor } : {}),
      ...(input.anchor_date !== undefined ? { anchorDate: input.anchor_date } : {}),
      ...(input.include_anchor !== undefined ? { includeAnchor: input.include_anchor } : {}),
      ...(input.num_before !== undefined ? { numBefore: input.num_before } : {}),
      ...(input.num_after !== undefined ? { numAfter: input.num_after } : {}),
      ...(input.message_ids !== undefined ? { messageIds: input.message_ids } : {}),
    });
    const options = {
      applyMarkdown: input.apply_markdown,
      clientGravatar: input.client_gravatar,
      allowEmptyTopicName: input.allow_empty_topic_name,
      ...hiddenSendersFor(ctx.store, ctx.user, () => placeholderEmailDomain(ctx.server, ctx.realm)),
    };
    const data = {
      ...(result.anchor !== undefined ? { anchor: result.anchor } : {}),
      found_anchor: result.foundAnchor,
      found_oldest: result.foundOldest,
      found_newest: result.foundNewest,
      history_limited: result.historyLimited,
      messages: new RawJson(await ctx.messageJson.windowJsonYielding(ctx.realm, result, options)),
    };
    return key === null ? data : ctx.windows.put(ctx.user.id, ctx.realm.id, key, epoch, data);
  },
});
