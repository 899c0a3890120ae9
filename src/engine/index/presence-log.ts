/**
 * @module index/presence-log
 * One realm's presence changes in sequence order: (update ID, user) appended on every
 * stored change. "Changed after N" (a client's last_update_id) is a binary search and
 * a scan of what followed, not a walk over every user of the realm. A user changed
 * twice has two entries; only the one matching their record's lastUpdateId is live,
 * and the log is rebuilt from the live ones when stale entries outnumber them.
 */
export class PresenceLog {
  #ids: number[] = [];
  #users: number[] = [];
  #sorted = true;

  /** Records a change (in increasing ID order while serving; any order while loading). */
  append(updateId: number, userId: number): void {
    const last = this.#ids[this.#ids.length - 1];
    if (last !== undefined && updateId < last) this.#sorted = false;
    this.#ids.push(updateId);
    this.#users.push(userId);
  }

  get size(): number {
    return this.#ids.length;
  }

  /** Calls `visit(userId, updateId)` for each entry with an ID above `afterId`, in order. */
  forEachAfter(afterId: number, visit: (userId: number, updateId: number) => void): void {
    this.#sort();
    const ids = this.#ids;
    let lo = 0;
    let hi = ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ids[mid]! <= afterId) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < ids.length; i++) visit(this.#users[i]!, ids[i]!);
  }

  /** Keeps only live entries (`liveId(user)` is the user's current update ID) when most are stale. */
  compactIfStale(live: number, liveId: (userId: number) => number | undefined): void {
    if (this.#ids.length < 2 * live + 1024) return;
    const ids: number[] = [];
    const users: number[] = [];
    this.#sort();
    for (let i = 0; i < this.#ids.length; i++) {
      if (liveId(this.#users[i]!) !== this.#ids[i]) continue;
      ids.push(this.#ids[i]!);
      users.push(this.#users[i]!);
    }
    this.#ids = ids;
    this.#users = users;
  }

  #sort(): void {
    if (this.#sorted) return;
    const order = this.#ids.map((_, i) => i).sort((a, b) => this.#ids[a]! - this.#ids[b]!);
    this.#ids = order.map((i) => this.#ids[i]!);
    this.#users = order.map((i) => this.#users[i]!);
    this.#sorted = true;
  }
}
