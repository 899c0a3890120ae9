/**
 * @module http/endpoints/accounts
 * Logging in and API keys: password login, JWT login, key regeneration, the web client's session.
 */
import type { Endpoint } from "../../endpoint.js";
import fetchApiKey from "./fetch-api-key.js";
import jwtFetchApiKey from "./jwt-fetch-api-key.js";
import regenerateApiKey from "./regenerate-api-key.js";
import webLogin from "./web-login.js";
import webLogout from "./web-logout.js";

export const ACCOUNT_ENDPOINTS: readonly Endpoint[] = [
  fetchApiKey,
  jwtFetchApiKey,
  regenerateApiKey,
  webLogin,
  webLogout,
];
