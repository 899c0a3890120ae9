/**
 * @module index/entities/muted-users
 * Muted users (Zulip's MutedUser): each muter's record, and the reverse map a send
 * reads (Zulip's get_muting_users): who mutes the sender. A send costs one map lookup,
 * whatever the number of recipients.
 */
import type { MutedUsersRecord } from "../../types.js";
import type { EntityIndex } from "./entity-index.js";

export class MutedUsersIndex implements EntityIndex<MutedUsersRecord> {
  /** muter ID -> their record (only muters with at least one muted user). */
  readonly byMuter = new Map<number, MutedUsersRecord>();
  /** muted user ID -> the users who mute them. */
  readonly mutingUsers = new Map<number, Set<number>>();

  add(record: MutedUsersRecord): void {
    this.remove(record);
    if (record.muted.length === 0) return;
    this.byMuter.set(record.userId, record);
    for (const { id } of record.muted) {
      let muters = this.mutingUsers.get(id);
      if (!muters) this.mutingUsers.set(id, (muters = new Set()));
      muters.add(record.userId);
    }
  }

  remove(record: Pick<MutedUsersRecord, "userId">): void {
    const previous = this.byMuter.get(record.userId);
    if (!previous) return;
    this.byMuter.delete(record.userId);
    for (const { id } of previous.muted) {
      const muters = this.mutingUsers.get(id);
      muters?.delete(record.userId);
      if (muters?.size === 0) this.mutingUsers.delete(id);
    }
  }

  clear(): void {
    this.byMuter.clear();
    this.mutingUsers.clear();
  }
}
