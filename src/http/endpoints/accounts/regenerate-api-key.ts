/**
 * @module http/endpoints/accounts/regenerate-api-key
 * POST /users/me/api_key/regenerate: a new API key for the caller, returned once; the
 * old key is refused from the next request on. No event (Zulip sends none for users,
 * and none for bots since feature level 474).
 */
import { defineEndpoint } from "../../endpoint.js";

export default defineEndpoint({
  method: "POST",
  path: "/users/me/api_key/regenerate",
  auth: "user",
  params: {},
  handler(ctx) {
    return { api_key: ctx.store.regenerateApiKey(ctx.user.id) };
  },
});
