/**
 * @module http/endpoints/typing/set-typing-status
 * POST /typing — https://zulip.com/api/set-typing-status
 * type "direct" (default) with `to` (user IDs), or "stream"/"channel" with stream_id
 * and topic; "private" is refused since feature level 215 as in Zulip. The engine
 * checks the recipients like a send and releases a typing event at once.
 */
import { BadRequestError, MissingArgumentError } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { z } from "zod";
import { j, p, ref } from "../../params.js";

export default defineEndpoint({
  method: "POST",
  path: "/typing",
  auth: "user",
  params: {
    type: p.oneOf(["direct", "stream", "channel"] as const).default("direct"),
    op: p.oneOf(["start", "stop"] as const),
    // A bare ID is one recipient (zulip-js sends a one-element list unencoded).
    to: ref(p.json(z.union([j.intList().max(1000), j.int().transform((id) => [id])])), "userList").optional(),
    stream_id: ref(p.int({ min: 0 }), "channel").optional(),
    topic: p.str({ maxLength: 600 }).optional(),
  },
  testing: {
    sweepBases: [
      { params: { op: "start", type: "direct" }, for: ["to"] },
      { params: { op: "start", type: "channel", topic: "t" }, for: ["stream_id"] },
    ],
  },
  handler(ctx, input) {
    if (input.type === "direct") {
      if (input.to === undefined) throw new MissingArgumentError("to");
      ctx.store.notifyTyping(ctx.user.id, { type: "direct", op: input.op, to: input.to });
      return {};
    }
    if (input.stream_id === undefined) throw new BadRequestError("Missing channel ID");
    if (input.topic === undefined) throw new BadRequestError("Missing topic");
    ctx.store.notifyTyping(ctx.user.id, {
      type: "channel",
      op: input.op,
      channelId: input.stream_id,
      topic: input.topic,
    });
    return {};
  },
});
