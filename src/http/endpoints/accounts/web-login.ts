/**
 * @module http/endpoints/accounts/web-login
 * POST /accounts/login/ (Zulip's login form's path): the web client's login. The
 * username with either the password or the account's API key; the answer sets the
 * session cookies (http/session) and carries no key, so the page's script never holds
 * one. Unlike Zulip's HTML form it answers JSON, since the client is a script.
 *
 * Login CSRF: a page of another site may not log a browser in (Origin must name this
 * host when sent). Attempts are limited as POST /fetch_api_key's are (http/auth
 * LoginGuard): per account, and failures per client address.
 */
import { AuthError, LoginError, NoSuchRealmError, RateLimitError } from "../../../engine/index.js";
import { BadRequestError } from "../../../engine/index.js";
import { RawReply, defineEndpoint } from "../../endpoint.js";
import { p, ref } from "../../params.js";
import { authenticate, LoginGuard } from "../../auth.js";
import { checkOrigin, sessionCookies } from "../../session.js";
import { WEB_SESSION_SECONDS } from "../../../engine/index.js";

function basicHeader(email: string, apiKey: string): string {
  return `Basic ${Buffer.from(`${email}:${apiKey}`, "utf8").toString("base64")}`;
}

export default defineEndpoint({
  method: "POST",
  path: "/accounts/login/",
  root: true,
  auth: "none",
  params: {
    username: ref(p.str(), "loginEmail"),
    password: p.str().optional(),
    api_key: p.str().optional(),
  },
  maxBodyBytes: 16 * 1024,
  testing: { sweepBases: [{ params: { password: "not-the-password-1" } }] },
  async handler(ctx, input) {
    checkOrigin(ctx.head);
    const realm = ctx.realm;
    if (!realm) throw new NoSuchRealmError();
    if ((input.password === undefined) === (input.api_key === undefined))
      throw new BadRequestError("Give either password or api_key");
    const account = LoginGuard.account(realm.id, input.username);
    const key = input.api_key;
    const login =
      key === undefined
        ? () => ctx.store.loginWithPassword(realm.id, input.username, input.password!, ctx.server.passwordHashCost)
        : () =>
            Promise.resolve(
              authenticate(ctx.store, basicHeader(input.username, key), ctx.head.host, ctx.server.externalHost).user,
            );
    const wrong = (error: unknown) =>
      error instanceof AuthError || (error instanceof LoginError && error.code === "AUTHENTICATION_FAILED");
    const outcome = await ctx.server.logins.attempt(account, ctx.remoteAddress, login, wrong);
    if ("waitSeconds" in outcome) throw new RateLimitError(outcome.waitSeconds);
    const user = outcome.value;
    const token = ctx.store.createWebSession(user.id);
    const body = JSON.stringify({ result: "success", msg: "", user_id: user.id, email: user.deliveryEmail });
    const secure = ctx.server.baseUrl.startsWith("https:");
    return new RawReply(200, sessionCookies(token, WEB_SESSION_SECONDS, secure), {
      kind: "body",
      body,
      contentType: "application/json",
    });
  },
});
