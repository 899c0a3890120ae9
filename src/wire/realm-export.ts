/**
 * @module wire/realm-export
 * A data export on the wire (Zulip's get_realm_exports_serialized): GET /export/realm
 * and the realm_export event.
 */
import { REALM_EXPORT_STATUS, type RealmExport } from "../engine/index.js";

export function realmExportToWire(e: RealmExport): Record<string, unknown> {
  return {
    id: e.id,
    export_time: e.dateRequested,
    acting_user_id: e.actingUserId,
    export_url: e.status === REALM_EXPORT_STATUS.SUCCEEDED ? e.exportUrl : null,
    deleted_timestamp: e.dateDeleted,
    failed_timestamp: e.dateFailed,
    pending: e.status === REALM_EXPORT_STATUS.REQUESTED || e.status === REALM_EXPORT_STATUS.STARTED,
    export_type: e.type,
  };
}
