/**
 * @module http/endpoints/messages/submessage
 * POST /submessage — Zulip's process_submessage (zerver/views/submessage.py), what the
 * web and mobile apps send to vote in a poll, add an option or a task, or strike a task:
 * `msg_type` "widget" and `content` the event as JSON text. The checks and their order
 * are the engine's (actions/submessages.ts, widgets.ts). Like Zulip, neither `msg_type`
 * nor `content` has a length limit of its own; the body limit bounds both.
 */
import { defineEndpoint } from "../../endpoint.js";
import { p, ref } from "../../params.js";

export default defineEndpoint({
  method: "POST",
  path: "/submessage",
  auth: "user",
  // Zulip's typed_endpoint reports a missing parameter in the order of its signature.
  params: {
    content: p.str(),
    message_id: ref(p.int(), "message"),
    msg_type: p.str(),
  },
  testing: {
    sweepBases: [{ params: { msg_type: "widget", content: '{"type":"vote","key":"canned,0","vote":1}' } }],
  },
  handler(ctx, input) {
    ctx.store.addSubmessage(ctx.user.id, {
      messageId: input.message_id,
      msgType: input.msg_type,
      content: input.content,
    });
    return {};
  },
});
