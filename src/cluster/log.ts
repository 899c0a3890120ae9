/**
 * @module cluster/log
 * A cluster's shared state in NATS JetStream (docs/cluster.md): the replicated log (a
 * stream, one message per leader transaction) and the leader lease (a key-value
 * bucket whose entries expire). NATS does the consensus; this module only names the
 * stream and bucket and wraps the few calls a node makes.
 */
import {
  connect,
  DeliverPolicy,
  DiscardPolicy,
  nanos,
  RetentionPolicy,
  StorageType,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type KV,
  type NatsConnection,
} from "nats";
import { decodeTxn, encodeTxn, type ReplicatedTxn } from "../engine/index.js";
import { ObjectStoreUploads } from "./uploads.js";

export const STREAM = "PARLEY_LOG";
export const SUBJECT = "parley.log";
export const LEASE_BUCKET = "parley_lease";
const LEASE_KEY = "leader";

export interface ClusterLogOptions {
  readonly url: string;
  /** This node's name (the NATS connection's name, and the lease holder's). */
  readonly node: string;
  /** Messages the stream keeps (oldest discarded): how far behind a node may fall before it must bootstrap. */
  readonly maxMessages: number;
  /** The lease's time to live (ms). */
  readonly leaseTtlMs: number;
  /** Told when the NATS connection drops or comes back. */
  readonly onConnection?: (connected: boolean) => void;
}

/** Who holds the lease: the leader's node name and its advertised base URL. */
export interface Lease {
  readonly node: string;
  readonly url: string;
  readonly revision: number;
}

export interface StreamRange {
  /** The first sequence still stored (1 on a fresh stream; last + 1 when empty). */
  readonly first: number;
  readonly last: number;
}

function isLease(value: unknown): value is { node: string; url: string } {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Record<string, unknown>)["node"] === "string" &&
    typeof (value as Record<string, unknown>)["url"] === "string"
  );
}

export class ClusterLog {
  readonly #nc: NatsConnection;
  readonly #jsm: JetStreamManager;
  readonly #js: JetStreamClient;
  readonly #kv: KV;
  /** Uploaded files' bytes, for every node. */
  readonly uploads: ObjectStoreUploads;
  #connected = true;

  private constructor(
    nc: NatsConnection,
    jsm: JetStreamManager,
    js: JetStreamClient,
    kv: KV,
    uploads: ObjectStoreUploads,
  ) {
    this.#nc = nc;
    this.#jsm = jsm;
    this.#js = js;
    this.#kv = kv;
    this.uploads = uploads;
  }

  /** Connects, and creates the stream and the lease bucket when they do not exist yet. */
  static async open(options: ClusterLogOptions): Promise<ClusterLog> {
    const nc = await connect({
      servers: options.url,
      name: `parley ${options.node}`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      pingInterval: 2_000,
      maxPingOut: 2,
    });
    try {
      const jsm = await nc.jetstreamManager();
      try {
        await jsm.streams.info(STREAM);
      } catch {
        await jsm.streams.add({
          name: STREAM,
          subjects: [SUBJECT],
          storage: StorageType.File,
          retention: RetentionPolicy.Limits,
          discard: DiscardPolicy.Old,
          max_msgs: options.maxMessages,
          duplicate_window: nanos(120_000),
        });
      }
      const js = nc.jetstream();
      const kv = await js.views.kv(LEASE_BUCKET, { history: 1, ttl: options.leaseTtlMs });
      const log = new ClusterLog(nc, jsm, js, kv, await ObjectStoreUploads.open(js));
      void log.#watchStatus(options.onConnection);
      return log;
    } catch (error) {
      await nc.close();
      throw error;
    }
  }

  get connected(): boolean {
    return this.#connected && !this.#nc.isClosed();
  }

  async #watchStatus(onConnection?: (connected: boolean) => void): Promise<void> {
    for await (const status of this.#nc.status()) {
      if (status.type === "disconnect") this.#connected = false;
      else if (status.type === "reconnect") this.#connected = true;
      else continue;
      onConnection?.(this.#connected);
    }
  }

  async range(): Promise<StreamRange> {
    const info = await this.#jsm.streams.info(STREAM);
    return { first: info.state.first_seq, last: info.state.last_seq };
  }

  /** The stored message `seq`, decoded; null when the stream does not hold it. */
  async transactionAt(seq: number): Promise<ReplicatedTxn | null> {
    try {
      const message = await this.#jsm.streams.getMessage(STREAM, { seq });
      return decodeTxn(message.data);
    } catch (error) {
      if (error instanceof Error && /no message found|not found/i.test(error.message)) return null;
      throw error;
    }
  }

  /**
   * Appends a leader transaction, refused unless the stream's last sequence is the one
   * before it (docs/cluster.md §4: two leaders cannot both append). Resolves once
   * JetStream stored it.
   */
  async append(txn: ReplicatedTxn): Promise<void> {
    const ack = await this.#js.publish(SUBJECT, encodeTxn(txn), {
      msgID: txn.id,
      expect: { lastSequence: txn.seq - 1 },
      timeout: 5_000,
    });
    if (ack.seq !== txn.seq)
      throw new Error(`the log stored transaction ${txn.seq} as ${ack.seq}${ack.duplicate ? " (duplicate)" : ""}`);
  }

  /** Delivers every message from `from` on, in order, until stopped. */
  async follow(from: number, apply: (txn: ReplicatedTxn, seq: number) => void): Promise<{ stop(): void }> {
    const consumer = await this.#js.consumers.get(STREAM, {
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: from,
    });
    const messages: ConsumerMessages = await consumer.consume({ max_messages: 256 });
    let stopped = false;
    void (async () => {
      for await (const message of messages) {
        if (stopped) break;
        apply(decodeTxn(message.data), message.seq);
      }
    })();
    return {
      stop: () => {
        stopped = true;
        messages.stop();
      },
    };
  }

  async lease(): Promise<Lease | null> {
    const entry = await this.#kv.get(LEASE_KEY);
    if (entry === null || entry.operation !== "PUT") return null;
    const value: unknown = entry.json();
    return isLease(value) ? { node: value.node, url: value.url, revision: entry.revision } : null;
  }

  /** Takes the lease if nobody holds it: its revision, or null when another node does. */
  async acquire(node: string, url: string): Promise<number | null> {
    try {
      return await this.#kv.create(LEASE_KEY, JSON.stringify({ node, url }));
    } catch (error) {
      if (error instanceof Error && /wrong last sequence|key exists/i.test(error.message)) return null;
      throw error;
    }
  }

  /** Renews the lease held at `revision`; throws when another node took it meanwhile. */
  renew(node: string, url: string, revision: number): Promise<number> {
    return this.#kv.update(LEASE_KEY, JSON.stringify({ node, url }), revision);
  }

  /** Gives the lease up (a graceful stop), when still held at `revision`. */
  async release(revision: number): Promise<void> {
    await this.#kv.delete(LEASE_KEY, { previousSeq: revision }).catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.#nc.close();
  }
}
