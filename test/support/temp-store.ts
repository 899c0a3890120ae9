/**
 * @module test/support/temp-store
 * A store in a fresh temporary directory, removed by cleanup().
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Store } from "../../src/engine/index.js";
import { openStore, type OpenStoreOptions } from "../../src/index.js";
import { internals } from "../../src/engine/internal.js";

export interface TempStore {
  readonly store: Store;
  readonly dir: string;
  reopen(): Store;
  cleanup(): void;
}

export function tempStore(options: OpenStoreOptions = {}): TempStore {
  const dir = mkdtempSync(join(tmpdir(), "parley-test-"));
  let store = openStore(dir, { noSync: true, ...options });
  return {
    get store() {
      return store;
    },
    dir,
    reopen() {
      store.close();
      store = openStore(dir, { noSync: true, ...options });
      return store;
    },
    cleanup() {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A realm with an owner, two members, a guest, and channels: public "general", private "secret". */
export function seedRealm(store: Store) {
  const { realm, owner } = store.createRealm({
    subdomain: "",
    name: "Test",
    owner: { email: "owner@test.dev", fullName: "Olive Owner" },
  });
  const alice = store.createUser({ realmId: realm.id, email: "alice@test.dev", fullName: "Alice" });
  const bob = store.createUser({ realmId: realm.id, email: "bob@test.dev", fullName: "Bob" });
  const guest = store.createUser({ realmId: realm.id, email: "guest@test.dev", fullName: "Gus Guest", role: 600 });
  store.subscribe(owner.id, { channels: [{ name: "general" }], principals: [owner.id, alice.id, bob.id] });
  store.subscribe(owner.id, {
    channels: [{ name: "secret" }],
    principals: [owner.id, alice.id],
    newChannel: { inviteOnly: true, historyPublicToSubscribers: false },
  });
  const general = internals(store).channels.get(internals(store).channelByName.get(`${realm.id}:GENERAL`)!)!;
  const secret = internals(store).channels.get(internals(store).channelByName.get(`${realm.id}:SECRET`)!)!;
  return { realm, owner, alice, bob, guest, general, secret };
}
