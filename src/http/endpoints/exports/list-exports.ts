/**
 * @module http/endpoints/exports/list-exports
 * GET /export/realm — https://zulip.com/api/get-realm-exports
 * The realm's exports, oldest first (administrators only).
 */
import { defineEndpoint } from "../../endpoint.js";
import { realmExportToWire } from "../../../wire/realm-export.js";

export default defineEndpoint({
  method: "GET",
  path: "/export/realm",
  auth: "user",
  params: {},
  handler(ctx) {
    return { exports: ctx.store.realmExports(ctx.user.id).map(realmExportToWire) };
  },
});
