/**
 * @module http/endpoints/messages/update-flags
 * POST /messages/flags — https://zulip.com/api/update-message-flags
 * `messages` is echoed back (Zulip keeps it for compatibility);
 * ignored_because_not_subscribed_channels only for remove + read (FL 355).
 * Deviation: at most MAX_FLAG_MESSAGE_IDS IDs per request (Zulip sets no limit).
 */
import { MAX_FLAG_MESSAGE_IDS } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { j, p, ref } from "../../params.js";

export default defineEndpoint({
  method: "POST",
  path: "/messages/flags",
  auth: "user",
  params: {
    messages: ref(p.json(j.intList(), { maxItems: MAX_FLAG_MESSAGE_IDS }), "messageList"),
    op: p.str(),
    flag: p.str(),
  },
  testing: {
    sweepBases: [
      { params: { op: "add", flag: "starred" } },
      { params: { op: "remove", flag: "starred" } },
      { params: { op: "add", flag: "read" } },
      { params: { op: "remove", flag: "read" } },
      { params: { op: "add", flag: "collapsed" } },
    ],
  },
  // Concurrent flag changes share one fsync (group commit); the answer waits for it.
  async handler(ctx, input) {
    const result = await ctx.store.updateFlagsGrouped(ctx.user.id, input.messages, input.flag, input.op);
    return {
      messages: input.messages,
      ...(result.ignoredBecauseNotSubscribedChannels
        ? { ignored_because_not_subscribed_channels: result.ignoredBecauseNotSubscribedChannels }
        : {}),
    };
  },
});
