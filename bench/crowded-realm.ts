/**
 * @module bench/crowded-realm
 * A fresh realm of `userCount` users all subscribed to one large channel (the worst case
 * for per-subscriber work: notices, read bits, deletions), built in batches with a
 * progress bar. Shared by the benches that measure one operation against such a realm.
 */
import type { Realm, Store, User } from "../src/engine/index.js";
import { progressBar } from "../tools/progress.js";

export interface CrowdedRealm {
  readonly realm: Realm;
  readonly owner: User;
  /** The owner first, then the others in creation order. */
  readonly users: readonly User[];
}

export function crowdedRealm(store: Store, name: string, userCount: number, channel: string): CrowdedRealm {
  const { realm, owner } = store.createRealm({
    subdomain: "",
    name,
    owner: { email: "owner@bench.dev", fullName: "Owner" },
  });
  const setup = progressBar(`creating ${userCount} users`, userCount);
  const users: User[] = [owner];
  store.batch(() => {
    for (let i = 1; i < userCount; i++) {
      users.push(store.createUser({ realmId: realm.id, email: `u${i}@bench.dev`, fullName: `User ${i}` }));
      if (i % 500 === 0) setup.update(i);
    }
  });
  setup.stop();
  const ids = users.map((u) => u.id);
  store.batch(() => {
    for (let i = 0; i < ids.length; i += 1000)
      store.subscribe(owner.id, { channels: [{ name: channel }], principals: ids.slice(i, i + 1000) });
  });
  return { realm, owner, users };
}
