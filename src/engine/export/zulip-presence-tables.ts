/**
 * @module export/zulip-presence-tables
 * People's presence as Zulip's export writes it: zerver_userpresence, one row per person
 * with a record (last_active_time, null if never active; last_connected_time;
 * last_update_id, the presence sequence number). Presence is what everyone of the realm
 * sees of everyone, so it goes in every export type, as in Zulip.
 */
import type { StoreState } from "../state.js";

type Row = Record<string, unknown>;

export function presenceTables(state: StoreState, userIds: readonly number[]): Record<string, Row[]> {
  const rows: Row[] = [];
  for (const userId of userIds) {
    const record = state.presence.get(userId);
    if (record === undefined) continue;
    rows.push({
      id: rows.length + 1,
      user_profile: userId,
      realm: record.realmId,
      last_active_time: record.lastActive,
      last_connected_time: record.lastConnected,
      last_update_id: record.lastUpdateId,
    });
  }
  return { zerver_userpresence: rows };
}
