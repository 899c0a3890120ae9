/**
 * @module http/endpoints/users/get-user
 * GET /users/{user_id} and GET /users/{email} — https://zulip.com/api/get-user,
 * https://zulip.com/api/get-user-by-email. One route: digits are an ID, anything else
 * an email. Deactivated users and bots are found too; others are "No such user". A
 * user a limited guest may not see is "Insufficient permission" (Zulip's access_user_common).
 */
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { userToWire } from "../../../wire/user.js";
import { userByPathSegment } from "./lookup.js";
import { BadRequestError } from "../../../engine/index.js";

export default defineEndpoint({
  method: "GET",
  path: "/users/:user_id_or_email",
  pathRefs: { user_id_or_email: "userOrEmail" },
  auth: "user",
  params: {
    client_gravatar: p.bool().default(true),
    include_custom_profile_fields: p.bool().default(false),
  },
  handler(ctx, input) {
    const user = userByPathSegment(ctx.store, ctx.realm.id, ctx.pathParams["user_id_or_email"] ?? "");
    if (!ctx.store.canAccessUser(ctx.user.id, user)) throw new BadRequestError("Insufficient permission");
    return {
      user: userToWire(user, {
        clientGravatar: input.client_gravatar,
        includeCustomProfileFields: input.include_custom_profile_fields,
      }),
    };
  },
});
