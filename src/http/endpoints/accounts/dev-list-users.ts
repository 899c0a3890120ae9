/**
 * @module http/endpoints/accounts/dev-list-users
 * GET /dev_list_users — https://zulip.com/api/dev-list-users. A development server's
 * list of accounts to log in as with POST /dev_fetch_api_key: the active human users
 * of the Host's realm (Zulip lists every realm's), administrators apart, by email.
 * Only with the configuration's DEV_AUTH_BACKEND (off by default); otherwise Zulip's
 * production answer, "Endpoint not available in production.".
 */
import { BadRequestError, NoSuchRealmError, ROLE, type User } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { realmUrl } from "../../realm-url.js";
import { DEV_LOGIN_DISABLED } from "./dev-fetch-api-key.js";

export default defineEndpoint({
  method: "GET",
  path: "/dev_list_users",
  auth: "none",
  params: {},
  // The realm's whole user list, read in the writer's memory like GET /users.
  handler(ctx) {
    if (!ctx.server.config.DEV_AUTH_BACKEND) throw new BadRequestError(DEV_LOGIN_DISABLED);
    const realm = ctx.realm;
    if (!realm) throw new NoSuchRealmError();
    const url = realmUrl(ctx.server, realm);
    const users = ctx.store
      .realmUsers(realm.id)
      .filter((u) => u.isActive && !u.isBot)
      .sort((a, b) => (a.deliveryEmail < b.deliveryEmail ? -1 : a.deliveryEmail > b.deliveryEmail ? 1 : 0));
    const entry = (u: User) => ({ email: u.deliveryEmail, realm_url: url });
    const admin = (u: User) => u.role <= ROLE.ADMINISTRATOR;
    return {
      direct_admins: users.filter(admin).map(entry),
      direct_users: users.filter((u) => !admin(u)).map(entry),
    };
  },
});
