/**
 * @module http/endpoints/register
 * POST /register: the client's initial state (event queues come later).
 */
import type { Endpoint } from "../../endpoint.js";
import register from "./register.js";

export const REGISTER_ENDPOINTS: Endpoint[] = [register];
