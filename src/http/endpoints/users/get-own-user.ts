/**
 * @module http/endpoints/users/get-own-user
 * GET /users/me — https://zulip.com/api/get-own-user
 * The caller's User object at the top level (not wrapped), with real avatar URL and
 * profile_data, plus the deprecated max_message_id (-1 without messages), less the
 * bot-only keys Zulip's get-own-user schema does not have.
 */
import { defineEndpoint } from "../../endpoint.js";
import { userToWire } from "../../../wire/user.js";

export default defineEndpoint({
  method: "GET",
  path: "/users/me",
  auth: "user",
  params: {},
  handler(ctx) {
    // Zulip's own-user object has no bot fields (bot_type, bot_owner_id): a bot asking
    // about itself gets the same keys as a human.
    const {
      bot_type: _type,
      bot_owner_id: _owner,
      ...user
    } = userToWire(ctx.user, { clientGravatar: false, includeCustomProfileFields: true });
    return { ...user, max_message_id: ctx.store.maxMessageId(ctx.user.id) };
  },
});
