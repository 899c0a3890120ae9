/**
 * @module http/endpoints/exports/export-realm
 * POST /export/realm — https://zulip.com/api/export-realm
 * Administrators request an export of the organization: `export_type` 1 (public data)
 * or 2 (full, with the consent of the users who allow it). The engine checks role,
 * Zulip's limit of five requests in seven days, its size bounds and the owners'
 * settings; the work then runs in the background (src/exports), `realm_export`
 * events telling the administrators when it starts and ends.
 */
import { REALM_EXPORT_TYPE, type RealmExportType } from "../../../engine/index.js";
import { defineEndpoint } from "../../endpoint.js";
import { p } from "../../params.js";
import { realmUrl } from "../../realm-url.js";

export default defineEndpoint({
  method: "POST",
  path: "/export/realm",
  auth: "user",
  params: {
    export_type: p.int({ min: REALM_EXPORT_TYPE.PUBLIC, max: REALM_EXPORT_TYPE.FULL_WITH_CONSENT }).optional(),
  },
  handler(ctx, params) {
    const type = (params.export_type ?? REALM_EXPORT_TYPE.PUBLIC) as RealmExportType;
    const config = ctx.server.config;
    const row = ctx.store.requestRealmExport(ctx.user.id, type, {
      supportAddress: config.ZULIP_ADMINISTRATOR ?? `zulip-admin@${ctx.server.externalHost}`,
    });
    ctx.server.exports.start(row, realmUrl(ctx.server, ctx.realm));
    return { id: row.id };
  },
});
