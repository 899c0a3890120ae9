/** @module index/entities/presence Presence records by user, and each realm's change log of them. */
import type { PresenceRecord } from "../../types.js";
import { PresenceLog } from "../presence-log.js";
import type { EntityIndex } from "./entity-index.js";

/**
 * The one index that is ahead of disk: pings change it at once and flushPresence
 * (actions/presence.ts) writes the changed records every few seconds. A reload keeps
 * it and adds from disk only what is newer.
 */
export class PresenceIndex implements EntityIndex<PresenceRecord> {
  readonly aheadOfDisk = true;
  readonly byUser = new Map<number, PresenceRecord>();
  /** realmId -> its presence changes in sequence order (queries/presence.ts). */
  readonly logs = new Map<number, PresenceLog>();
  /** The highest sequence number of any record seen (memory or disk). */
  highestSeq = 0;

  add(record: PresenceRecord): void {
    this.highestSeq = Math.max(this.highestSeq, record.lastUpdateId);
    const current = this.byUser.get(record.userId);
    if (current && current.lastUpdateId >= record.lastUpdateId) return;
    this.byUser.set(record.userId, record);
    let log = this.logs.get(record.realmId);
    if (!log) this.logs.set(record.realmId, (log = new PresenceLog()));
    log.append(record.lastUpdateId, record.userId);
  }

  clear(): void {
    this.byUser.clear();
    this.logs.clear();
  }
}
