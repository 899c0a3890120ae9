/**
 * @module events/derived-cache
 * The one base for state derived from a store and kept between requests (the HTTP
 * server's JSON caches, an embedder's read models): it subscribes to the store's change
 * sets, applies each one through the subclass's declared dependencies, and unsubscribes
 * on dispose, so a closed server leaves no listener behind.
 *
 * A subclass declares, for every change kind (the Record type makes the list exhaustive:
 * a new kind does not compile until every cache classified it), one of
 * - "ignore": nothing it holds depends on that kind;
 * - "clear": anything it holds may; drop it all;
 * - a function, given that part of the change set, that drops exactly what it names.
 * A failed write (`everything`) clears it.
 */
import { CHANGE_KINDS, type ChangeKind, type ChangeParts, type ChangeSet, type EntityChange } from "./change-set.js";

export type Dependency<P> = "ignore" | "clear" | ((part: P, changes: ChangeSet) => void);
export type Dependencies = { readonly [K in ChangeKind]: Dependency<ChangeParts[K]> };

/**
 * Whether every change only altered fields among `fields` (known fields, of existing
 * records): for a cache that shows none of them, nothing it holds changed.
 */
export function onlyFieldsChanged<F extends string>(
  changes: ReadonlyMap<number, EntityChange<F>>,
  fields: ReadonlySet<F>,
): boolean {
  for (const change of changes.values()) {
    if (change.op !== "changed" || change.fields === null) return false;
    for (const field of change.fields) if (!fields.has(field)) return false;
  }
  return true;
}

/** What a derived cache follows (a Store). */
export interface ChangeSource {
  onChanges(listener: (changes: ChangeSet) => void): () => void;
}

export abstract class DerivedCache {
  #stop: (() => void) | null;
  #generation = 0;

  constructor(source: ChangeSource) {
    this.#stop = source.onChanges((changes) => this.#apply(changes));
  }

  /** What the cache depends on, by change kind (see the module comment). */
  protected abstract readonly dependencies: Dependencies;

  /** Drops everything the cache holds. */
  protected abstract clear(): void;

  /**
   * Bumped by every change set that reached a dependency: an entry computed while it
   * moved (work that yields to the event loop) may be stale and must not be stored.
   */
  get generation(): number {
    return this.#generation;
  }

  /** True once disposed: it follows no more changes, so it must not serve what it kept. */
  get disposed(): boolean {
    return this.#stop === null;
  }

  /** Stops following the store and drops everything. */
  dispose(): void {
    this.#stop?.();
    this.#stop = null;
    this.#generation++;
    this.clear();
  }

  #apply(changes: ChangeSet): void {
    if (changes.everything) {
      this.#generation++;
      this.clear();
      return;
    }
    for (const kind of CHANGE_KINDS) {
      const part = changes[kind];
      if (part.size === 0) continue;
      const dependency = this.dependencies[kind];
      if (dependency === "ignore") continue;
      this.#generation++;
      if (dependency === "clear") {
        this.clear();
        return;
      }
      (dependency as (part: ChangeParts[ChangeKind], changes: ChangeSet) => void)(part, changes);
    }
  }
}
