/**
 * @module cluster/log
 * A cluster's shared state in NATS JetStream (docs/cluster.md): the replicated log (a
 * stream, one message per leader transaction) and the leader lease (a key-value
 * bucket whose entries expire). NATS does the consensus; this module only names the
 * stream and bucket and wraps the few calls a node makes.
 *
 * An entry larger than one NATS message (the server's max_payload) is stored in parts
 * on a second stream first; the log then gets one small entry naming them, appended
 * only once every part is stored (docs/cluster.md §7), so a reader never sees half an
 * entry and a leader that dies mid-parts leaves nothing in the log.
 */
import {
  connect,
  headers,
  DeliverPolicy,
  DiscardPolicy,
  nanos,
  RetentionPolicy,
  StorageType,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type KV,
  type MsgHdrs,
  type NatsConnection,
  type PubAck,
} from "nats";
import { decodeTxn, encodeTxn, type ReplicatedTxn } from "../engine/index.js";
import { ObjectStoreUploads } from "./uploads.js";

export const STREAM = "PARLEY_LOG";
export const SUBJECT = "parley.log";
export const LEASE_BUCKET = "parley_lease";
/** The parts of entries too large for one message: subject `parley.logpart.<entry id>`. */
export const PARTS_STREAM = "PARLEY_LOG_PARTS";
const PARTS_SUBJECT = "parley.logpart";
/** On a log entry stored in parts: how many; its data is then a PartsPointer. */
const PARTS_HEADER = "Parley-Parts";
/** Room left in each message for the headers (message ID, expected sequence, parts count). */
const HEADER_ROOM = 2_048;
const PUBLISH_TIMEOUT_MS = 5_000;
/** Log messages a follower applies in one LMDB transaction at most (and pulls at a time). */
const MAX_APPLY_BATCH = 256;
const LEASE_KEY = "leader";

export interface ClusterLogOptions {
  readonly url: string;
  /** This node's name (the NATS connection's name, and the lease holder's). */
  readonly node: string;
  /** Messages the stream keeps (oldest discarded): how far behind a node may fall before it must bootstrap. */
  readonly maxMessages: number;
  /** The lease's time to live (ms). */
  readonly leaseTtlMs: number;
  /** Bytes the parts stream keeps (oldest discarded): how far back large entries can be read. */
  readonly maxPartBytes: number;
  /** Told when the NATS connection drops or comes back. */
  readonly onConnection?: (connected: boolean) => void;
}

/** Who holds the lease: the leader's node name and its advertised base URL. */
export interface Lease {
  readonly node: string;
  readonly url: string;
  readonly revision: number;
}

/** A log message's transaction and its stream sequence (the same, once checked). */
export interface LogEntry {
  readonly txn: ReplicatedTxn;
  readonly seq: number;
}

export interface StreamRange {
  /** The first sequence still stored (1 on a fresh stream; last + 1 when empty). */
  readonly first: number;
  readonly last: number;
}

/** A log entry stored in parts: the parts stream's sequences, in order, and the whole entry's length. */
interface PartsPointer {
  readonly seq: number;
  readonly id: string;
  readonly parts: readonly number[];
  readonly bytes: number;
}

