/**
 * @module http/endpoints/users/deactivate-user
 * DELETE /users/{user_id} — https://zulip.com/api/deactivate-user, and DELETE /users/me —
 * https://zulip.com/api/deactivate-own-user. The user's bots go with them, their API
 * key is refused from the next request on and their event queues are collected; the
 * rules (administrators, owners for owners, never the last owner or the last user)
 * are the engine's (actions/user-lifecycle). `deactivation_notification_comment`
 * mails the user ("" mails without a comment).
 */
import { MAX_DEACTIVATION_COMMENT_LENGTH } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { realmUrl } from "../../realm-url.js";
import { userIdParam } from "./path.js";

export const deactivateUser = defineEndpoint({
  method: "DELETE",
  path: "/users/:user_id",
  pathRefs: { user_id: "user" },
  auth: "user",
  params: { deactivation_notification_comment: p.str({ maxLength: MAX_DEACTIVATION_COMMENT_LENGTH }).optional() },
  handler(ctx, input) {
    ctx.store.deactivateUser(ctx.user.id, userIdParam(ctx.pathParams), {
      comment: input.deactivation_notification_comment ?? null,
      realmUrl: realmUrl(ctx.server, ctx.realm),
    });
    return {};
  },
});

export const deactivateOwnUser = defineEndpoint({
  method: "DELETE",
  path: "/users/me",
  auth: "user",
  params: {},
  handler(ctx) {
    ctx.store.deactivateOwnUser(ctx.user.id);
    return {};
  },
});
