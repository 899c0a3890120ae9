/**
 * @module http/endpoints/users/get-users
 * GET /users — https://zulip.com/api/get-users
 * Every user of the realm, deactivated ones with is_active false, bots with bot_type
 * and bot_owner_id. user_ids (FL 384) limits the list; an ID that names no user of
 * the realm is "Invalid user ID: N".
 * A limited guest (can_access_all_users_group) gets an "Unknown user" placeholder for
 * each user they may not see (views/limited-guest-users).
 * Deviation: anonymous (spectator) access is not offered; a login is required.
 */
import { defineEndpoint } from "../../endpoint.js";
import { j, p, ref } from "../../params.js";
import { inaccessibleUserToWire, userToWire } from "../../../wire/user.js";
import { limitedGuestUserLists, placeholderEmailDomain } from "../../views/limited-guest-users.js";

/** Deviation: Zulip sets no limit on user_ids. */
const MAX_USER_IDS = 10_000;

export default defineEndpoint({
  method: "GET",
  path: "/users",
  auth: "user",
  params: {
    client_gravatar: p.bool().default(true),
    include_custom_profile_fields: p.bool().default(false),
    user_ids: ref(p.json(j.intList(), { maxItems: MAX_USER_IDS }), "userList").optional(),
  },
  handler(ctx, input) {
    const options = {
      clientGravatar: input.client_gravatar,
      includeCustomProfileFields: input.include_custom_profile_fields,
    };
    const accessible = ctx.store.accessibleUserIds(ctx.user.id);
    if (input.user_ids === undefined) {
      if (accessible === null) return { members: ctx.userJson.lists(ctx.realm.id, options).all };
      const lists = limitedGuestUserLists(ctx.store, ctx.realm, ctx.server, accessible, {
        ...options,
        placeholders: true,
      });
      return { members: lists.all };
    }
    const domain = placeholderEmailDomain(ctx.server, ctx.realm);
    return {
      members: ctx.store
        .listUsers(ctx.user.id, input.user_ids)
        .map((u) =>
          accessible === null || u.isBot || accessible.has(u.id)
            ? userToWire(u, options)
            : inaccessibleUserToWire(u.id, domain),
        ),
    };
  },
});
