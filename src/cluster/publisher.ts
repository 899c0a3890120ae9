/**
 * @module cluster/publisher
 * A leader's side of the replicated log (docs/cluster.md §4): each committed
 * transaction its store hands over is appended to the stream, in commit order and
 * pipelined (each append names the sequence it must follow, so JetStream refuses
 * any out of turn); requests wait on `whenStored` before they are answered.
 */
import type { ReplicatedTxn, ReplicationSink } from "../engine/index.js";
import type { ClusterLog } from "./log.js";

interface Waiter {
  readonly seq: number;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

export class LogPublisher implements ReplicationSink {
  readonly #log: ClusterLog;
  readonly #onStored: (seq: number) => void;
  readonly #onFailure: (error: Error) => void;
  #stored: number;
  /** The last sequence handed over to append. */
  #handed: number;
  /** Sequences acknowledged out of order, waiting for the ones before them. */
  readonly #acked = new Set<number>();
  #waiters: Waiter[] = [];
  #failure: Error | null = null;
  readonly #inFlight = new Set<Promise<void>>();

  /** `stored`: the stream's last sequence when this node took the lease. */
  constructor(log: ClusterLog, stored: number, onStored: (seq: number) => void, onFailure: (error: Error) => void) {
    this.#log = log;
    this.#stored = stored;
    this.#handed = stored;
    this.#onStored = onStored;
    this.#onFailure = onFailure;
  }

  /** The last sequence JetStream stored, with every one before it. */
  get stored(): number {
    return this.#stored;
  }

  committed(txn: ReplicatedTxn): void {
    if (this.#failure !== null) return;
    this.#handed = txn.seq;
    const append = this.#log.append(txn).then(
      () => this.#ack(txn.seq),
      (error: unknown) => this.#fail(error instanceof Error ? error : new Error(String(error))),
    );
    this.#inFlight.add(append);
    void append.finally(() => this.#inFlight.delete(append));
  }

  /** Resolves once `seq` and everything before it are stored; rejects if the log refused one. */
  whenStored(seq: number): Promise<void> {
    if (seq <= this.#stored) return Promise.resolve();
    if (this.#failure !== null) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => this.#waiters.push({ seq, resolve, reject }));
  }

  /** Null when every transaction handed over is stored (or storing failed: nothing more is appended). */
  pending(): Promise<void> | null {
    if (this.#failure !== null || this.#handed <= this.#stored) return null;
    return this.whenStored(this.#handed).catch(() => undefined);
  }

  /** Resolves once no append is under way (before the store is reconciled with the stream). */
  async drained(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  #ack(seq: number): void {
    this.#acked.add(seq);
    const before = this.#stored;
    while (this.#acked.delete(this.#stored + 1)) this.#stored++;
    if (this.#stored === before) return;
    this.#onStored(this.#stored);
    const waiting = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiting) {
      if (waiter.seq <= this.#stored) waiter.resolve();
      else this.#waiters.push(waiter);
    }
  }

  #fail(error: Error): void {
    if (this.#failure !== null) return;
    this.#failure = error;
    for (const waiter of this.#waiters.splice(0)) waiter.reject(error);
    this.#onFailure(error);
  }
}
