/**
 * @module realtime/writer-stream
 * The writer worker's released event batches, to every reader worker's own event
 * queues (realtime/hub), over a Unix socket in the supervisor's private directory.
 *
 * The writer packs each batch once, as a cluster ships them (engine/replication's
 * packDelivery: the audience read at the release, each member's flags), and writes the
 * same frame to every connected reader: ephemeral batches too (typing, presence; seq 0).
 * A reader releases each to its store (Store.releaseWriterBatch), which catches up with
 * the change log to the batch's write before its hub decides who gets it.
 *
 * Frames: a 4-byte big-endian length, then one byte of kind (HELLO, BATCH or END) and
 * the payload. HELLO comes first on each connection: from there on the reader gets every
 * batch the writer releases, so it takes registrations only once it has one. END is the
 * last frame of a writer that stops cleanly, after its store released its last batch:
 * a reader that got it holds every event its queues should (they may be saved).
 *
 * A reader that falls behind (the writer holding more than MAX_BUFFERED_BYTES for it)
 * is cut off rather than let the writer's memory grow: like one whose writer died, it
 * can no longer tell what its queues missed, drops them (clients register again) and
 * connects again.
 */
import { chmodSync, rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import {
  decodeBatch,
  encodeBatch,
  packDelivery,
  type EventBatch,
  type ReplicatedBatch,
  type Store,
} from "../engine/index.js";

const HELLO = 1;
const BATCH = 2;
/** The writer stopped after its last batch (rather than died): the reader has every batch. */
const END = 3;
/** A reader this far behind is cut off (its queues are dropped and its clients register again). */
const MAX_BUFFERED_BYTES = 256 * 1024 * 1024;
/** Frames larger than this are not ours: the connection is dropped. */
const MAX_FRAME_BYTES = 1024 * 1024 * 1024;
const RECONNECT_MS = 200;

function frame(kind: number, payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + payload.length);
  out.writeUInt32BE(1 + payload.length, 0);
  out[4] = kind;
  out.set(payload, 5);
  return out;
}

/** The writer's side: every batch its store releases, to every connected reader. */
export class EventBroadcaster {
  readonly #server: Server;
  readonly #readers = new Set<Socket>();
  readonly #unsubscribe: () => void;
  #sent = 0;

  private constructor(server: Server, store: Store) {
    this.#server = server;
    server.on("connection", (socket) => {
      socket.on("error", () => socket.destroy());
      socket.on("close", () => this.#readers.delete(socket));
      // Readers only listen: anything they send is ignored.
      socket.on("data", () => undefined);
      this.#readers.add(socket);
      socket.write(frame(HELLO, new Uint8Array(0)));
    });
    this.#unsubscribe = store.onEvents((batch) => this.#send(batch));
  }

  /** Listens on `socketPath` (replacing a file a killed writer left). */
  static async listen(socketPath: string, store: Store): Promise<EventBroadcaster> {
    rmSync(socketPath, { force: true });
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath, () => {
        server.off("error", reject);
        resolve();
      });
    });
    chmodSync(socketPath, 0o600);
    return new EventBroadcaster(server, store);
  }

  /** Readers connected now. */
  get readers(): number {
    return this.#readers.size;
  }

  /** Batches written to the readers so far (each once, whatever their number). */
  get batchesSent(): number {
    return this.#sent;
  }

  /** Stops: call once the store released its last batch; readers see the end of the stream. */
  close(): void {
    this.#unsubscribe();
    this.#server.close();
    for (const socket of this.#readers) socket.end(frame(END, new Uint8Array(0)));
  }

  /** Synchronous at the release: an audience is valid only then (engine/events/types' Audience). */
  #send(batch: EventBatch): void {
    if (this.#readers.size === 0) return;
    const packed: ReplicatedBatch = { seq: batch.seq, deliveries: batch.deliveries.map(packDelivery) };
    const bytes = frame(BATCH, encodeBatch(packed));
    this.#sent++;
    for (const socket of this.#readers) {
      if (socket.writableLength > MAX_BUFFERED_BYTES) socket.destroy();
      else socket.write(bytes);
    }
  }
}

export interface SubscriberHandlers {
  /** Each batch, in the writer's order. */
  readonly batch: (batch: ReplicatedBatch) => void;
  /** Connected and greeted: every later batch arrives. */
  readonly subscribed: () => void;
  /** The stream ended or broke (the writer stopped or died, or cut this reader off): batches may be missing. */
  readonly lost: () => void;
}

/** A reader's side: connects (and connects again after a loss) to the writer's stream. */
export class EventSubscriber {
  readonly #socketPath: string;
  readonly #handlers: SubscriberHandlers;
  #socket: Socket | null = null;
  #subscribed = false;
  #closed = false;
  #endedCleanly = false;
  #received = 0;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #ended: (() => void)[] = [];

  constructor(socketPath: string, handlers: SubscriberHandlers) {
    this.#socketPath = socketPath;
    this.#handlers = handlers;
    this.#connect();
  }

  /** Batches received so far. */
  get batchesReceived(): number {
    return this.#received;
  }

  /** The last stream ended with the writer's END (it stopped cleanly after its last batch). */
  get endedCleanly(): boolean {
    return this.#endedCleanly;
  }

  /** True while every batch the writer releases arrives. */
  get subscribed(): boolean {
    return this.#subscribed;
  }

  /** Resolves once subscribed (or closed). */
  whenSubscribed(): Promise<void> {
    if (this.#subscribed || this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      const check = setInterval(() => {
        if (!this.#subscribed && !this.#closed) return;
        clearInterval(check);
        resolve();
      }, 20);
    });
  }

  /**
   * Resolves when the stream ends, true when the writer ended it cleanly after its last
   * batch (every event reached this reader), false when it broke or `ms` passed first.
   */
  ended(ms: number): Promise<boolean> {
    if (this.#socket === null) return Promise.resolve(this.#endedCleanly);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      timer.unref();
      this.#ended.push(() => {
        clearTimeout(timer);
        resolve(this.#endedCleanly);
      });
    });
  }

  close(): void {
    this.#closed = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#socket?.destroy();
    this.#socket = null;
  }

  #connect(): void {
    if (this.#closed) return;
    const socket = connect(this.#socketPath);
    this.#socket = socket;
    let pending: Buffer = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      let at = 0;
      while (pending.length - at >= 4) {
        const length = pending.readUInt32BE(at);
        if (length === 0 || length > MAX_FRAME_BYTES) {
          socket.destroy();
          return;
        }
        if (pending.length - at - 4 < length) break;
        const kind = pending[at + 4];
        const payload = pending.subarray(at + 5, at + 4 + length);
        at += 4 + length;
        if (kind === END) this.#endedCleanly = this.#subscribed;
        else if (kind === HELLO) {
          this.#endedCleanly = false;
          this.#subscribed = true;
          this.#handlers.subscribed();
        } else if (kind === BATCH && this.#subscribed) {
          this.#received++;
          this.#handlers.batch(decodeBatch(payload));
        }
      }
      pending = at === pending.length ? Buffer.alloc(0) : pending.subarray(at);
    });
    socket.on("error", () => socket.destroy());
    socket.on("close", () => {
      if (this.#socket === socket) this.#socket = null;
      const was = this.#subscribed;
      this.#subscribed = false;
      if (was) this.#handlers.lost();
      for (const resolve of this.#ended.splice(0)) resolve();
      if (!this.#closed) this.#timer = setTimeout(() => this.#connect(), RECONNECT_MS);
    });
  }
}
