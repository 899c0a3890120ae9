/** @module index/entities/realms Realms by ID and by subdomain. */
import type { Realm } from "../../types.js";
import type { EntityIndex } from "./entity-index.js";

export class RealmIndex implements EntityIndex<Realm> {
  readonly byId = new Map<number, Realm>();
  readonly bySubdomain = new Map<string, number>();

  add(realm: Realm): void {
    this.byId.set(realm.id, realm);
    this.bySubdomain.set(realm.subdomain, realm.id);
  }

  clear(): void {
    this.byId.clear();
    this.bySubdomain.clear();
  }
}
