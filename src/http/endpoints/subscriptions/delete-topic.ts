/**
 * @module http/endpoints/subscriptions/delete-topic
 * POST /streams/{stream_id}/delete_topic — https://zulip.com/api/delete-topic
 * Organization administrators only. The topic's messages go newest first in atomic
 * batches; `complete` is false when the request's time ran out first, and the client
 * calls again (Zulip's answer since feature level 211).
 */
import { BadRequestError } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";

export default defineEndpoint({
  method: "POST",
  path: "/streams/:stream_id/delete_topic",
  pathRefs: { stream_id: "channel" },
  auth: "user",
  params: {
    topic_name: p.str(),
  },
  testing: { sweepBases: [{ params: { topic_name: "t" } }] },
  async handler(ctx, input) {
    const raw = ctx.pathParams["stream_id"] ?? "";
    // Zulip's path converter takes digits only; anything else names no channel.
    if (!/^\d{1,10}$/.test(raw)) throw new BadRequestError("Invalid channel ID");
    const { complete } = await ctx.store.deleteTopic(ctx.user.id, Number(raw), input.topic_name);
    return { complete };
  },
});
