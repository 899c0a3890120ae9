/**
 * @module http/endpoints/navigation-views/list-navigation-views
 * GET /navigation_views — https://zulip.com/api/get-navigation-views
 * The caller's own views, in the order they were added.
 */
import { defineEndpoint } from "../../endpoint.js";
import { navigationViewToWire } from "../../../wire/personal.js";

export default defineEndpoint({
  method: "GET",
  path: "/navigation_views",
  auth: "user",
  params: {},
  handler(ctx) {
    return { navigation_views: ctx.store.navigationViews(ctx.user.id).map(navigationViewToWire) };
  },
});
