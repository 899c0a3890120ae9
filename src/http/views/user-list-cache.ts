/**
 * @module http/views/user-list-cache
 * The realm's user lists (GET /users, register's realm_users and
 * realm_non_active_users) as ready JSON per view variant: with 10,000 users,
 * building and encoding the objects cost ~130 ms per request; a cached list is one
 * buffer copy. Any realm_user or realm event drops the cache (user changes are rare).
 */
import type { EventBatch, Store } from "../../engine/index.js";
import { RawJson } from "../respond.js";
import { userToWire, type UserViewOptions } from "../../wire/user.js";

interface Lists {
  readonly all: Buffer;
  readonly active: Buffer;
  readonly inactive: Buffer;
}

export class UserListCache {
  readonly #store: Store;
  /** Whole lists per realm and variant; any user change drops them. */
  readonly #entries = new Map<string, Lists>();
  /**
   * Each user's JSON per variant, kept across list rebuilds: a change to one user
   * re-encodes that user only, so the first request after it joins strings instead
   * of encoding 10,000 objects again (~100 ms).
   */
  readonly #fragments = new Map<string, Map<number, string>>();

  constructor(store: Store) {
    this.#store = store;
    store.onEvents((batch) => this.#invalidate(batch));
  }

  /** Every user of the realm; active ones; deactivated ones — each a JSON array, by ID. */
  lists(realmId: number, options: UserViewOptions): { all: RawJson; active: RawJson; inactive: RawJson } {
    const variant = `${options.clientGravatar ? 1 : 0}${options.includeCustomProfileFields ? 1 : 0}`;
    const k = `${realmId}:${variant}`;
    let entry = this.#entries.get(k);
    if (!entry) {
      let fragments = this.#fragments.get(variant);
      if (!fragments) this.#fragments.set(variant, (fragments = new Map()));
      const all: string[] = [];
      const active: string[] = [];
      const inactive: string[] = [];
      for (const user of this.#store.realmUsers(realmId)) {
        let json = fragments.get(user.id);
        if (json === undefined) fragments.set(user.id, (json = JSON.stringify(userToWire(user, options))));
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
    let changed = false;
    for (const { event } of batch.deliveries) {
      if (event.type === "realm") {
        this.#fragments.clear();
        changed = true;
      } else if (event.type === "realm_user" || event.type === "realm_bot") {
        const id = event.type === "realm_bot" ? (event.op === "add" ? event.bot.id : event.botId) : event.op === "add" ? event.person.id : event.userId;
        for (const fragments of this.#fragments.values()) fragments.delete(id);
        changed = true;
      }
    }
    if (changed) this.#entries.clear();
  }
}
