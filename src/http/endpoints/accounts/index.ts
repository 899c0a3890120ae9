/**
 * @module http/endpoints/accounts
 * Logging in and API keys: password login, JWT login, key regeneration.
 */
import type { Endpoint } from "../../endpoint.js";
import fetchApiKey from "./fetch-api-key.js";
import jwtFetchApiKey from "./jwt-fetch-api-key.js";
import regenerateApiKey from "./regenerate-api-key.js";

export const ACCOUNT_ENDPOINTS: readonly Endpoint[] = [fetchApiKey, jwtFetchApiKey, regenerateApiKey];
