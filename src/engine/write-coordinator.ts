/**
 * @module write-coordinator
 * The store's one write path: single writes, group commit and batches, each one LMDB
 * transaction; the change log written inside it; and, after the commit, the release of
 * change sets and events to listeners. It holds no entity data: StoreState (state.ts)
 * keeps the data and delegates its writes here.
 *
 * Invariant: in-memory entity maps are changed only by `afterCommit` callbacks, and
 * bitmap changes are rolled back if the transaction throws, so a failed call changes
 * nothing anywhere (after a failed batch or group the host reloads memory from disk).
 */
import type { BitmapStore } from "./index/bitmap-store.js";
import { numberRecordValue } from "./storage/number-record.js";
import { forgetUncommittedStructures, SCHEMA_VERSION, TABLE_NAMES, TABLE_SPECS } from "./storage/tables.js";
import type { TableName, Tables } from "./storage/tables.js";
import { FollowerWriteError, StorageError } from "./errors.js";
import type { Audience, Delivery, EngineEvent, EventBatch } from "./events/types.js";
import {
  encodeChangeSet,
  logEntryOf,
  MAX_LOGGED_BITMAP_KEYS,
  MAX_LOGGED_ROWS,
  packBitmapKeys,
  trimChangeLog,
  type ChangeLogEntry,
  type FollowerNotes,
} from "./events/change-log.js";
import { ChangeSetBuilder, changesOfEvent, everythingChanged } from "./events/change-set.js";
import type { ReplicationCapture } from "./replication.js";
import type { Change, ChangeSet } from "./events/change-set.js";

export interface Counters {
  nextMessageId: number;
  nextRealmId: number;
  nextUserId: number;
  nextChannelId: number;
  nextGroupId: number;
  nextConversationId: number;
  /** The next change-log sequence number (one per committed write that changed anything). */
  nextChangeSeq: number;
  nextScheduledMessageId: number;
  nextPlaygroundId: number;
  nextLinkifierId: number;
  nextChannelFolderId: number;
  nextRealmDomainId: number;
  nextDefaultChannelGroupId: number;
  nextProfileFieldId: number;
  nextRealmEmojiId: number;
  nextDraftId: number;
  nextSavedSnippetId: number;
  nextDeviceId: number;
  nextPushOutboxId: number;
  nextInviteId: number;
  nextMailId: number;
  /** Absent in stores written before outgoing webhooks (state.ts starts it at 1). */
  nextWebhookItemId: number;
  nextAttachmentId: number;
  /** Absent in stores written before data exports (state.ts starts it at 1). */
  nextRealmExportId: number;
  /** Absent in stores written before widgets (state.ts starts it at 1). */
  nextSubmessageId: number;
  /** Absent in stores written before the topic registry (state.ts starts it at 1). */
  nextTopicRowId: number;
}

/** During a write: defer work to after the commit, and queue events. */
export interface WriteContext {
  /** Runs after a successful commit, in order (in-memory maps change only here). */
  afterCommit(fn: () => void): void;
  /**
   * Queues an event, released to listeners after the commit and after every
   * afterCommit callback; its audience is computed then, on the committed state.
   */
  emit(event: EngineEvent, audience: () => Audience): void;
  /**
   * Declares a change that no emitted event names (events/change-set.ts): what the
   * write's event says changed is recorded by emit already.
   */
  changed(change: Change): void;
}

type PendingEvent = readonly [EngineEvent, () => Audience];

/**
 * Keys one settling write of addDeferred's journal writes: ~13 µs a per-user read
 * bitmap (load, serialize, put), so ~7 ms a write between turns of the event loop.
 */
const SETTLE_KEYS_PER_WRITE = 500;

/** What one write (or one batch, or one write of a group commit) produced. */
class WriteUnit {
  readonly events: PendingEvent[] = [];
  readonly changes = new ChangeSetBuilder();
  /** Set by logging: the write's sequence number and change set (0 and null if it changed nothing). */
  seq = 0;
  changeSet: ChangeSet | null = null;

