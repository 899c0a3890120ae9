/**
 * @module http/endpoints/users/reactivate-user
 * POST /users/{user_id}/reactivate — https://zulip.com/api/reactivate-user.
 * Administrators, and a bot's owner for the bot (Zulip's can_admin_user); a bot needs
 * the caller's permission to create such a bot and a name no active user has. The
 * rules are the engine's (actions/user-lifecycle).
 */
import { defineEndpoint } from "../../endpoint.js";
import { userIdParam } from "./path.js";

export default defineEndpoint({
  method: "POST",
  path: "/users/:user_id/reactivate",
  pathRefs: { user_id: "user" },
  auth: "user",
  params: {},
  handler(ctx) {
    ctx.store.reactivateUser(ctx.user.id, userIdParam(ctx.pathParams));
    return {};
  },
});
