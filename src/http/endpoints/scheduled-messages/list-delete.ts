/**
 * @module http/endpoints/scheduled-messages/list-delete
 * GET /scheduled_messages (https://zulip.com/api/get-scheduled-messages): the caller's
 * undelivered ones, failed included, by delivery time. DELETE
 * /scheduled_messages/{id}: 404 "Scheduled message does not exist" for another
 * user's, a sent or an unknown one.
 */
import { defineEndpoint } from "../../endpoint.js";
import { scheduledMessageToWire } from "../../../wire/scheduled-message.js";
import { scheduledIdParam } from "./wire-params.js";

export const listScheduledMessagesEndpoint = defineEndpoint({
  method: "GET",
  path: "/scheduled_messages",
  auth: "user",
  params: {},
  handler(ctx) {
    // Like GET /messages, the HTTP API shows the empty topic as "" only to clients that ask at register.
    return {
      scheduled_messages: ctx.store
        .scheduledMessages(ctx.user.id)
        .map((s) => scheduledMessageToWire(s, ctx.realm, false)),
    };
  },
});

export const deleteScheduledMessageEndpoint = defineEndpoint({
  method: "DELETE",
  path: "/scheduled_messages/:scheduled_message_id",
  pathRefs: { scheduled_message_id: "scheduledMessage" },
  auth: "user",
  params: {},
  handler(ctx) {
    ctx.store.deleteScheduledMessage(ctx.user.id, scheduledIdParam(ctx));
    return {};
  },
});
