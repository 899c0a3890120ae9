/**
 * @module http/endpoints/navigation-views/remove-navigation-view
 * DELETE /navigation_views/{fragment} — https://zulip.com/api/remove-navigation-view
 */
import { defineEndpoint } from "../../endpoint.js";

export default defineEndpoint({
  method: "DELETE",
  path: "/navigation_views/:fragment",
  auth: "user",
  params: {},
  testing: {
    notRefs: { fragment: "looked up among the caller's own views only: another user's are never read" },
  },
  handler(ctx) {
    ctx.store.removeNavigationView(ctx.user.id, ctx.pathParams["fragment"] ?? "");
    return {};
  },
});
