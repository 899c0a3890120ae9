/**
 * @module replication
 * A cluster's replicated log at the storage level (docs/cluster.md §1, §2, §6).
 *
 * The change log names keys, not values, and only the keys a same-machine follower
 * cannot read itself; a replica on another machine needs every write. So a leader's
 * store captures each LMDB write transaction whole: every table's putSync/removeSync,
 * encoded at the call, plus the value each key had before (its undo record, kept in
 * the transaction until the stream acknowledged it). A replica applies a transaction
 * by key in one LMDB transaction and records the stream position it reached.
 *
 * The `replication` sub-database (outside TABLE_SPECS: it is this node's bookkeeping,
 * neither records nor derived data) holds
 * - "position": { seq, id }, the stream message this store reflects last;
 * - ["undo", seq]: { id, previous, ops } for a transaction this node led and the
 *   stream may not have (deleted once acknowledged).
 */
import { randomUUID } from "node:crypto";
import type { Database } from "lmdb";
import { Packr } from "msgpackr";
import { TABLE_NAMES, TABLE_SPECS, type TableName, type Tables } from "./storage/tables.js";
import type { Audience, Delivery, EngineEvent, EventBatch } from "./events/types.js";
import type { ApiFlag } from "./flags.js";
import { StorageError } from "./errors.js";

/** Maps, Sets and typed arrays as they are (events hold Sets); no shared structures: each message stands alone. */
const codec = new Packr({ structuredClone: true, mapsAsObjects: false });

/** [table, key, msgpack of the value, or null for removed]. */
export type ReplicatedOp = readonly [TableName, unknown, Uint8Array | null];

/**
 * An event as it travels: functions do not, so an event's per-recipient flags
 * (`flagsFor`) are read for each member of its audience at the leader's release.
 */
export interface ReplicatedDelivery {
  readonly event: Record<string, unknown>;
  readonly audience: readonly number[];
  readonly flags?: readonly (readonly [number, readonly ApiFlag[]])[];
}

export interface ReplicatedBatch {
  /** The change-log sequence number of the write that released it. */
  readonly seq: number;
  readonly deliveries: readonly ReplicatedDelivery[];
}

/**
 * A delivery as it travels (to a replica, or to the other workers of one server): the
 * audience read now, while it is valid, and each member's flags. Members without flags
 * are left out of `flags` (unpackDelivery answers [] for them): most recipients of a
 * channel message have none, and a 10,000-member audience would otherwise double in size.
 * `only`: the audience narrowed to these users (those with event queues on the receiving
 * worker; realtime/writer-stream), the flags read for them alone.
 */
export function packDelivery(delivery: Delivery, only?: ReadonlySet<number>): ReplicatedDelivery {
  const audience = only === undefined ? [...delivery.audience] : audienceAmong(delivery.audience, only);
  const event = delivery.event as EngineEvent & { flagsFor?: (userId: number) => readonly ApiFlag[] };
  if (typeof event.flagsFor !== "function") return { event: { ...event }, audience };
  const { flagsFor, ...rest } = event;
  const flags: (readonly [number, readonly ApiFlag[]])[] = [];
  for (const userId of audience) {
    const own = flagsFor(userId);
    if (own.length > 0) flags.push([userId, own]);
  }
  return { event: rest, audience, flags };
}

/**
 * The members of `audience` among `users`, walking the smaller side: an audience is a
 * lazy view (a predicate over candidates), and a reader worker's queues may belong to a
 * few hundred of a 10,000-member channel's subscribers.
 */
function audienceAmong(audience: Audience, users: ReadonlySet<number>): number[] {
  const members: number[] = [];
  if (audience.size <= users.size) {
    for (const id of audience) if (users.has(id)) members.push(id);
  } else {
    for (const id of users) if (audience.has(id)) members.push(id);
  }
  return members;
}

/** One released batch as bytes (the workers of one server pass them over a Unix socket). */
export function encodeBatch(batch: ReplicatedBatch): Uint8Array {
  return codec.pack(batch);
}

