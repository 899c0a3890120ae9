/**
 * @module http/endpoints/accounts/dev-fetch-api-key
 * POST /dev_fetch_api_key — https://zulip.com/api/dev-fetch-api-key. A development
 * server's one-click login for mobile and terminal clients: the API key of any account
 * of the Host's realm, by its email, with no password. Only with the configuration's
 * DEV_AUTH_BACKEND (off by default, as Zulip enables DevAuthBackend only in
 * development); otherwise Zulip's production answer, "Endpoint not available in
 * production.". The account checks are the engine's (loginByEmail, as a JWT login).
 */
import { BadRequestError, NoSuchRealmError } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { p, ref } from "../../params.js";

export const DEV_LOGIN_DISABLED = "Endpoint not available in production.";

export default defineEndpoint({
  method: "POST",
  path: "/dev_fetch_api_key",
  auth: "none",
  params: { username: ref(p.str({ maxLength: 320 }), "loginEmail") },
  maxBodyBytes: 16 * 1024,
  handler(ctx, input) {
    if (!ctx.server.config.DEV_AUTH_BACKEND) throw new BadRequestError(DEV_LOGIN_DISABLED);
    const realm = ctx.realm;
    if (!realm) throw new NoSuchRealmError();
    const user = ctx.store.loginByEmail(realm.id, input.username);
    return { api_key: user.apiKey, email: user.deliveryEmail, user_id: user.id };
  },
});
