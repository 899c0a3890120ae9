/** @module index/entities/groups User groups by ID. */
import type { UserGroup } from "../../types.js";
import type { EntityIndex } from "./entity-index.js";

export class GroupIndex implements EntityIndex<UserGroup> {
  readonly byId = new Map<number, UserGroup>();
  /** Told of every add: derived caches of group membership and system groups (state.ts) drop. */
  readonly #onChange: () => void;

  constructor(onChange: () => void) {
    this.#onChange = onChange;
  }

  add(group: UserGroup): void {
    this.byId.set(group.id, group);
    this.#onChange();
  }

  clear(): void {
    this.byId.clear();
  }
}