export function decodeBatch(bytes: Uint8Array): ReplicatedBatch {
  const raw: unknown = codec.unpack(bytes);
  if (typeof raw !== "object" || raw === null) throw new StorageError("event batch: not an object");
  const { seq, deliveries } = raw as Record<string, unknown>;
  if (typeof seq !== "number" || !Array.isArray(deliveries)) throw new StorageError("event batch: malformed");
  return { seq, deliveries: deliveries as ReplicatedDelivery[] };
}

/** A delivery as the replica's queues take it: the audience a set again, flagsFor from the flags read. */
export function unpackDelivery(delivery: ReplicatedDelivery): Delivery {
  const audience: Audience = new Set(delivery.audience);
  if (delivery.flags === undefined) return { event: delivery.event as unknown as EngineEvent, audience };
  const flags = new Map(delivery.flags);
  const flagsFor = (userId: number): readonly ApiFlag[] => flags.get(userId) ?? [];
  return { event: { ...delivery.event, flagsFor } as unknown as EngineEvent, audience };
}

/** One leader transaction: one stream message. */
export interface ReplicatedTxn {
  /** The stream sequence it was committed as (the leader knows it in advance: §4). */
  readonly seq: number;
  /** Unique per transaction: the stream's message ID (Nats-Msg-Id), compared at reconcile (§6). */
  readonly id: string;
  readonly ops: readonly ReplicatedOp[];
  readonly batches: ReplicatedBatch[];
}

export interface ReplicaPosition {
  readonly seq: number;
  readonly id: string;
}

interface UndoRecord {
  readonly id: string;
  readonly previous: ReplicaPosition;
  /** The keys' values before the transaction, in the transaction's order (applied reversed). */
  readonly ops: readonly ReplicatedOp[];
}

export const REPLICATION_DB = "replication";
/** "position", or ["undo", seq]. */
type ReplicationKey = string | [string, number];
const POSITION_KEY = "position";
const START: ReplicaPosition = { seq: 0, id: "" };

/** What a leader's store hands each committed transaction to (the cluster's publisher). */
export interface ReplicationSink {
  /** Called once per transaction that wrote anything, in commit order, after the write's events were released. */
  committed(txn: ReplicatedTxn): void;
  /**
   * Null when every transaction handed over is stored; else a promise that settles once
   * they are (or once storing failed). The write coordinator holds its next group commit
   * until then, so the writes arriving meanwhile share one transaction (docs/cluster.md §4).
   */
  pending?(): Promise<void> | null;
}

export function openReplicationDb(tables: Tables): Database<unknown, ReplicationKey> {
  return tables.env.openDB<unknown, ReplicationKey>({ name: REPLICATION_DB });
}

export function readPosition(db: Database<unknown, ReplicationKey>): ReplicaPosition {
  const value = db.get(POSITION_KEY) as ReplicaPosition | undefined;
  return value ?? START;
}

export function encodeTxn(txn: ReplicatedTxn): Uint8Array {
  return codec.pack({ seq: txn.seq, id: txn.id, ops: txn.ops, batches: txn.batches });
}

export function decodeTxn(bytes: Uint8Array): ReplicatedTxn {
  const raw: unknown = codec.unpack(bytes);
  if (typeof raw !== "object" || raw === null) throw new StorageError("replicated transaction: not an object");
  const { seq, id, ops, batches } = raw as Record<string, unknown>;
  if (typeof seq !== "number" || typeof id !== "string" || !Array.isArray(ops) || !Array.isArray(batches))
    throw new StorageError("replicated transaction: malformed");
  for (const op of ops as unknown[]) {
    const table: unknown = Array.isArray(op) ? op[0] : undefined;
    if (typeof table !== "string" || !Object.hasOwn(TABLE_SPECS, table))
      throw new StorageError(`replicated transaction: unknown table ${JSON.stringify(table)}`);
  }
  return { seq, id, ops: ops as ReplicatedOp[], batches: batches as ReplicatedBatch[] };
}

/** lmdb-js's asBinary wrapper: a value put as the table's own encoding, bytes already made. */
const BINARY_DATA = "\x10binary-data\x02";

