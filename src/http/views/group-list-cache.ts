/**
 * @module http/views/group-list-cache
 * The realm's user groups (register's realm_user_groups, GET /user_groups) as ready
 * JSON: a realm's list is the same for every member, and with 10,000 users its system
 * groups alone are ~200 KB of member IDs that were copied into objects and encoded
 * again for every register. The list depends on group records (user_group events),
 * on roles and activity (system groups' members: realm_user and realm_bot events) and
 * on nothing else a request can see; any of those events, or a realm event, drops
 * the cache of every realm.
 */
import type { EventBatch, Store, User } from "../../engine/index.js";
import { RawJson } from "../respond.js";
import { groupToWire } from "../../wire/group.js";

const INVALIDATING: ReadonlySet<string> = new Set(["user_group", "realm_user", "realm_bot", "realm"]);

export class GroupListCache {
  readonly #store: Store;
  /** `${realmId}:${includeDeactivated}` -> the JSON array. */
  readonly #entries = new Map<string, Buffer>();

  constructor(store: Store) {
    this.#store = store;
    store.onEvents((batch) => this.#invalidate(batch));
  }

  /** The user's realm's groups by ID, as groupToWire objects; deactivated ones only when asked. */
  list(viewer: User, includeDeactivated: boolean): RawJson {
    const k = `${viewer.realmId}:${includeDeactivated ? 1 : 0}`;
    let entry = this.#entries.get(k);
    if (entry === undefined) {
      const groups = this.#store.userGroups(viewer.id, includeDeactivated).map((g) => groupToWire(this.#store, g.group, g.members));
      entry = Buffer.from(JSON.stringify(groups));
      this.#entries.set(k, entry);
    }
    return new RawJson([entry]);
  }

  #invalidate(batch: EventBatch): void {
    if (this.#entries.size === 0) return;
    for (const { event } of batch.deliveries) {
      if (INVALIDATING.has(event.type)) {
        this.#entries.clear();
        return;
      }
    }
  }
}
