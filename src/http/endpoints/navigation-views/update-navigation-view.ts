/**
 * @module http/endpoints/navigation-views/update-navigation-view
 * PATCH /navigation_views/{fragment} — https://zulip.com/api/edit-navigation-view
 * `is_pinned` and (custom views) `name`; another user's views are never looked at (404 as for a missing one).
 */
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { longName } from "./limits.js";

export default defineEndpoint({
  method: "PATCH",
  path: "/navigation_views/:fragment",
  auth: "user",
  params: { is_pinned: p.bool().optional(), name: p.str().optional() },
  testing: {
    notRefs: { fragment: "looked up among the caller's own views only: another user's are never read" },
    worst: { extra: [longName({})] },
  },
  handler(ctx, input) {
    ctx.store.updateNavigationView(ctx.user.id, ctx.pathParams["fragment"] ?? "", {
      ...(input.is_pinned === undefined ? {} : { isPinned: input.is_pinned }),
      ...(input.name === undefined ? {} : { name: input.name }),
    });
    return {};
  },
});
