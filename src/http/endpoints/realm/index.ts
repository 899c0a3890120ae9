/**
 * @module http/endpoints/realm
 * Organization-level settings objects: code playgrounds.
 */
import type { Endpoint } from "../../endpoint.js";
import addPlayground from "./add-playground.js";
import removePlayground from "./remove-playground.js";

export const REALM_ENDPOINTS: readonly Endpoint[] = [addPlayground, removePlayground];
