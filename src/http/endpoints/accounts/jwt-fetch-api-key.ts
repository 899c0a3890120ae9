/**
 * @module http/endpoints/accounts/jwt-fetch-api-key
 * POST /jwt/fetch_api_key — https://zulip.com/api/jwt-fetch-api-key. No Basic
 * credentials: a JSON Web Token signed with the realm's JWT_AUTH_KEYS entry names the
 * account by its `email` claim (http/jwt); the API key comes back, with the user
 * object (as GET /users/{id} shows it, client_gravatar off) when include_profile.
 */
import { NoSuchRealmError } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { emailFromJwt } from "../../jwt.js";
import { p } from "../../params.js";
import { userToWire } from "../../../wire/user.js";

export default defineEndpoint({
  method: "POST",
  path: "/jwt/fetch_api_key",
  auth: "none",
  params: {
    // Zulip's default is "", answered "No JSON web token passed in request".
    token: p.str().default(""),
    include_profile: p.bool().default(false),
  },
  // A token carries a few claims; 16 KiB leaves room for large RSA signatures.
  maxBodyBytes: 16 * 1024,
  async handler(ctx, input) {
    const realm = ctx.realm;
    if (!realm) throw new NoSuchRealmError();
    const email = await emailFromJwt(ctx.server.config, realm.subdomain, input.token);
    const user = ctx.store.loginByEmail(realm.id, email);
    return {
      api_key: user.apiKey,
      email: user.deliveryEmail,
      ...(input.include_profile
        ? { user: userToWire(user, { clientGravatar: false, includeCustomProfileFields: false }) }
        : {}),
    };
  },
});
