/**
 * @module http/endpoints/events
 * Event queues: long-poll and delete (queues are created by POST /register).
 */
import type { Endpoint } from "../../endpoint.js";
import deleteEvents from "./delete-events.js";
import getEvents from "./get-events.js";

export const EVENT_ENDPOINTS: readonly Endpoint[] = [getEvents, deleteEvents];
