/**
 * @module http/endpoints/accounts/fetch-api-key
 * POST /fetch_api_key — https://zulip.com/api/fetch-api-key. No authentication: the
 * username (the account's real email) and password, from the realm of the Host,
 * give the API key. What Zulip's mobile app calls to log in.
 *
 * Limits (http/auth LoginGuard): 5 attempts per account per 30 minutes (a success
 * resets them) and failures count against the client address's 100 per minute;
 * beyond either, 429 RATE_LIMIT_HIT before the password is looked at.
 * Deviations (engine loginWithPassword): a deactivated account or organization is
 * reported only with the right password; another realm's user is "incorrect".
 */
import { LoginError, NoSuchRealmError, RateLimitError } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { p, ref } from "../../params.js";
import { LoginGuard } from "../../auth.js";

export default defineEndpoint({
  method: "POST",
  path: "/fetch_api_key",
  auth: "none",
  params: {
    username: ref(p.str(), "loginEmail"),
    password: p.str(),
  },
  // An email and a password: no reason for an unauthenticated client to send more.
  maxBodyBytes: 16 * 1024,
  testing: { sweepBases: [{ params: { password: "not-the-password-1" } }] },
  async handler(ctx, input) {
    const realm = ctx.realm;
    if (!realm) throw new NoSuchRealmError();
    const account = LoginGuard.account(realm.id, input.username);
    const wrong = (error: unknown) => error instanceof LoginError && error.code === "AUTHENTICATION_FAILED";
    const login = () =>
      ctx.store.loginWithPassword(realm.id, input.username, input.password, ctx.server.passwordHashCost);
    const outcome = await ctx.server.logins.attempt(account, ctx.remoteAddress, login, wrong);
    if ("waitSeconds" in outcome) throw new RateLimitError(outcome.waitSeconds);
    const user = outcome.value;
    return { api_key: user.apiKey, email: user.deliveryEmail, user_id: user.id };
  },
});
