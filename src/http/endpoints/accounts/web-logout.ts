/**
 * @module http/endpoints/accounts/web-logout
 * POST /accounts/logout/ (Zulip's path): ends the web client's session on the server,
 * so every tab that shares the cookie is logged out, and clears the cookies. A live
 * session must pass the CSRF check (another site may not log a user out); without
 * one (already ended, expired) the cookies are only cleared.
 */
import { defineEndpoint, RawReply } from "../../endpoint.js";
import { checkCsrf, clearedCookies, sessionTokenOf } from "../../session.js";

export default defineEndpoint({
  method: "POST",
  path: "/accounts/logout/",
  root: true,
  auth: "none",
  params: {},
  maxBodyBytes: 1024,
  handler(ctx) {
    const token = sessionTokenOf(ctx.head);
    if (token !== null && ctx.store.webSessionUser(token) !== null) {
      checkCsrf(ctx.head, token);
      ctx.store.endWebSession(token);
    }
    const secure = ctx.server.baseUrl.startsWith("https:");
    return new RawReply(200, clearedCookies(secure), {
      kind: "body",
      body: JSON.stringify({ result: "success", msg: "" }),
      contentType: "application/json",
    });
  },
});
