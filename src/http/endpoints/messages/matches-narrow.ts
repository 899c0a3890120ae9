/**
 * @module http/endpoints/messages/matches-narrow
 * GET /messages/matches_narrow — https://zulip.com/api/check-messages-match-narrow
 * `messages` keyed by message ID: `match_content` and `match_subject` for each of `msg_ids` the narrow holds for the
 * caller (GET /messages' answer: its access rules and search highlights; unhighlighted when the narrow does not
 * search). Deviation: at most 5,000 IDs per request, as GET /messages' `message_ids` (Zulip sets no bound).
 */
import { MAX_MESSAGES_PER_FETCH } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { j, p, ref } from "../../params.js";
import { z } from "zod";
import { tooManyNarrowTerms } from "./get-messages.js";

export default defineEndpoint({
  method: "GET",
  path: "/messages/matches_narrow",
  auth: "user",
  params: {
    msg_ids: ref(
      p.json(j.intList(), {
        maxItems: MAX_MESSAGES_PER_FETCH,
        tooMany: `Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`,
      }),
      "messageList",
    ),
    narrow: ref(p.json(z.unknown()), "narrow"),
  },
  testing: {
    sweepBases: [
      { params: { narrow: "[]" }, for: ["msg_ids"] },
      { params: { msg_ids: JSON.stringify(Array.from({ length: 100 }, (_, i) => i + 1)) }, for: ["narrow"] },
    ],
    worst: { extra: [tooManyNarrowTerms({ msg_ids: "[1]" })] },
  },
  handler(ctx, input) {
    const matches = ctx.store.messagesMatchingNarrow(ctx.user.id, input.narrow, input.msg_ids);
    const messages: Record<string, { match_content: string; match_subject: string }> = {};
    for (const m of matches) messages[m.message.id] = { match_content: m.matchContent, match_subject: m.matchSubject };
    return { messages };
  },
});
