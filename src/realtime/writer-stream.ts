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
 * A batch carries, of each delivery's audience, only the users the reader named (those
 * with event queues there, and those registering one): packing and sending whole
 * audiences cost the writer a walk of every member of a 10,000-member channel for each
 * reaction, and the reader as much to decode. The reader names its users right after
 * HELLO (SELECT; until then the writer sends whole audiences), each new one before its
 * registration's snapshot (WATCH, acknowledged by WATCHED in the stream: every batch
 * after the acknowledgement has the user, and every batch before it was of a write the
 * snapshot, taken after the acknowledgement, already holds), and drops those whose
 * queues went (UNWATCH) from time to time.
 *
 * Queues move from the writer to the reader their polls reach (`--workers 2` only: with
 * more readers a queue could have moved to another): a reader polled for a writer's queue
 * it does not hold asks for it (ADOPT); the writer, between two batches, takes it out of its
 * hub, names its user in this reader's audiences, and answers with the queue and its events
 * (ADOPTED) or that it has none (REFUSED). The reader puts it in its hub at that point of the
 * stream, so it takes exactly the batches after those the writer's copy took.
 *
 * A reader that falls behind (the writer holding more than MAX_BUFFERED_BYTES for it)
 * is cut off rather than let the writer's memory grow: like one whose writer died, it
 * can no longer tell what its queues missed, drops them (clients register again) and
 * connects again.
 */
import { chmodSync, rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import type { SavedQueue } from "./queue.js";
import { parseHandedQueue } from "./persist.js";
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
/** Writer to reader: the WATCH of this token (u32) is in effect for every later batch. */
const WATCHED = 4;
/** Reader to writer: from now on, audiences narrowed to these users (u32 each). */
const SELECT = 5;
/** Reader to writer: a token (u32), then users (u32 each) to add to its audiences. */
const WATCH = 6;
/** Reader to writer: users (u32 each) to leave out of its audiences again. */
const UNWATCH = 7;
/** Reader to writer: a token (u32), then a queue ID: hand that queue over. */
const ADOPT = 8;
/** Writer to reader: the token (u32), then the queue as JSON (a SavedQueue): it is the reader's from here on. */
const ADOPTED = 9;
/** Writer to reader: the token (u32): the writer holds no such queue. */
const REFUSED = 10;
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

function u32s(values: readonly number[]): Buffer {
  const out = Buffer.allocUnsafe(4 * values.length);
  values.forEach((value, i) => out.writeUInt32BE(value, 4 * i));
  return out;
}

function readU32s(payload: Buffer): number[] {
  const values: number[] = [];
  for (let at = 0; at + 4 <= payload.length; at += 4) values.push(payload.readUInt32BE(at));
  return values;
}

/**
 * Calls `onFrame` with each whole frame the socket brings (kind, payload); a frame
 * whose length is impossible destroys the socket.
 */
function readFrames(socket: Socket, onFrame: (kind: number, payload: Buffer) => void): void {
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
      const kind = pending[at + 4]!;
      const payload = pending.subarray(at + 5, at + 4 + length);
      at += 4 + length;
      onFrame(kind, payload);
    }
    pending = at === pending.length ? Buffer.alloc(0) : pending.subarray(at);
  });
}

/** What the writer knows of one connected reader: the users it named, or null (whole audiences). */
interface ReaderLink {
  users: Set<number> | null;
  /** Frames written in this turn are held until its end: one writev for the batches a group commit releases. */
  corked: boolean;
}

/** Writes a frame; the frames of one turn go out together, in order (batches and acknowledgements alike). */
function writeFrame(socket: Socket, link: ReaderLink, bytes: Buffer): void {
  if (!link.corked) {
    link.corked = true;
    socket.cork();
    process.nextTick(() => {
      link.corked = false;
      socket.uncork();
    });
  }
  socket.write(bytes);
}

/** The writer's side: every batch its store releases, to every connected reader. */
export class EventBroadcaster {
  readonly #server: Server;
  readonly #readers = new Map<Socket, ReaderLink>();
  readonly #unsubscribe: () => void;
  #sent = 0;
  /** Takes a queue out of the writer's hub for a reader (null: none); set once the hub exists. */
  handOver: ((queueId: string) => SavedQueue | null) | null = null;