  context(afterCommit: (cb: () => void) => void): WriteContext {
    return {
      afterCommit,
      emit: (event, audience) => {
        this.events.push([event, audience]);
        changesOfEvent(event, this.changes);
      },
      changed: (change) => this.changes.add(change),
    };
  }
}

/**
 * What a grouped write's `prepare` returns when its checks found nothing to write (a
 * flag already set): the answer, given after the group's commit (it may rest on the
 * writes before it), or at once, with no transaction, when the write is alone.
 */
export class NothingToWrite<T> {
  constructor(readonly value: T) {}
}

/** A grouped write's body, or its answer when it writes nothing. */
export type GroupedBody<T> = ((ctx: WriteContext) => T) | NothingToWrite<T>;

/**
 * One write waiting for a group commit: `prepare` does every check (it must not
 * write) and returns the write's body, run inside the shared transaction.
 */
interface GroupedWrite {
  readonly prepare: () => GroupedBody<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** What the coordinator writes through: the store's tables, bitmaps and counters, and its memory. */
export interface WriteHost {
  readonly tables: Tables;
  readonly bitmaps: BitmapStore;
  /** Saved before each transaction and put back if it fails. */
  counters: Counters;
  now(): number;
  /** After any failed transaction: caches filled by reads inside it forget (they may hold what it wrote). */
  forgetUncommitted(): void;
  /** After a failed batch or group commit, whose afterCommit callbacks ran: memory is loaded again from disk. */
  reload(): void;
  /** Whether the store was closed (a settling write scheduled before it then has nothing to do). */
  readonly closed: boolean;
}

export interface WriteCoordinatorOptions {
  /** See StoreOptions.commitHook. */
  readonly commitHook?: () => void;
  readonly onListenerError?: (error: unknown) => void;
  /** See StoreOptions.checkChanges. */
  readonly checkChanges?: boolean;
  /** A follower's coordinator: every write, event and in-memory change is refused (FollowerWriteError). */
  readonly follower?: boolean;
  /** A cluster leader's: every transaction captured for the replicated log (replication.ts). */
  readonly replication?: ReplicationCapture;
}

/** A change-log entry written at the end of its transaction (after the bitmaps: the last one names them). */
interface PendingLogEntry {
  readonly seq: number;
  readonly entry: { -readonly [K in keyof ChangeLogEntry]: ChangeLogEntry[K] };
}

export class WriteCoordinator {
  readonly #host: WriteHost;
  readonly #listeners = new Set<(batch: EventBatch) => void>();
  readonly #changeListeners = new Set<(changes: ChangeSet) => void>();
  readonly #rollbackListeners = new Set<() => void>();
  readonly #commitHook: (() => void) | undefined;
  readonly #onListenerError: (error: unknown) => void;
  #inWrite = false;
  /** The running batch() (or group-commit write), whose actions' events and changes it collects. */
  #batch: WriteUnit | null = null;
  /** With checkChanges: the tables written by the running write unit. */
  readonly #written: Set<TableName> | null;
  /** Writes waiting for the next group commit (see writeGrouped). */
  #grouped: GroupedWrite[] = [];
  #groupScheduled = false;
  #settleScheduled = false;
  /** Whether a commit of this coordinator wrote the schema version (it is written once per open). */
  #schemaMarked = false;
  readonly #follower: boolean;
  /** Keys of in-memory (entity) tables the running write unit put or removed, by table: its follower notes. */
  readonly #rowsWritten = new Map<TableName, unknown[]>();
  /** The running transaction's change-log entries, written after its bitmaps. */
  #pendingLog: PendingLogEntry[] = [];
  readonly #replication: ReplicationCapture | null;

