/**
 * @module http/endpoints/accounts
 * Logging in and API keys: password login, JWT login, key regeneration, the web client's session,
 * and a development server's login without a password (off unless configured).
 */
import type { Endpoint } from "../../endpoint.js";
import devFetchApiKey from "./dev-fetch-api-key.js";
import devListUsers from "./dev-list-users.js";
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
  devFetchApiKey,
  devListUsers,
];
