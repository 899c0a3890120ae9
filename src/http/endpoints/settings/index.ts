/**
 * @module http/endpoints/settings
 * Personal settings and the organization's defaults for new users.
 */
import type { Endpoint } from "../../endpoint.js";
import updateRealmDefaults from "./update-realm-defaults.js";
import updateSettings from "./update-settings.js";

export const SETTINGS_ENDPOINTS: readonly Endpoint[] = [updateSettings, updateRealmDefaults];
