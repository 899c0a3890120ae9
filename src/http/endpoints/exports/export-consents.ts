/**
 * @module http/endpoints/exports/export-consents
 * GET /export/realm/consents — https://zulip.com/api/get-realm-export-consents
 * Whether each active person allows their private data in full exports
 * (allow_private_data_export); administrators only.
 */
import { defineEndpoint } from "../../endpoint.js";

export default defineEndpoint({
  method: "GET",
  path: "/export/realm/consents",
  auth: "user",
  params: {},
  handler(ctx) {
    return {
      export_consents: ctx.store
        .exportConsents(ctx.user.id)
        .map((c) => ({ user_id: c.userId, consented: c.consented })),
    };
  },
});
