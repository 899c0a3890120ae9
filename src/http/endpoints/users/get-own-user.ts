/**
 * @module http/endpoints/users/get-own-user
 * GET /users/me — https://zulip.com/api/get-own-user
 * The caller's User object at the top level (not wrapped), with real avatar URL and
 * profile_data, plus the deprecated max_message_id (-1 without messages).
 */
import { defineEndpoint } from "../../endpoint.js";
import { userToWire } from "../../../wire/user.js";

export default defineEndpoint({
  method: "GET",
  path: "/users/me",
  auth: "user",
  params: {},
  handler(ctx) {
    return {
      ...userToWire(ctx.user, { clientGravatar: false, includeCustomProfileFields: true }),
      max_message_id: ctx.store.maxMessageId(ctx.user.id),
    };
  },
});
