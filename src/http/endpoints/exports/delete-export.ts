/**
 * @module http/endpoints/exports/delete-export
 * DELETE /export/realm/{export_id} — https://zulip.com/api/delete-realm-export
 * A finished export's tarball is removed and the record marked deleted (it stays
 * listed with its deleted_timestamp). Pending, failed and deleted exports are
 * refused with Zulip's messages.
 */
import { BadRequestError } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";

export default defineEndpoint({
  method: "DELETE",
  path: "/export/realm/:export_id",
  auth: "user",
  params: {},
  // test/http/realm-export.test.ts
  testing: {
    notRefs: {
      export_id:
        "exports are administrators' only; another realm's export is 'Invalid data export ID' exactly like a " +
        "missing one (test/http/realm-export.test.ts)",
    },
  },
  async handler(ctx) {
    const raw = ctx.pathParams["export_id"] ?? "";
    // Zulip's path converter takes digits only; anything else names no export.
    if (!/^\d{1,9}$/.test(raw)) throw new BadRequestError("Invalid data export ID");
    const removed = ctx.store.deleteRealmExport(ctx.user.id, Number(raw));
    if (removed.exportPath !== null) await ctx.server.exports.remove(removed.exportPath);
    return {};
  },
});
