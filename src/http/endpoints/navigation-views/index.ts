/**
 * @module http/endpoints/navigation-views
 * A user's navigation views (the left sidebar's pinned and custom views).
 */
import type { Endpoint } from "../../endpoint.js";
import addNavigationView from "./add-navigation-view.js";
import listNavigationViews from "./list-navigation-views.js";
import removeNavigationView from "./remove-navigation-view.js";
import updateNavigationView from "./update-navigation-view.js";

export const NAVIGATION_VIEW_ENDPOINTS: readonly Endpoint[] = [
  listNavigationViews,
  addNavigationView,
  updateNavigationView,
  removeNavigationView,
];
