/**
 * @module index/entities/entity-index
 * The in-memory index of one entity table (storage/tables.ts, role "entity"): loaded
 * from the table at open, changed by afterCommit callbacks, cleared and loaded again
 * after a failed batch. StoreState builds load and reload from the registry
 * (registry.ts), so an index cannot be left out of either.
 */

/** Something that holds what it can rebuild (a derived cache) or reload (an index): reload empties it. */
export interface Clearable {
  clear(): void;
}

/** A cache derived from the indexes or the tables, rebuilt on demand: reload empties it. */
export interface DerivedCache extends Clearable {
  /** What it holds, by key (tests compare a reloaded store's with a fresh open's). */
  keys(): Iterable<unknown>;
}

export interface EntityIndex<R> extends Clearable {
  /** Indexes a record, new or a new version of an indexed one (same key). */
  add(record: R): void;
  /** Forgets a record deleted from its table. */
  remove?(record: R): void;
  /**
   * True for an index that may be ahead of its table (presence: pings change memory,
   * a flush writes later): reload does not clear it and `add` keeps the newer record.
   */
  readonly aheadOfDisk?: true;
}

/** An index of records by one key: the tables whose only index is their records by ID. */
export class KeyedIndex<K, R> implements EntityIndex<R> {
  readonly byKey = new Map<K, R>();
  readonly #keyOf: (record: R) => K;

  constructor(keyOf: (record: R) => K) {
    this.#keyOf = keyOf;
  }

  add(record: R): void {
    this.byKey.set(this.#keyOf(record), record);
  }

  remove(record: R): void {
    this.byKey.delete(this.#keyOf(record));
  }

  clear(): void {
    this.byKey.clear();
  }
}

/** owner -> record ID -> record (a user's drafts, saved snippets): empty owners are dropped. */
export class OwnedIndex<R extends { readonly id: number }> implements EntityIndex<R> {
  readonly byOwner = new Map<number, Map<number, R>>();
  readonly #ownerOf: (record: R) => number;

  constructor(ownerOf: (record: R) => number) {
    this.#ownerOf = ownerOf;
  }

  add(record: R): void {
    const owner = this.#ownerOf(record);
    let mine = this.byOwner.get(owner);
    if (!mine) this.byOwner.set(owner, (mine = new Map()));
    mine.set(record.id, record);
  }

  remove(record: R): void {
    this.removeKey(this.#ownerOf(record), record.id);
  }

  removeKey(owner: number, id: number): void {
    const mine = this.byOwner.get(owner);
    mine?.delete(id);
    if (mine?.size === 0) this.byOwner.delete(owner);
  }

  clear(): void {
    this.byOwner.clear();
  }
}