/**
 * The record a put stores: for bytes encoded ahead by the table's encoder (a large
 * move's, storage/message-records), the record they decode to. A replica encodes with
 * its own shared structures, so the leader's bytes must not travel as they are.
 */
function decodedIfBinary(db: WritableTable, value: unknown): unknown {
  const bytes =
    typeof value === "object" && value !== null ? (value as Record<string, unknown>)[BINARY_DATA] : undefined;
  if (!(bytes instanceof Uint8Array)) return value;
  const decoder = (db as unknown as { decoder?: { decode?: (bytes: Uint8Array) => unknown } }).decoder;
  if (typeof decoder?.decode !== "function") throw new StorageError("lmdb-js changed: a table has no decoder");
  return decoder.decode(bytes);
}

type WritableTable = {
  putSync(key: unknown, value: unknown): unknown;
  removeSync(key: unknown): unknown;
  get(key: unknown): unknown;
};

/** Writes ops (a replicated transaction's, or an undo record's) by key; call inside a write transaction. */
function writeOps(tables: Tables, ops: readonly ReplicatedOp[]): void {
  for (const [table, key, value] of ops) {
    const db = tables[table] as unknown as WritableTable;
    if (value === null) db.removeSync(key);
    else db.putSync(key, codec.unpack(value));
  }
}

/**
 * A leader's capture of its transactions (write-coordinator calls begin, end inside
 * the transaction, then committed or aborted, and deliveries for each released batch).
 */
export class ReplicationCapture {
  readonly #tables: Tables;
  readonly #db: Database<unknown, ReplicationKey>;
  readonly #sink: ReplicationSink;
  #position: ReplicaPosition;
  #ops: ReplicatedOp[] | null = null;
  #undo: ReplicatedOp[] = [];
  /** Committed, events being attached; handed to the sink at the next microtask. */
  #committed: ReplicatedTxn[] = [];
  #flushScheduled = false;
  #txn: ReplicatedTxn | null = null;
  /** The position before the running transaction (put back if its commit fails). */
  #beforeTxn: ReplicaPosition = START;
  /** Stream sequences up to here are acknowledged: their undo records can go. */
  #confirmed = 0;
  #undoFloor = 0;

  constructor(tables: Tables, sink: ReplicationSink) {
    this.#tables = tables;
    this.#db = openReplicationDb(tables);
    this.#sink = sink;
    this.#position = readPosition(this.#db);
    this.#undoFloor = this.#position.seq;
    this.#wrap();
  }

  /** The stream sequence of the last committed transaction. */
  get position(): ReplicaPosition {
    return this.#position;
  }

  /** See ReplicationSink.pending: null also while committed transactions wait for the sink (a microtask). */
  pending(): Promise<void> | null {
    return this.#sink.pending?.() ?? null;
  }

  begin(): void {
    this.#ops = [];
    this.#undo = [];
    this.#txn = null;
  }

