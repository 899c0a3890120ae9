/**
 * @module http/endpoints/users/create-user
 * POST /users — https://zulip.com/api/create-user. An administrator holding the
 * operator-granted can_create_users permission (`parley user grant`) creates an
 * account with a password; the rules are the engine's (actions/user-lifecycle). The
 * password is checked before it is hashed, on the hashing pool, and the account made
 * after (its checks run again then). Answers the new `user_id`.
 */
import { hashPassword } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";

export default defineEndpoint({
  method: "POST",
  path: "/users",
  auth: "user",
  params: { email: p.str(), password: p.str(), full_name: p.str() },
  testing: {
    notRefs: {
      email: "the new account's address: addresses are unique per realm, so no other realm's account is consulted",
    },
  },
  async handler(ctx, input) {
    const details = { email: input.email, fullName: input.full_name };
    const checked = ctx.store.checkCreateUserByAdmin(ctx.user.id, { ...details, password: input.password });
    const password = await hashPassword(input.password, ctx.server.passwordHashCost);
    const user = ctx.store.createUserByAdmin(ctx.user.id, { ...checked, password });
    return { user_id: user.id };
  },
});
