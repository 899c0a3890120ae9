/**
 * @module http/endpoints/messages/update-message
 * PATCH /messages/{message_id} — https://zulip.com/api/update-message
 * Content edits, topic and channel moves (propagate_mode), resolving, or content and
 * topic together; every check is the engine's (actions/update-message). Answers
 * `detached_uploads`: the sender's uploads the edit unlinked that no message claims now.
 * A move of hundreds of messages is prepared over several turns of the event loop
 * before its one write (engine actions/move-staging).
 */
import { BadRequestError } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { p, ref } from "../../params.js";
import { attachmentToWire } from "../../../wire/attachment.js";

const PROPAGATE_MODES = ["change_later", "change_one", "change_all"] as const;

export default defineEndpoint({
  method: "PATCH",
  path: "/messages/:message_id",
  pathRefs: { message_id: "message" },
  auth: "user",
  aliases: { subject: "topic" },
  params: {
    content: p.str().optional(),
    topic: p.str().optional(),
    stream_id: ref(p.int({ min: 0 }), "channel").optional(),
    propagate_mode: p.oneOf(PROPAGATE_MODES).default("change_one"),
    send_notification_to_old_thread: p.bool().default(false),
    send_notification_to_new_thread: p.bool().default(true),
    prev_content_sha256: p.str().optional(),
  },
  testing: {
    sweepBases: [
      { params: { content: "x" }, for: ["message_id"] },
      // A message every caller of realm A can reach (its first, in the public channel).
      { params: { message_id: "1", topic: "swept" }, for: ["stream_id"] },
    ],
  },
  async handler(ctx, input) {
    const raw = ctx.pathParams["message_id"] ?? "";
    if (!/^\d+$/.test(raw)) throw new BadRequestError("Invalid message(s)");
    const result = await ctx.store.updateMessageAsync(ctx.user.id, Number(raw), {
      ...(input.content !== undefined ? { content: input.content } : {}),
      ...(input.topic !== undefined ? { topic: input.topic } : {}),
      ...(input.stream_id !== undefined ? { channelId: input.stream_id } : {}),
      propagateMode: input.propagate_mode,
      sendNotificationToOldThread: input.send_notification_to_old_thread,
      sendNotificationToNewThread: input.send_notification_to_new_thread,
      ...(input.prev_content_sha256 !== undefined ? { prevContentSha256: input.prev_content_sha256 } : {}),
    });
    return { detached_uploads: result.detachedUploads.map(attachmentToWire) };
  },
});