  /** Inside the transaction, after its last write: its position and undo record, when it wrote anything. */
  end(): void {
    const ops = this.#ops;
    this.#ops = null;
    if (ops === null || ops.every(([table]) => table === "meta")) return;
    const previous = this.#position;
    const position = { seq: previous.seq + 1, id: randomUUID() };
    const undo: UndoRecord = { id: position.id, previous, ops: this.#undo };
    this.#db.putSync(["undo", position.seq], codec.pack(undo));
    this.#db.putSync(POSITION_KEY, position);
    if (this.#confirmed > this.#undoFloor) {
      // Listed first: keys are removed from the range being read.
      const done = [...this.#db.getKeys({ start: ["undo", this.#undoFloor], end: ["undo", this.#confirmed + 1] })];
      for (const key of done) this.#db.removeSync(key);
      this.#undoFloor = this.#confirmed;
    }
    this.#txn = { seq: position.seq, id: position.id, ops, batches: [] };
    this.#beforeTxn = previous;
    this.#position = position;
  }

  committed(): void {
    const txn = this.#txn;
    this.#txn = null;
    if (txn === null) return;
    this.#committed.push(txn);
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    queueMicrotask(() => {
      this.#flushScheduled = false;
      for (const done of this.#committed.splice(0)) this.#sink.committed(done);
    });
  }

  aborted(): void {
    this.#ops = null;
    this.#undo = [];
    if (this.#txn !== null) this.#position = this.#beforeTxn;
    this.#txn = null;
  }

  /** A released event batch joins the transaction committed last (its events are released right after). */
  deliveries(batch: EventBatch): void {
    const txn = this.#committed[this.#committed.length - 1];
    if (txn === undefined || batch.seq === 0) return;
    txn.batches.push({ seq: batch.seq, deliveries: batch.deliveries.map((d) => packDelivery(d)) });
  }

  /** The stream stored transactions up to `seq`: their undo records go with the next transaction. */
  confirm(seq: number): void {
    this.#confirmed = Math.max(this.#confirmed, seq);
  }

  /** Records every table write while a transaction runs (key 0 of uint32 tables: msgpackr's own structures). */
  #wrap(): void {
    for (const name of TABLE_NAMES) {
      const db = this.#tables[name] as unknown as WritableTable;
      const sharedStructures = TABLE_SPECS[name].keys === "id";
      const put = db.putSync.bind(db);
      const remove = db.removeSync.bind(db);
      const get = db.get.bind(db);
      const record = (key: unknown, value: Uint8Array | null): void => {
        if (this.#ops === null || (sharedStructures && key === 0)) return;
        const before = get(key);
        this.#undo.push([name, key, before === undefined ? null : codec.pack(before)]);
        this.#ops.push([name, key, value]);
      };
      db.putSync = (key: unknown, value: unknown, ...rest: unknown[]) => {
        record(key, codec.pack(decodedIfBinary(db, value)));
        return (put as (...args: unknown[]) => unknown)(key, value, ...rest);
      };
      db.removeSync = (key: unknown, ...rest: unknown[]) => {
        record(key, null);
        return (remove as (...args: unknown[]) => unknown)(key, ...rest);
      };
    }
  }
}

/** A replica's side: apply stream messages, and undo what this node led but the stream lacks (§2, §6). */
export class ReplicaApplier {
  readonly #tables: Tables;
  readonly #db: Database<unknown, ReplicationKey>;

  constructor(tables: Tables) {
    this.#tables = tables;
    this.#db = openReplicationDb(tables);
  }

  get position(): ReplicaPosition {
    return readPosition(this.#db);
  }

  /**
   * One LMDB transaction (one fsync) for consecutive stream messages, in order: their ops
   * by key and the last one's position. Several messages that arrived together cost a
   * follower one commit, not one each (docs/cluster.md §2).
   */
  apply(txns: readonly ReplicatedTxn[]): void {
    let at = this.position.seq;
    for (const txn of txns) {
      if (txn.seq !== at + 1)
        throw new StorageError(`replicated transaction ${txn.seq} does not follow position ${at}`);
      at = txn.seq;
    }
    const last = txns[txns.length - 1];
    if (last === undefined) return;
    this.#tables.env.transactionSync(() => {
      for (const txn of txns) writeOps(this.#tables, txn.ops);
      this.#db.putSync(POSITION_KEY, { seq: last.seq, id: last.id });
    });
  }

  /** Undoes the transaction at the current position; false when there is no undo record for it. */
  undoLast(): boolean {
    const position = this.position;
    const raw = this.#db.get(["undo", position.seq]);
    if (!(raw instanceof Uint8Array)) return false;
    const undo = codec.unpack(raw) as UndoRecord;
    if (undo.id !== position.id) return false;
    this.#tables.env.transactionSync(() => {
      writeOps(this.#tables, [...undo.ops].reverse());
      this.#db.removeSync(["undo", position.seq]);
      this.#db.putSync(POSITION_KEY, undo.previous);
    });
    return true;
  }

  /** Undo records of transactions the stream has (at or below `seq`) are no longer needed. */
  dropUndoThrough(seq: number): void {
    this.#tables.env.transactionSync(() => {
      const done = [...this.#db.getKeys({ start: ["undo", 0], end: ["undo", seq + 1] })];
      for (const key of done) this.#db.removeSync(key);
    });
  }
}
