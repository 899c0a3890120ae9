/**
 * @module http/endpoints
 * The route table: every endpoint, nothing else. Each family keeps its list in its
 * own folder's index.ts.
 */
import type { Endpoint } from "../endpoint.js";
import { MESSAGE_ENDPOINTS } from "./messages/index.js";
import serverSettings from "./server/server-settings.js";

export const ENDPOINTS: readonly Endpoint[] = [serverSettings, ...MESSAGE_ENDPOINTS];
