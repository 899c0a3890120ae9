/**
 * @module http/endpoints/navigation-views/add-navigation-view
 * POST /navigation_views — https://zulip.com/api/add-navigation-view
 * A built-in view's pinning (no name) or a custom view (a name); Zulip's checks in the engine.
 */
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { LONG_FRAGMENT, longName } from "./limits.js";

export default defineEndpoint({
  method: "POST",
  path: "/navigation_views",
  auth: "user",
  params: { fragment: p.str(), is_pinned: p.bool(), name: p.str().optional() },
  testing: {
    notRefs: { fragment: "a URL hash the caller's view opens, stored as given: it names no object" },
    worst: { extra: [LONG_FRAGMENT, longName({ fragment: "narrow/is/alerted", is_pinned: "true" })] },
  },
  handler(ctx, input) {
    ctx.store.addNavigationView(ctx.user.id, {
      fragment: input.fragment,
      isPinned: input.is_pinned,
      ...(input.name === undefined ? {} : { name: input.name }),
    });
    return {};
  },
});
