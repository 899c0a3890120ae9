/**
 * @module storage/topic-row-cache
 * Topic registry rows as last read or written, so that resolving a record's topic
 * (storage/topic-rows) costs a map lookup instead of an LMDB read and a msgpack decode
 * (~500 ns, +60% on getMessageRecord of a record naming a row).
 *
 * Never stale, by who writes the rows:
 * - the writer: putRow (actions/topic-registry) stores the row it writes; a failed write
 *   forgets every row (StoreState's forgetUncommitted), since reads inside it may have
 *   cached what it wrote;
 * - a follower (other process, worker, replica): catching up forgets the rows the
 *   change sets name (kind "topic"), and a reload forgets them all. A follower's records
 *   may come from a snapshot newer than its catch-up, so a reader names the renames its
 *   record expects (`topicFrom`): a cached row with fewer is read again.
 */
import type { TopicRow } from "../types.js";

/**
 * A row costs ~150 bytes plus its name and ~200 bytes a rename: 16 MiB holds some
 * 60,000 rows of short names, the active topics of a large server.
 */
const DEFAULT_BYTES = 16 * 1024 * 1024;

function bytesOf(row: TopicRow): number {
  return 150 + row.name.length * 2 + row.renames.length * 200;
}

interface Held {
  readonly row: TopicRow;
  /** The row's name and rename count, at hand for `current` (one object read, not three). */
  readonly name: string;
  readonly renames: number;
  readonly bytes: number;
  /** Read since the eviction sweep last passed it (a second chance: CLOCK). */
  used: boolean;
}

/**
 * Bounded by an estimate of its rows' bytes. Not index/bounded-cache's LRU: reads cycle
 * through a channel's topics, and moving each hit to the back of the map cost ~150 ns a
 * read; here a hit sets a bit, and eviction gives a used row a second pass.
 */
export class TopicRowCache {
  readonly #held = new Map<number, Held>();
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(maxBytes = DEFAULT_BYTES) {
    this.#maxBytes = maxBytes;
  }

  /** The row when held and it has at least `minRenames` renames, else undefined (read it). */
  get(id: number, minRenames: number): TopicRow | undefined {
    const held = this.#held.get(id);
    if (held === undefined || held.row.renames.length < minRenames) return undefined;
    held.used = true;
    return held.row;
  }

  /**
   * Whether row `id` is held with exactly `renames` renames and the name `name`: then a
   * record written with them (its topicFrom and topic) reads as stored, and the caller
   * builds nothing. False says nothing (read the row: getTopicRow).
   */
  current(id: number, renames: number, name: string): boolean {
    const held = this.#held.get(id);
    if (held === undefined || held.renames !== renames || held.name !== name) return false;
    held.used = true;
    return true;
  }

  /** Holds `row` (shared by every reader: frozen, so none can change another's). */
  set(id: number, row: TopicRow): TopicRow {
    Object.freeze(row.renames);
    Object.freeze(row);
    this.forget(id);
    const held: Held = { row, name: row.name, renames: row.renames.length, bytes: bytesOf(row), used: false };
    this.#held.set(id, held);
    this.#bytes += held.bytes;
    if (this.#bytes > this.#maxBytes) this.#evict(id);
    return row;
  }

  forget(id: number): void {
    const held = this.#held.get(id);
    if (held === undefined) return;
    this.#held.delete(id);
    this.#bytes -= held.bytes;
  }

  clear(): void {
    this.#held.clear();
    this.#bytes = 0;
  }

  /** The row IDs held (tests). */
  keys(): number[] {
    return [...this.#held.keys()];
  }

  /** Oldest first, a used row goes to the back once unmarked; never `keep`. Ends: every row gets unmarked. */
  #evict(keep: number): void {
    for (const [id, held] of this.#held) {
      if (this.#bytes <= this.#maxBytes) return;
      if (id === keep) continue;
      this.#held.delete(id);
      if (held.used) {
        held.used = false;
        this.#held.set(id, held);
      } else this.#bytes -= held.bytes;
    }
  }
}
