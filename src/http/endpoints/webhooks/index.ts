/**
 * @module http/endpoints/webhooks
 * Incoming webhooks (/api/v1/external/{integration}).
 */
import type { Endpoint } from "../../endpoint.js";
import external from "./external.js";

export const WEBHOOK_ENDPOINTS: Endpoint[] = [external];
