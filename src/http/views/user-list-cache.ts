/**
 * @module http/views/user-list-cache
 * The realm's user lists (GET /users, register's realm_users and
 * realm_non_active_users) as ready JSON per view variant: with 10,000 users,
 * building and encoding the objects cost ~130 ms per request; a cached list is one
 * buffer copy. Any realm_user or realm event drops the cache (user changes are rare).
 */
import type { EventBatch, Store } from "../../engine/index.js";
import { RawJson } from "../respond.js";
import { userToWire, type UserViewOptions } from "./user.js";

interface Lists {
  readonly all: Buffer;
  readonly active: Buffer;
  readonly inactive: Buffer;
}

export class UserListCache {
  readonly #store: Store;
  readonly #entries = new Map<string, Lists>();

  constructor(store: Store) {
    this.#store = store;
    store.onEvents((batch) => this.#invalidate(batch));
  }

  /** Every user of the realm; active ones; deactivated ones — each a JSON array, by ID. */
  lists(realmId: number, options: UserViewOptions): { all: RawJson; active: RawJson; inactive: RawJson } {
    const k = `${realmId}:${options.clientGravatar ? 1 : 0}${options.includeCustomProfileFields ? 1 : 0}`;
    let entry = this.#entries.get(k);
    if (!entry) {
      const all: string[] = [];
      const active: string[] = [];
      const inactive: string[] = [];
      for (const user of this.#store.realmUsers(realmId)) {
        const json = JSON.stringify(userToWire(user, options));
        all.push(json);
        (user.isActive ? active : inactive).push(json);
      }
      const array = (items: string[]) => Buffer.from(`[${items.join(",")}]`);
      entry = { all: array(all), active: array(active), inactive: array(inactive) };
      this.#entries.set(k, entry);
    }
    return { all: new RawJson([entry.all]), active: new RawJson([entry.active]), inactive: new RawJson([entry.inactive]) };
  }

  #invalidate(batch: EventBatch): void {
    if (batch.deliveries.some((d) => d.event.type === "realm_user" || d.event.type === "realm")) this.#entries.clear();
  }
}