  private constructor(server: Server, store: Store) {
    this.#server = server;
    server.on("connection", (socket) => {
      socket.on("error", () => socket.destroy());
      const link: ReaderLink = { users: null, corked: false };
      socket.on("close", () => this.#readers.delete(socket));
      readFrames(socket, (kind, payload) => {
        if (kind === SELECT) link.users = new Set(readU32s(payload));
        else if (kind === ADOPT) this.#adopt(socket, link, payload);
        else if (kind === WATCH) {
          const [token, ...users] = readU32s(payload);
          if (token === undefined) return;
          for (const id of users) link.users?.add(id);
          writeFrame(socket, link, frame(WATCHED, u32s([token])));
        } else if (kind === UNWATCH) for (const id of readU32s(payload)) link.users?.delete(id);
      });
      this.#readers.set(socket, link);
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
    for (const socket of this.#readers.keys()) socket.end(frame(END, new Uint8Array(0)));
  }

  /**
   * Between two batches (stream frames go out in order): the reader's copy of the queue
   * takes every batch after this point, and the writer's hub none.
   */
  #adopt(socket: Socket, link: ReaderLink, payload: Buffer): void {
    if (payload.length < 4) return;
    const token = payload.readUInt32BE(0);
    const saved = this.handOver?.(payload.subarray(4).toString("utf8")) ?? null;
    if (saved === null) {
      writeFrame(socket, link, frame(REFUSED, u32s([token])));
      return;
    }
    link.users?.add(saved.userId);
    const json = Buffer.from(JSON.stringify(saved));
    writeFrame(socket, link, frame(ADOPTED, Buffer.concat([u32s([token]), json])));
  }

  /** Synchronous at the release: an audience is valid only then (engine/events/types' Audience). */
  #send(batch: EventBatch): void {
    if (this.#readers.size === 0) return;
    const pack = (only?: ReadonlySet<number>): Buffer => {
      const packed: ReplicatedBatch = {
        seq: batch.seq,
        deliveries: batch.deliveries.map((d) => packDelivery(d, only)),
      };
      return frame(BATCH, encodeBatch(packed));
    };
    let whole: Buffer | null = null;
    this.#sent++;
    for (const [socket, link] of this.#readers) {
      if (socket.writableLength > MAX_BUFFERED_BYTES) socket.destroy();
      else writeFrame(socket, link, link.users === null ? (whole ??= pack()) : pack(link.users));
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
  /** A queue the writer handed over, at its point in the stream (before the next batch). */
  readonly adopted?: (queue: SavedQueue) => void;
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
  /** The users named to the writer on this connection, or null before select (the writer sends whole audiences). */
  #named: Set<number> | null = null;
  /** Registrations under way, by user: their users stay named until they end. */
  readonly #registering = new Map<number, number>();
  /** The acknowledgement each user's WATCH awaits, and each token's resolver. */
  readonly #awaiting = new Map<number, Promise<void>>();
  readonly #acks = new Map<number, () => void>();
  #nextToken = 1;
  /** Queues asked of the writer (ADOPT), by ID: resolved once it answered (or the stream is gone). */
  readonly #adopting = new Map<string, { token: number; done: Promise<void> }>();
  readonly #adoptions = new Map<number, () => void>();

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

  /**
   * For a registration of `userId` here: `ready` resolves once every later batch names
   * the user in its audiences (take the snapshot after it); `release` when the
   * registration is over (its queue, if made, keeps the user named).
   */
  watch(userId: number): { ready: Promise<void>; release(): void } {
    this.#registering.set(userId, (this.#registering.get(userId) ?? 0) + 1);
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      const left = (this.#registering.get(userId) ?? 1) - 1;
      if (left > 0) this.#registering.set(userId, left);
      else this.#registering.delete(userId);
    };
    return { ready: this.#name(userId), release };
  }

  /**
   * Narrows this connection's batches to `users` (those with queues here) and the users
   * of registrations under way. Call once the queues are in place (after a restore).
   */
  select(users: Iterable<number>): void {
    if (this.#socket === null || !this.#subscribed) return;
    const named = new Set(users);
    for (const id of this.#registering.keys()) named.add(id);
    this.#named = named;
    this.#socket.write(frame(SELECT, u32s([...named])));
  }

  /** Stops naming the users without a queue in `users` nor a registration under way. */
  sweep(users: Iterable<number>): void {
    const named = this.#named;
    if (named === null || this.#socket === null) return;
    const keep = new Set(users);
    const gone = [...named].filter((id) => !keep.has(id) && !this.#registering.has(id));
    if (gone.length === 0) return;
    for (const id of gone) named.delete(id);
    this.#socket.write(frame(UNWATCH, u32s(gone)));
  }

  /**
   * Asks the writer for its queue `queueId`; resolves once it is in this reader's hub
   * (handlers.adopted) or the writer said it has none, or the stream is gone. Null when
   * not subscribed (nothing can be asked).
   */
  adopt(queueId: string): Promise<void> | null {
    if (this.#socket === null || !this.#subscribed) return null;
    const asked = this.#adopting.get(queueId);
    if (asked !== undefined) return asked.done;
    const token = this.#nextToken++;
    const done = new Promise<void>((resolve) => this.#adoptions.set(token, resolve));
    this.#adopting.set(queueId, { token, done });
    void done.then(() => this.#adopting.delete(queueId));
    this.#socket.write(frame(ADOPT, Buffer.concat([u32s([token]), Buffer.from(queueId)])));
    return done;
  }

  #adoptionAnswered(payload: Buffer, queue: SavedQueue | null): void {
    const token = payload.length >= 4 ? payload.readUInt32BE(0) : 0;
    if (queue !== null) {
      // The writer names the user in every later batch; kept named here too (sweep keeps users with queues).
      this.#named?.add(queue.userId);
      this.#handlers.adopted?.(queue);
    }
    this.#adoptions.get(token)?.();
    this.#adoptions.delete(token);
  }

  #name(userId: number): Promise<void> {
    const named = this.#named;
    if (named === null || this.#socket === null) return Promise.resolve();
    if (named.has(userId)) return this.#awaiting.get(userId) ?? Promise.resolve();
    named.add(userId);
    const token = this.#nextToken++;
    const ready = new Promise<void>((resolve) => this.#acks.set(token, resolve));
    this.#awaiting.set(userId, ready);
    void ready.then(() => {
      if (this.#awaiting.get(userId) === ready) this.#awaiting.delete(userId);
    });
    this.#socket.write(frame(WATCH, u32s([token, userId])));
    return ready;
  }

  /** The connection is gone: nothing is named any more, and registrations waiting go on (their stream is lost). */
  #forgetNames(): void {
    this.#named = null;
    for (const resolve of this.#acks.values()) resolve();
    this.#acks.clear();
    this.#awaiting.clear();
    // The queues asked for never come: their polls answer as for any queue this reader lost.
    for (const resolve of this.#adoptions.values()) resolve();
    this.#adoptions.clear();
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
    readFrames(socket, (kind, payload) => {
      if (kind === END) this.#endedCleanly = this.#subscribed;
      else if (kind === HELLO) {
        this.#endedCleanly = false;
        this.#forgetNames();
        this.#subscribed = true;
        this.#handlers.subscribed();
      } else if (kind === BATCH && this.#subscribed) {
        this.#received++;
        this.#handlers.batch(decodeBatch(payload));
      } else if (kind === ADOPTED && this.#subscribed) {
        this.#adoptionAnswered(payload, parseHandedQueue(payload.subarray(4).toString("utf8")));
      } else if (kind === REFUSED) {
        this.#adoptionAnswered(payload, null);
      } else if (kind === WATCHED) {
        const token = payload.length >= 4 ? payload.readUInt32BE(0) : 0;
        this.#acks.get(token)?.();
        this.#acks.delete(token);
      }
    });
    socket.on("error", () => socket.destroy());
    socket.on("close", () => {
      if (this.#socket === socket) this.#socket = null;
      this.#forgetNames();
      const was = this.#subscribed;
      this.#subscribed = false;
      if (was) this.#handlers.lost();
      for (const resolve of this.#ended.splice(0)) resolve();
      if (!this.#closed) this.#timer = setTimeout(() => this.#connect(), RECONNECT_MS);
    });
  }
}
