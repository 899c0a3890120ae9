/**
 * @module http/endpoints/presence
 * Presence: reporting one's own and reading the realm's.
 */
import type { Endpoint } from "../../endpoint.js";
import realmPresence from "./realm-presence.js";
import updatePresence from "./update-presence.js";
import userPresence from "./user-presence.js";

export const PRESENCE_ENDPOINTS: readonly Endpoint[] = [updatePresence, realmPresence, userPresence];