  constructor(host: WriteHost, options: WriteCoordinatorOptions) {
    this.#host = host;
    this.#replication = options.replication ?? null;
    this.#commitHook = options.commitHook;
    this.#onListenerError =
      options.onListenerError ?? ((error) => console.error("parley engine: event listener failed", error));
    this.#follower = options.follower ?? false;
    const checkChanges = options.checkChanges ?? process.env["PARLEY_CHECK_CHANGES"] === "1";
    this.#written = checkChanges && !this.#follower ? this.#trackTableWrites() : null;
    if (!this.#follower) this.#trackRowWrites();
  }

  #refuseOnFollower(operation: string): void {
    if (this.#follower) throw new FollowerWriteError(operation);
  }

  /** Runs `fn` as one LMDB write transaction; see the module invariant. */
  write<T>(fn: (ctx: WriteContext) => T): T {
    this.#refuseOnFollower("a write");
    // Inside a batch, each action's changes become visible at once (later actions of
    // the batch depend on them); batch() restores everything if the whole fails, and
    // releases the batch's events only after it commits.
    const batch = this.#batch;
    if (batch) return fn(batch.context((cb) => cb()));
    if (this.#inWrite) throw new StorageError("nested write transaction");
    const after: (() => void)[] = [];
    const unit = new WriteUnit();
    const result = this.#transaction(
      () => {
        this.#written?.clear();
        this.#rowsWritten.clear();
        const value = fn(unit.context((cb) => after.push(cb)));
        this.#logChanges(unit);
        return value;
      },
      () => undefined,
    );
    for (const cb of after) cb();
    this.#release(unit);
    return result;
  }

  /**
   * Group commit: queues a write to share one LMDB transaction, and so one fsync, with
   * every other grouped write that arrives before the queue is flushed (on the next
   * turn of the event loop; writes that arrive while a commit blocks the thread wait in
   * the sockets and join the one after). The promise settles only after the shared
   * commit returned, so an acknowledgement still means durable.
   *
   * Writes run in arrival order, each seeing the ones before it (as batch() does, their
   * afterCommit callbacks run at once; memory is reloaded if the commit fails). Each
   * keeps its own change-log entry and event batch, released after the commit. A
   * refusal from `prepare` rejects that write alone; a body that throws, or a failed
   * commit, undoes the whole group, after which a body error reruns the others each in
   * its own write, and a commit failure rejects every write of the group.
   */
  writeGrouped<T>(prepare: () => GroupedBody<T>): Promise<T> {
    if (this.#follower) return Promise.reject(new FollowerWriteError("a write"));
    return new Promise<T>((resolve, reject) => {
      this.#grouped.push({ prepare, resolve: resolve as (value: unknown) => void, reject });
      if (this.#groupScheduled) return;
      this.#groupScheduled = true;
      setImmediate(() => this.#flushGrouped());
    });
  }

  #flushGrouped(): void {
    // A cluster leader answers a write only once the log stored it: while an append is
    // under way the group keeps growing, and goes out as one transaction (one fsync, one
    // log message) once it is stored, instead of many small ones whose fsyncs would hold
    // the thread while the acknowledgements wait (docs/cluster.md §4).
    const appending = this.#replication?.pending() ?? null;
    if (appending !== null) {
      void appending.then(() => setImmediate(() => this.#flushGrouped()));
      return;
    }
    this.#groupScheduled = false;
    const group = this.#grouped.splice(0);
    if (group.length === 1) return this.#writeAlone(group[0]!);
    const outcomes: ({ ok: true; value: unknown; unit: WriteUnit | null } | { ok: false; error: unknown })[] = [];
    let bodyFailed = false;
    try {
      this.#transaction(
        () => {
          for (const entry of group) {
            let body: GroupedBody<unknown>;
            try {
              body = entry.prepare();
            } catch (error) {
              outcomes.push({ ok: false, error });
              continue;
            }
            if (body instanceof NothingToWrite) {
              outcomes.push({ ok: true, value: body.value, unit: null });
              continue;
            }
            const unit = new WriteUnit();
            this.#batch = unit;
            this.#written?.clear();
            this.#rowsWritten.clear();
            try {
              const value = body(unit.context((cb) => cb()));
              this.#logChanges(unit);
              outcomes.push({ ok: true, value, unit });
            } catch (error) {
              bodyFailed = true;
              throw error;
            } finally {
              this.#batch = null;
            }
          }
        },
        () => this.#host.reload(),
      );
    } catch (error) {
      if (!bodyFailed) {
        for (const entry of group) entry.reject(error);
        return;
      }
      // A body failed half-way: the group was undone; each write now runs on its own,
      // so that only the failing one fails.
      for (const entry of group) this.#writeAlone(entry);
      return;
    }
    group.forEach((entry, i) => {
      const outcome = outcomes[i]!;
      if (!outcome.ok) return entry.reject(outcome.error);
      if (outcome.unit) this.#release(outcome.unit);
      entry.resolve(outcome.value);
    });
  }

  /**
   * Writes addDeferred's keys, SETTLE_KEYS_PER_WRITE a write, a turn of the event loop
   * apart (each write schedules the next). A failure leaves them journaled: the next
   * write, close or open settles them.
   */
  #scheduleSettle(): void {
    if (this.#settleScheduled) return;
    this.#settleScheduled = true;
    setImmediate(() => {
      this.#settleScheduled = false;
      if (!this.#host.bitmaps.hasDeferred || this.#inWrite || this.#batch) return;
      try {
        this.write(() => this.#host.bitmaps.settleDeferred(SETTLE_KEYS_PER_WRITE));
      } catch (error) {
        if (!this.#host.closed) this.#onListenerError(error);
      }
    });
  }

  /** Writes every key addDeferred left, now (at open and close). */
  settleAll(): void {
    while (this.#host.bitmaps.hasDeferred) this.write(() => this.#host.bitmaps.settleDeferred(SETTLE_KEYS_PER_WRITE));
  }

  #writeAlone(entry: GroupedWrite): void {
    try {
      const body = entry.prepare();
      entry.resolve(body instanceof NothingToWrite ? body.value : this.write(body));
    } catch (error) {
      entry.reject(error);
    }
  }

  /**
   * Runs many actions as one transaction (bulk loads): bitmap chunks are written once
   * per batch instead of once per action. If anything throws, nothing is committed,
   * no event is released, and the in-memory state is reloaded from disk.
   */
  batch<T>(fn: () => T): T {
    this.#refuseOnFollower("a batch of writes");
    if (this.#inWrite || this.#batch) throw new StorageError("nested batch");
    const unit = new WriteUnit();
    const result = this.#transaction(
      () => {
        this.#batch = unit;
        this.#written?.clear();
        this.#rowsWritten.clear();
        try {
          const value = fn();
          this.#logChanges(unit);
          return value;
        } finally {
          this.#batch = null;
        }
      },
      () => this.#host.reload(),
    );
    this.#release(unit);
    return result;
  }

  /**
   * One LMDB transaction: `body`, then counters and dirty bitmap chunks. Memory is
   * never ahead of disk: bitmap mutations, counters and the record encoders' shared
   * structures are undone exactly if anything fails, including the commit itself, and
   * derived caches are told to forget.
   */
  #transaction<T>(body: () => T, onFailure: () => void): T {
    const savedCounters = { ...this.#host.counters };
    this.#inWrite = true;
    this.#pendingLog = [];
    let failed = false;
    try {
      const value = this.#host.tables.env.transactionSync(() => {
        this.#replication?.begin();
        const inner = body();
        this.#writeLog(this.#host.bitmaps.writeDirty(MAX_LOGGED_BITMAP_KEYS));
        this.#host.tables.meta.putSync(
          "counters",
          numberRecordValue(this.#host.tables.meta, this.#host.counters as unknown as Record<string, number>),
        );
        // Once per open: the first commit marks the store with this build's version (see SCHEMA_VERSION).
        if (!this.#schemaMarked) this.#host.tables.meta.putSync("schemaVersion", SCHEMA_VERSION);
        this.#replication?.end();
        this.#commitHook?.();
        return inner;
      });
      this.#schemaMarked = true;
      this.#replication?.committed();
      this.#host.bitmaps.committed();
      if (this.#host.bitmaps.hasDeferred) this.#scheduleSettle();
      return value;
    } catch (error) {
      this.#replication?.aborted();
      this.#host.bitmaps.rollback();
      // Reads inside the failed transaction may have cached what it wrote.
      this.#host.forgetUncommitted();
      forgetUncommittedStructures(this.#host.tables);
      this.#host.counters = savedCounters;
      onFailure();
      for (const listener of this.#rollbackListeners) listener();
      failed = true;
      throw error;
    } finally {
      this.#inWrite = false;
      // Whatever was derived from the undone write's in-memory effects must go (listeners
      // run outside the write: they may read, or write, the store).
      if (failed) this.#releaseChanges(everythingChanged());
    }
  }

  /**
   * Prepares the change-log entry of a write that changed anything (its events, its
   * change set and the in-memory tables' keys it wrote) and sets the unit's sequence
   * number and change set; nothing if it changed nothing. #writeLog writes it.
   */
  #logChanges(unit: WriteUnit): void {
    if (this.#written) this.#checkDeclared(unit);
    const rows = this.#rowsWritten.size === 0 ? null : this.#loggedRows();
    if (unit.events.length === 0 && unit.changes.isEmpty && rows === null) return;
    unit.seq = this.#host.counters.nextChangeSeq++;
    unit.changeSet = unit.changes.build(unit.seq);
    const changes = unit.events.map(([event]) => logEntryOf(event));
    const events = unit.events.map(([event]) => event);
    const follow: FollowerNotes = rows === null ? {} : { rows };
    const entry = { at: this.#host.now(), changes, set: encodeChangeSet(unit.changeSet, events), follow };
    this.#pendingLog.push({ seq: unit.seq, entry });
  }

  #loggedRows(): unknown[][] {
    const out: unknown[][] = [];
    for (const [table, keys] of this.#rowsWritten)
      out.push(keys.length > MAX_LOGGED_ROWS ? [table] : ([table] as unknown[]).concat(keys));
    this.#rowsWritten.clear();
    return out;
  }

  /**
   * Inside the transaction, after its bitmaps were written: its entries, the last naming
   * the bitmap keys written and whether the deferred journal changed. A transaction that
   * wrote only bitmaps (settling deferred ones) gets an entry of its own: a follower must
   * hear of the journal's change.
   */
  #writeLog(bitmaps: { keys: readonly string[] | null; journal: boolean }): void {
    if (bitmaps.keys !== null && bitmaps.keys.length === 0 && !bitmaps.journal && this.#pendingLog.length === 0) return;
    if (this.#pendingLog.length === 0) {
      const entry = { at: this.#host.now(), changes: [], set: [], follow: {} };
      this.#pendingLog.push({ seq: this.#host.counters.nextChangeSeq++, entry });
    }
    const last = this.#pendingLog[this.#pendingLog.length - 1]!.entry;
    const keys = bitmaps.keys === null || bitmaps.keys.length > MAX_LOGGED_BITMAP_KEYS ? 0 : bitmaps.keys;
    last.follow = {
      ...last.follow,
      ...(keys === 0 ? { bitmaps: 0 } : keys.length > 0 ? { bitmaps: packBitmapKeys(keys) } : {}),
      ...(bitmaps.journal ? { journal: 1 } : {}),
    };
    for (const { seq, entry } of this.#pendingLog) {
      this.#host.tables.changeLog.putSync(seq, entry);
      trimChangeLog(this.#host.tables, seq);
    }
    this.#pendingLog = [];
  }

  /** Records the keys of in-memory tables' records each write unit puts or removes (its follower notes). */
  #trackRowWrites(): void {
    for (const name of TABLE_NAMES) {
      if (TABLE_SPECS[name].role !== "entity") continue;
      const db = this.#host.tables[name] as unknown as Record<
        "putSync" | "removeSync",
        (...args: unknown[]) => unknown
      >;
      for (const method of ["putSync", "removeSync"] as const) {
        const original = db[method].bind(db);
        db[method] = (...args: unknown[]) => {
          if (this.#inWrite) {
            const keys = this.#rowsWritten.get(name);
            if (keys === undefined) this.#rowsWritten.set(name, [args[0]]);
            else keys.push(args[0]);
          }
          return original(...args);
        };
      }
    }
  }

  /** Fails the write if it wrote a table whose change kind it did not declare (checkChanges). */
  #checkDeclared(unit: WriteUnit): void {
    for (const name of this.#written ?? []) {
      const kind = TABLE_SPECS[name].change;
      if (kind !== null && !unit.changes.has(kind)) {
        throw new StorageError(
          `a write changed table ${name} but its change set names no "${kind}" change: emit an event or call ctx.changed`,
        );
      }
    }
    this.#written?.clear();
  }

  /** Records which tables the running write unit writes (checkChanges): wraps each table's write methods. */
  #trackTableWrites(): Set<TableName> {
    const written = new Set<TableName>();
    for (const name of TABLE_NAMES) {
      const db = this.#host.tables[name] as unknown as Record<
        "putSync" | "removeSync",
        (...args: unknown[]) => unknown
      >;
      for (const method of ["putSync", "removeSync"] as const) {
        const original = db[method].bind(db);
        db[method] = (...args: unknown[]) => {
          if (this.#inWrite) written.add(name);
          return original(...args);
        };
      }
    }
    return written;
  }

  /**
   * After the commit: the change set to change listeners, then the events (audiences
   * computed on the committed state) to event listeners; caches drop what changed
   * before any client hears of it.
   */
  #release(unit: WriteUnit): void {
    if (unit.changeSet !== null) this.#releaseChanges(unit.changeSet);
    if (unit.events.length === 0 || (this.#listeners.size === 0 && this.#replication === null)) return;
    const deliveries: Delivery[] = unit.events.map(([event, audience]) => ({ event, audience: audience() }));
    this.#replication?.deliveries({ seq: unit.seq, deliveries });
    this.dispatch({ seq: unit.seq, deliveries });
  }

  /** A replica releases the event batches of a transaction it applied (replication.ts) to its own queues. */
  releaseReplicated(batch: EventBatch): void {
    for (const listener of this.#listeners) {
      try {
        listener(batch);
      } catch (error) {
        this.#onListenerError(error);
      }
    }
  }

  #releaseChanges(changes: ChangeSet): void {
    for (const listener of this.#changeListeners) {
      try {
        listener(changes);
      } catch (error) {
        this.#onListenerError(error);
      }
    }
  }

  /**
   * Releases changes made to memory only, outside any write (presence pings: the
   * presence table is written later by flushPresence, whose write declares them again).
   */
  changedInMemory(change: Change): void {
    this.#refuseOnFollower("a change held in memory (a presence ping)");
    if (this.#changeListeners.size === 0) return;
    const changes = new ChangeSetBuilder();
    changes.add(change);
    this.#releaseChanges(changes.build(0));
  }

  /** A follower releases the change sets it caught up with (follower.ts), as the writer does after its commits. */
  releaseCaughtUp(changes: ChangeSet): void {
    this.#releaseChanges(changes);
  }

  /** Subscribes to every committed write's change set (`everything` after a failed one); returns the unsubscriber. */
  onChanges(listener: (changes: ChangeSet) => void): () => void {
    this.#changeListeners.add(listener);
    return () => this.#changeListeners.delete(listener);
  }

  /** Hands a batch to every listener; a failing listener is reported, not propagated (the write is committed). */
  dispatch(batch: EventBatch): void {
    this.#refuseOnFollower("an event (typing)");
    for (const listener of this.#listeners) {
      try {
        listener(batch);
      } catch (error) {
        this.#onListenerError(error);
      }
    }
  }

  /** Subscribes to committed events; returns the unsubscribe function. */
  onEvents(listener: (batch: EventBatch) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Called after a failed transaction (derived caches forget what they saw inside it). */
  onRollback(listener: () => void): () => void {
    this.#rollbackListeners.add(listener);
    return () => this.#rollbackListeners.delete(listener);
  }
}
