/**
 * @module http/endpoints/messages/get-message
 * GET /messages/{message_id} — https://zulip.com/api/get-message
 * Returns `message` (with flags) and the deprecated `raw_content`.
 */
import { hiddenSendersFor, placeholderEmailDomain } from "../../views/limited-guest-users.js";
import { BadRequestError } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { messageToWire } from "../../../wire/message.js";

export default defineEndpoint({
  method: "GET",
  path: "/messages/:message_id",
  pathRefs: { message_id: "message" },
  auth: "user",
  params: {
    apply_markdown: p.bool().default(true),
    allow_empty_topic_name: p.bool().default(false),
  },
  handler(ctx, input) {
    const raw = ctx.pathParams["message_id"] ?? "";
    if (!/^\d+$/.test(raw)) throw new BadRequestError("Invalid message(s)");
    const { message, flags } = ctx.store.getMessage(ctx.user.id, Number(raw));
    const options = {
      applyMarkdown: input.apply_markdown,
      clientGravatar: false,
      allowEmptyTopicName: input.allow_empty_topic_name,
      ...hiddenSendersFor(ctx.store, ctx.user, () => placeholderEmailDomain(ctx.server, ctx.realm)),
    };
    return { raw_content: message.content, message: messageToWire(ctx.store, ctx.realm, { message, flags }, options) };
  },
});