function isPartsPointer(value: unknown): value is PartsPointer {
  if (typeof value !== "object" || value === null) return false;
  const { seq, id, parts, bytes } = value as Record<string, unknown>;
  return (
    typeof seq === "number" &&
    typeof id === "string" &&
    typeof bytes === "number" &&
    Array.isArray(parts) &&
    parts.every((part) => Number.isInteger(part))
  );
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
  /** Resolves once the previous append went out: appends leave in commit order (each names its predecessor). */
  #sending: Promise<void> = Promise.resolve();

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
      try {
        await jsm.streams.info(PARTS_STREAM);
      } catch {
        await jsm.streams.add({
          name: PARTS_STREAM,
          subjects: [`${PARTS_SUBJECT}.*`],
          storage: StorageType.File,
          retention: RetentionPolicy.Limits,
          discard: DiscardPolicy.Old,
          max_bytes: options.maxPartBytes,
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

  /** The stored message `seq`, decoded (its parts read when stored in parts); null when the stream does not hold it. */
  async transactionAt(seq: number): Promise<ReplicatedTxn | null> {
    try {
      const message = await this.#jsm.streams.getMessage(STREAM, { seq });
      return await this.#entry(message.data, message.header);
    } catch (error) {
      if (error instanceof Error && /no message found|not found/i.test(error.message)) return null;
      throw error;
    }
  }

  /** The ID of the stored message `seq` (without reading its parts); null when the stream does not hold it. */
  async idAt(seq: number): Promise<string | null> {
    try {
      const message = await this.#jsm.streams.getMessage(STREAM, { seq });
      if (message.header.get(PARTS_HEADER) === "") return decodeTxn(message.data).id;
      const pointer: unknown = message.json();
      return isPartsPointer(pointer) ? pointer.id : null;
    } catch (error) {
      if (error instanceof Error && /no message found|not found/i.test(error.message)) return null;
      throw error;
    }
  }

  /** A log message's transaction: its data, or the parts its pointer names, put together. */
  async #entry(data: Uint8Array, header: MsgHdrs | undefined): Promise<ReplicatedTxn> {
    if ((header?.get(PARTS_HEADER) ?? "") === "") return decodeTxn(data);
    const pointer: unknown = JSON.parse(new TextDecoder().decode(data));
    if (!isPartsPointer(pointer)) throw new Error("a log entry stored in parts names them wrongly");
    const subject = `${PARTS_SUBJECT}.${pointer.id}`;
    const whole = new Uint8Array(pointer.bytes);
    let at = 0;
    for (const seq of pointer.parts) {
      const part = await this.#jsm.streams.getMessage(PARTS_STREAM, { seq }).catch((error: unknown) => {
        throw new Error(
          `log sequence ${pointer.seq} is stored in parts and part ${seq} is gone (${String(error)}): ` +
            "this node fell too far behind; bootstrap it again from a backup of another node",
        );
      });
      if (part.subject !== subject || at + part.data.length > whole.length)
        throw new Error(`log sequence ${pointer.seq}: part ${seq} does not belong to it`);
      whole.set(part.data, at);
      at += part.data.length;
    }
    if (at !== whole.length)
      throw new Error(`log sequence ${pointer.seq}: its parts hold ${at} of ${whole.length} bytes`);
    const txn = decodeTxn(whole);
    if (txn.id !== pointer.id || txn.seq !== pointer.seq)
      throw new Error(`log sequence ${pointer.seq}: its parts hold another transaction`);
    return txn;
  }

  /**
   * Appends a leader transaction, refused unless the stream's last sequence is the one
   * before it (docs/cluster.md §4: two leaders cannot both append). Resolves once
   * JetStream stored it. One larger than a NATS message is stored in parts first (§7).
   */
  async append(txn: ReplicatedTxn): Promise<void> {
    const bytes = encodeTxn(txn);
    // Wrapped: the chain waits for the publish to leave, not for its acknowledgement.
    const issued = this.#sending.then(() => this.#issue(txn, bytes));
    this.#sending = issued.then(
      () => undefined,
      () => undefined,
    );
    const ack = await (await issued).ack;
    if (ack.seq !== txn.seq)
      throw new Error(`the log stored transaction ${txn.seq} as ${ack.seq}${ack.duplicate ? " (duplicate)" : ""}`);
  }

  async #issue(txn: ReplicatedTxn, bytes: Uint8Array): Promise<{ ack: Promise<PubAck> }> {
    const options = { msgID: txn.id, expect: { lastSequence: txn.seq - 1 }, timeout: PUBLISH_TIMEOUT_MS };
    const room = this.#nc.info === undefined ? 0 : this.#nc.info.max_payload - HEADER_ROOM;
    if (room <= 0 || bytes.length <= room) return { ack: this.#js.publish(SUBJECT, bytes, options) };
    const subject = `${PARTS_SUBJECT}.${txn.id}`;
    const stored = [];
    for (let at = 0, n = 0; at < bytes.length; at += room, n++)
      stored.push(
        this.#js.publish(subject, bytes.subarray(at, at + room), {
          msgID: `${txn.id}.${n}`,
          timeout: PUBLISH_TIMEOUT_MS,
        }),
      );
    const parts = (await Promise.all(stored)).map((ack) => ack.seq);
    const pointer: PartsPointer = { seq: txn.seq, id: txn.id, parts, bytes: bytes.length };
    const header = headers();
    header.set(PARTS_HEADER, String(parts.length));
    const data = new TextEncoder().encode(JSON.stringify(pointer));
    return { ack: this.#js.publish(SUBJECT, data, { ...options, headers: header }) };
  }

  /**
   * Delivers every message from `from` on, in order, until stopped; `fail` is told when
   * one cannot be read (and nothing after it is delivered). Messages read in one turn of
   * the event loop are delivered together (at most MAX_APPLY_BATCH), so that a follower
   * applies them in one LMDB transaction (docs/cluster.md §2).
   */
  async follow(
    from: number,
    apply: (entries: readonly LogEntry[]) => void,
    fail: (seq: number, error: Error) => void,
  ): Promise<{ stop(): void }> {
    const consumer = await this.#js.consumers.get(STREAM, {
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: from,
    });
    const messages: ConsumerMessages = await consumer.consume({ max_messages: MAX_APPLY_BATCH });
    let stopped = false;
    let read: LogEntry[] = [];
    let scheduled = false;
    const deliver = (): void => {
      scheduled = false;
      const entries = read;
      read = [];
      if (!stopped && entries.length > 0) apply(entries);
    };
    void (async () => {
      for await (const message of messages) {
        if (stopped) break;
        let txn: ReplicatedTxn;
        try {
          txn = await this.#entry(message.data, message.headers);
        } catch (error) {
          stopped = true;
          messages.stop();
          fail(message.seq, error instanceof Error ? error : new Error(String(error)));
          break;
        }
        if (stopped) break;
        read.push({ txn, seq: message.seq });
        if (read.length >= MAX_APPLY_BATCH) deliver();
        else if (!scheduled) {
          scheduled = true;
          setImmediate(deliver);
        }
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
