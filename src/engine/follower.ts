/**
 * @module follower
 * A follower store's catch-up with its writer. Several processes (workers of one
 * server) open one data directory: one writer writes, followers open LMDB read-only and
 * serve reads. LMDB shows a follower every commit at its next read transaction, but the
 * follower's memory (entity indexes, cached bitmaps, the deferred bitmap journal,
 * derived caches) holds what it loaded: before answering a request, a follower calls
 * catchUp(), which applies every change-log entry (events/change-log.ts) logged since
 * the last one it applied, so that what the writer acknowledged is visible to the very
 * next request on any worker.
 *
 * Per entry it applies
 * - `follow.rows`: each in-memory table's records the write put or removed, read again
 *   (a removed one leaves its index; an index that cannot remove one record, or a table
 *   written past MAX_LOGGED_ROWS keys, is loaded again whole);
 * - `follow.bitmaps`: bitmap keys whose chunks the write wrote, dropped from the cache
 *   (their versions move: received sets, recent conversations rebuild);
 * - `follow.journal`: the deferred bitmap-write journal, read again, and the keys its
 *   new entries name dropped (those keys changed in the writer's memory only);
 * - `set`, the change set: user topic policies and message conversations of what it
 *   names are dropped, then the set goes to the store's change listeners (received
 *   sets, derived caches such as the HTTP layer's), as the writer releases its own.
 * Counters (the last message ID) are read again once per catch-up.
 *
 * An entry with no `follow` or no `set` (written by an older build), a set of a kind
 * this build does not know, or a gap (the follower fell behind past CHANGE_LOG_KEEP
 * trimming, or the log went backwards: a restore) means "anything changed": every index,
 * cache and bitmap is loaded again, and listeners get a set with `everything`.
 *
 * Snapshots: catchUp() starts a fresh read transaction, so the entries and the records
 * it reads agree, and memory and LMDB show one state until the turn of the event loop
 * ends. lmdb-js renews a process's read transaction after it (a setTimeout(0)); pinning
 * one per request (useReadTransaction) would mean passing it to every read of the
 * engine, so instead a reader catches up again wherever a request resumes after an
 * await before reading on: the HTTP layer after the shared limits' round trip, and
 * Store.nextTurn for reads that yield between slices. Each turn of a request then sees
 * one state, as each turn on the writer does (where commits also land between turns).
 */
import { TABLE_SPECS, type EntityTableName, type TableName } from "./storage/tables.js";
import {
  changesSince,
  decodeChangeSet,
  lastLoggedSeq,
  unpackBitmapKeys,
  type ChangeLogEntry,
} from "./events/change-log.js";
import { everythingChanged, type ChangeSet } from "./events/change-set.js";
import type { EntityIndex } from "./index/entities/entity-index.js";
import type { StoreState } from "./state.js";
import type { Counters } from "./write-coordinator.js";

export interface CatchUpResult {
  /** Change-log entries applied (0: nothing had changed). */
  readonly applied: number;
  /** True when the follower had to load everything again (see the module comment). */
  readonly reloadedAll: boolean;
  /** The last sequence number applied. */
  readonly seq: number;
}

/** What a follower's memory needs from one run of entries, merged (a table read once for many entries). */
interface PendingReloads {
  /** Per table, the keys to read again; null: the whole table. */
  readonly rows: Map<EntityTableName, unknown[] | null>;
  readonly bitmapKeys: Set<string>;
  allBitmaps: boolean;
  journal: boolean;
  readonly sets: ChangeSet[];
}

/** The index methods a single-record removal needs: a lookup of the indexed record by its table key, and remove. */
interface RemovableView {
  remove?(record: unknown): void;
  readonly byKey?: Map<unknown, unknown>;
  readonly byId?: Map<unknown, unknown>;
  readonly byOwner?: Map<number, Map<unknown, unknown>>;
  readonly byUser?: Map<unknown, unknown>;
  readonly byMuter?: Map<unknown, unknown>;
}

/** Tables whose index cannot take a record's new version in place (a realm's subdomain map): loaded whole. */
const RELOADED_WHOLE: ReadonlySet<EntityTableName> = new Set(["realms"]);

export class FollowerCatchUp {
  readonly #state: StoreState;
  #applied: number;

  /** Call in the same synchronous stretch as the store's load: the log's end is read in its snapshot. */
  constructor(state: StoreState) {
    this.#state = state;
    this.#applied = lastLoggedSeq(state.tables);
  }

  /** The last change-log sequence number the follower's memory reflects. */
  get appliedSeq(): number {
    return this.#applied;
  }

