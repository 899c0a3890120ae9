/**
 * @module http/endpoints/messages/update-flags-narrow
 * POST /messages/flags/narrow — https://zulip.com/api/update-message-flags-for-narrow
 * The window is GET /messages' window, clamped to 5000 messages as Zulip does.
 */
import { defineEndpoint } from "../../endpoint.js";
import { p, ref } from "../../params.js";
import { parseAnchor, tooManyNarrowTerms } from "./get-messages.js";
import { z } from "zod";

export default defineEndpoint({
  method: "POST",
  path: "/messages/flags/narrow",
  auth: "user",
  params: {
    anchor: ref(p.str(), "anchor"),
    include_anchor: p.bool().default(true),
    num_before: p.int({ min: 0 }),
    num_after: p.int({ min: 0 }),
    narrow: ref(p.json(z.unknown()), "narrow").default([]),
    op: p.str(),
    flag: p.str(),
  },
  testing: {
    sweepBases: [
      { params: { anchor: "newest", num_before: "5", num_after: "0", op: "remove", flag: "read" }, for: ["narrow"] },
      { params: { anchor: "newest", num_before: "5", num_after: "0", op: "add", flag: "starred" }, for: ["narrow"] },
      { params: { num_before: "0", num_after: "1", op: "remove", flag: "read" }, for: ["anchor"] },
      { params: { num_before: "0", num_after: "1", op: "add", flag: "starred" }, for: ["anchor"] },
    ],
    worst: {
      extra: [tooManyNarrowTerms({ anchor: "oldest", num_before: "0", num_after: "5000", op: "add", flag: "starred" })],
    },
  },
  // Concurrent flag changes share one fsync (group commit); the answer waits for it.
  async handler(ctx, input) {
    const anchor = parseAnchor(input.anchor);
    const result = await ctx.store.updateFlagsForNarrowGrouped(
      ctx.user.id,
      {
        narrow: input.narrow,
        ...(anchor !== undefined ? { anchor } : {}),
        includeAnchor: input.include_anchor,
        numBefore: input.num_before,
        numAfter: input.num_after,
      },
      input.flag,
      input.op,
    );
    return {
      processed_count: result.processedCount,
      updated_count: result.updatedCount,
      first_processed_id: result.firstProcessedId,
      last_processed_id: result.lastProcessedId,
      found_oldest: result.foundOldest,
      found_newest: result.foundNewest,
      ...(result.ignoredBecauseNotSubscribedChannels
        ? { ignored_because_not_subscribed_channels: result.ignoredBecauseNotSubscribedChannels }
        : {}),
    };
  },
});