  /** Applies every entry logged since the last call (one key read when there is none). */
  catchUp(): CatchUpResult {
    const tables = this.#state.tables;
    tables.env.resetReadTxn();
    const last = lastLoggedSeq(tables);
    if (last === this.#applied) return { applied: 0, reloadedAll: false, seq: last };
    const pending: PendingReloads = {
      rows: new Map(),
      bitmapKeys: new Set(),
      allBitmaps: false,
      journal: false,
      sets: [],
    };
    let expected = this.#applied + 1;
    // The log went backwards (a restore replaced the directory): nothing of memory holds.
    let complete = last > this.#applied;
    if (complete) {
      for (const { seq, entry } of changesSince(tables, this.#applied)) {
        if (seq !== expected || !this.#collect(seq, entry, pending)) {
          complete = false;
          break;
        }
        expected = seq + 1;
      }
    }
    const applied = Math.max(0, last - this.#applied);
    if (!complete) {
      this.#state.reloadAll();
      this.#readCounters();
      this.#applied = last;
      this.#state.releaseCaughtUp(everythingChanged(last));
      return { applied, reloadedAll: true, seq: last };
    }
    this.#apply(pending);
    this.#applied = last;
    for (const set of pending.sets) this.#state.releaseCaughtUp(set);
    return { applied, reloadedAll: false, seq: last };
  }

  /** Adds one entry to `pending`; false when it cannot be applied piecewise (reload everything). */
  #collect(seq: number, entry: ChangeLogEntry, pending: PendingReloads): boolean {
    const follow = entry.follow;
    if (follow === undefined) return false;
    const set = decodeChangeSet(seq, entry);
    if (set.everything) return false;
    for (const row of follow.rows ?? []) {
      const table = row[0];
      if (typeof table !== "string" || !isEntityTable(table)) return false;
      const keys = pending.rows.get(table);
      if (keys === null) continue;
      if (row.length === 1) pending.rows.set(table, null);
      else if (keys === undefined) pending.rows.set(table, row.slice(1));
      else for (let i = 1; i < row.length; i++) keys.push(row[i]);
    }
    if (follow.bitmaps === 0) pending.allBitmaps = true;
    else if (!pending.allBitmaps && follow.bitmaps !== undefined)
      for (const key of unpackBitmapKeys(follow.bitmaps)) pending.bitmapKeys.add(key);
    if (follow.journal === 1) pending.journal = true;
    pending.sets.push(set);
    return true;
  }

  #apply(pending: PendingReloads): void {
    const state = this.#state;
    // The journal first: bitmaps loaded from here on overlay the writer's current one.
    if (pending.journal) state.bitmaps.forgetKeys(state.bitmaps.reloadDeferred());
    if (pending.allBitmaps) state.bitmaps.forgetAll();
    else state.bitmaps.forgetKeys(pending.bitmapKeys);
    for (const [table, keys] of pending.rows) this.#reloadRows(table, keys);
    for (const set of pending.sets) {
      for (const userId of set.userTopic.keys()) state.userTopics.forget(userId);
      // Rows the writer renamed or created; records read from now on may expect their renames.
      for (const rowId of set.topic.keys()) state.tables.topicRowCache.forget(rowId);
      for (const [id, change] of set.message)
        if (change.fields.has("topic") || change.fields.has("channel") || change.fields.has("deleted"))
          state.messageConversations.forget(id);
    }
    this.#readCounters();
  }

  /** Reads records of one table again by key (null: the whole table). */
  #reloadRows(table: EntityTableName, keys: readonly unknown[] | null): void {
    const state = this.#state;
    if (keys === null || RELOADED_WHOLE.has(table)) return this.#reloadTable(table);
    const index = state.entities[table] as EntityIndex<unknown>;
    const db = state.tables[table] as unknown as { get(key: unknown): unknown };
    let removed = false;
    for (const key of keys) {
      const record = db.get(key);
      if (record !== undefined) {
        index.add(record);
        continue;
      }
      const outcome = removeIndexed(index as EntityIndex<unknown> & RemovableView, key);
      if (outcome === "unsupported") return this.#reloadTable(table);
      removed ||= outcome === "removed";
    }
    // Derived caches hear of added versions through the indexes' hooks, not of removals.
    if (removed) state.clearDerivedCaches();
  }

  #reloadTable(table: EntityTableName): void {
    this.#state.entities[table].clear();
    this.#state.loadEntityTable(table);
    this.#state.clearDerivedCaches();
  }

  #readCounters(): void {
    const counters = this.#state.tables.meta.get("counters") as Counters | undefined;
    if (counters !== undefined) this.#state.counters = { ...this.#state.counters, ...counters };
    this.#state.presenceSeq = Math.max(this.#state.presenceSeq, this.#state.entities.presence.highestSeq);
  }
}

function isEntityTable(name: string): name is EntityTableName {
  return Object.hasOwn(TABLE_SPECS, name) && TABLE_SPECS[name as TableName].role === "entity";
}

/**
 * Removes the record indexed under a table key that no longer exists on disk. The key
 * is the table's: record ID, user ID (per-user tables) or confirmation key.
 */
function removeIndexed(
  index: EntityIndex<unknown> & RemovableView,
  key: unknown,
): "removed" | "absent" | "unsupported" {
  if (index.remove === undefined) return "unsupported";
  let record: unknown;
  if (index.byKey !== undefined) record = index.byKey.get(key);
  else if (index.byId !== undefined) record = index.byId.get(key);
  else if (index.byMuter !== undefined) record = index.byMuter.get(key);
  else if (index.byUser !== undefined) record = index.byUser.get(key);
  else if (index.byOwner !== undefined) for (const owned of index.byOwner.values()) record ??= owned.get(key);
  else return "unsupported";
  if (record === undefined) return "absent";
  index.remove(record);
  return "removed";
}
