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
 * A queue moves to the worker its polls reach, whichever holds it; the writer orders
 * every move, one at a time per queue. A reader polled for a queue it does not hold asks
 * the writer (MOVE); the writer's own hub asks it directly. If the writer holds the queue
 * it takes it out of its hub between two batches, names its user in the taker's
 * audiences and sends it (ADOPTED): the taker installs it at that point of the stream, so
 * it takes exactly the batches after those the writer's copy took. Otherwise the writer
 * asks every other reader (ASK); the holder answers with what its queue was registered
 * with (SPEC: user, options, no events), the others with nothing. At that moment, one
 * point of the writer's stream, the taker begins an empty copy (START, or the writer's hub
 * directly) that takes every later batch, and the holder is told to stop (CUT): at CUT,
 * after every earlier batch, it takes the queue out of its hub and sends its events
 * (HANDED), which the writer passes on (FILL): they go first in the taker's copy, whose
 * own events, held back from polls until then, are numbered on from them. When no one
 * answers with the queue, the taker is told so (REFUSED: BAD_EVENT_QUEUE_ID). A stream that
 * breaks during a move ends it: the queue is lost with the broken reader's, as any of
 * its queues are.
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
/** Reader to writer: a token (u32), the user (u32), then "<reader name>\n<queue ID>": move that queue here. */
const MOVE = 8;
/** Writer to reader: the token (u32), then the queue as JSON (a SavedQueue): it is the reader's from here on. */
const ADOPTED = 9;
/** Writer to reader: the token (u32): no worker holds that queue. */
const REFUSED = 10;
/** Writer to reader: a move (u32), the user (u32), then a queue ID: do you hold it? */
const ASK = 11;
/** Reader to writer: the move (u32), then the queue without events (JSON), or nothing. */
const SPEC = 12;
/** Writer to reader: the move (u32), then "<taker>\n<queue ID>": hand the queue over from here. */
const CUT = 13;
/** Reader to writer: the move (u32), then the queue with its events (JSON), or nothing. */
const HANDED = 14;
/** Writer to reader: the token (u32), then the queue without events (JSON): begin taking its batches here. */
const START = 15;
/** Writer to reader: the token (u32), then the queue's events before START (JSON), or nothing (it is gone). */
const FILL = 16;
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
  /** Its worker name, once it asked for a queue. */
  name: string;
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

/** The writer's hub, for moves of queues (set once it exists). */
export interface WriterQueues {
  /** Takes `userId`'s queue out of the writer's hub for the worker `to` (null: none). */
  handOver(queueId: string, userId: number, to: string): SavedQueue | null;
  /** Begins a queue moving to the writer, at this point of its stream (EventHub.expect). */
  expect(spec: SavedQueue): boolean;
  /** Its events from the worker that held it, or null (EventHub.fill); whether it is held. */
  fill(queueId: string, saved: SavedQueue | null): boolean;
}

/** The worker taking a queue: a reader (its socket and its request's token), or the writer. */
type Taker =
  | { readonly socket: Socket; readonly link: ReaderLink; readonly token: number }
  | { readonly socket: null; readonly resolve: (held: boolean) => void };

/** One move of a queue (see the module's comment). */
interface Move {
  readonly id: number;
  readonly queueId: string;
  readonly userId: number;
  readonly taker: Taker;
  /** Readers asked (ASK) that have not answered. */
  asked: Set<Socket>;
  /** The reader that holds the queue, once it said so (SPEC). */
  giver: Socket | null;
}

function utf8Pair(payload: Buffer): [string, string] {
  const text = payload.toString("utf8");
  const cut = text.indexOf("\n");
  return cut < 0 ? ["", text] : [text.slice(0, cut), text.slice(cut + 1)];
}

const withToken = (token: number, text?: string): Buffer =>
  text === undefined ? u32s([token]) : Buffer.concat([u32s([token]), Buffer.from(text)]);

/** A queue as JSON after a u32, or null (nothing, or not a queue). */
function queueAfterToken(payload: Buffer): SavedQueue | null {
  return payload.length > 4 ? parseHandedQueue(payload.subarray(4).toString("utf8")) : null;
}

/** The writer's side: every batch its store releases, to every connected reader. */
export class EventBroadcaster {
  readonly #server: Server;
  readonly #readers = new Map<Socket, ReaderLink>();
  readonly #unsubscribe: () => void;
  #sent = 0;
  /** Moves under way by ID, and by queue (the first under way, the others waiting their turn). */
  readonly #moves = new Map<number, Move>();
  readonly #queueMoves = new Map<string, Move[]>();
  #nextMove = 1;
  #movesStarted = 0;
  /** The writer's hub; until set every move finds nothing there. */
  queues: WriterQueues | null = null;

  private constructor(server: Server, store: Store) {
    this.#server = server;
    server.on("connection", (socket) => {
      socket.on("error", () => socket.destroy());
      const link: ReaderLink = { users: null, name: "", corked: false };
      socket.on("close", () => {
        this.#readers.delete(socket);
        this.#lost(socket);
      });
      readFrames(socket, (kind, payload) => {
        if (kind === SELECT) link.users = new Set(readU32s(payload));
        else if (kind === MOVE && payload.length >= 8) {
          const [name, queueId] = utf8Pair(payload.subarray(8));
          link.name = name;
          const token = payload.readUInt32BE(0);
          this.#request(queueId, payload.readUInt32BE(4), { socket, link, token });
        } else if (kind === SPEC && payload.length >= 4) this.#spec(socket, payload);
        else if (kind === HANDED && payload.length >= 4) this.#handed(socket, payload);
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

  /** Moves of queues begun so far (each poll that reached a worker not holding its queue, or a DELETE). */
  get movesStarted(): number {
    return this.#movesStarted;
  }

  /** The writer's hub was polled for `userId`'s queue it does not hold: resolves once moved here (or not found). */
  moveToWriter(queueId: string, userId: number): Promise<boolean> {
    return new Promise((resolve) => this.#request(queueId, userId, { socket: null, resolve }));
  }

  #request(queueId: string, userId: number, taker: Taker): void {
    const move: Move = { id: this.#nextMove++, queueId, userId, taker, asked: new Set(), giver: null };
    const line = this.#queueMoves.get(queueId);
    if (line !== undefined) {
      line.push(move);
      return;
    }
    this.#queueMoves.set(queueId, [move]);
    this.#start(move);
  }

  /** Between two batches (stream frames go out in order): the point where the queue changes hands. */
  #start(move: Move): void {
    const { taker, queueId, userId } = move;
    this.#movesStarted++;
    this.#moves.set(move.id, move);
    if (taker.socket !== null) {
      if (!this.#readers.has(taker.socket)) return this.#finish(move);
      const saved = this.queues?.handOver(queueId, userId, taker.link.name) ?? null;
      if (saved !== null) {
        // The reader's copy takes every batch after this point, and the writer's hub none.
        taker.link.users?.add(saved.userId);
        writeFrame(taker.socket, taker.link, frame(ADOPTED, withToken(taker.token, JSON.stringify(saved))));
        return this.#finish(move);
      }
    }
    move.asked = new Set([...this.#readers.keys()].filter((socket) => socket !== taker.socket));
    if (move.asked.size === 0) return this.#refuse(move);
    const ask = frame(ASK, Buffer.concat([u32s([move.id, userId]), Buffer.from(queueId)]));
    for (const socket of move.asked) writeFrame(socket, this.#readers.get(socket)!, ask);
  }

  #spec(socket: Socket, payload: Buffer): void {
    const move = this.#moves.get(payload.readUInt32BE(0));
    if (move === undefined || !move.asked.delete(socket)) return;
    const spec = queueAfterToken(payload);
    if (spec !== null && move.giver === null && spec.id === move.queueId && spec.userId === move.userId) {
      const { taker } = move;
      if (taker.socket === null) {
        if (this.queues?.expect(spec) !== true) return this.#refuse(move);
      } else if (this.#readers.has(taker.socket)) {
        taker.link.users?.add(spec.userId);
        writeFrame(taker.socket, taker.link, frame(START, withToken(taker.token, JSON.stringify(spec))));
      }
      move.giver = socket;
      const to = taker.socket === null ? "writer" : taker.link.name;
      writeFrame(socket, this.#readers.get(socket)!, frame(CUT, withToken(move.id, `${to}\n${move.queueId}`)));
    } else if (move.giver === null && move.asked.size === 0) this.#refuse(move);
  }

  #handed(socket: Socket, payload: Buffer): void {
    const move = this.#moves.get(payload.readUInt32BE(0));
    if (move === undefined || move.giver !== socket) return;
    this.#fill(move, queueAfterToken(payload));
  }

  #fill(move: Move, saved: SavedQueue | null): void {
    const { taker } = move;
    if (taker.socket === null) taker.resolve(this.queues?.fill(move.queueId, saved) ?? false);
    else if (this.#readers.has(taker.socket)) {
      const json = saved === null ? undefined : JSON.stringify(saved);
      writeFrame(taker.socket, taker.link, frame(FILL, withToken(taker.token, json)));
    }
    this.#finish(move);
  }

  #refuse(move: Move): void {
    const { taker } = move;
    if (taker.socket === null) taker.resolve(false);
    else if (this.#readers.has(taker.socket)) writeFrame(taker.socket, taker.link, frame(REFUSED, u32s([taker.token])));
    this.#finish(move);
  }

  /** The queue's next move, if any, begins. */
  #finish(move: Move): void {
    this.#moves.delete(move.id);
    const line = this.#queueMoves.get(move.queueId);
    if (line?.[0] !== move) return;
    line.shift();
    const next = line[0];
    if (next === undefined) this.#queueMoves.delete(move.queueId);
    else this.#start(next);
  }

  /** A reader's stream ended: it answers no more (its queues, one it was handing over included, are gone). */
  #lost(socket: Socket): void {
    for (const move of [...this.#moves.values()]) {
      if (move.giver === socket) this.#fill(move, null);
      else if (move.asked.delete(socket) && move.giver === null && move.asked.size === 0) this.#refuse(move);
    }
    for (const [queueId, line] of this.#queueMoves) {
      const kept = line.filter((move, i) => i === 0 || move.taker.socket !== socket);
      if (kept.length !== line.length) this.#queueMoves.set(queueId, kept);
    }
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
  /** This reader's hub, for moves of queues (see the module's comment); none: it holds none of another's. */
  readonly queues?: ReaderQueues;
}

/** A reader's hub, for moves of queues. */
export interface ReaderQueues {
  /** A queue the writer handed over whole, at its point in the stream (before the next batch); whether it is held. */
  adopted(queue: SavedQueue): boolean;
  /** Begins a queue moving here (EventHub.expect). */
  expect(spec: SavedQueue): boolean;
  /** Its events from the worker that held it, or null (EventHub.fill); whether it is held. */
  fill(queueId: string, saved: SavedQueue | null): boolean;
  /** `userId`'s queue without events, if held here (EventHub.describe). */
  describe(queueId: string, userId: number): SavedQueue | null;
  /** Takes the queue out of the hub for the worker `to` (EventHub.handOver). */
  handOver(queueId: string, to: string): SavedQueue | null;
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
  /** Queues asked of the writer (MOVE), by ID: resolved once moved here, or not found (or the stream is gone). */
  readonly #moving = new Map<string, Promise<boolean>>();
  readonly #moveAnswers = new Map<number, { queueId: string; userId: number; resolve: (held: boolean) => void }>();

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
    // A queue moving here: the writer names its user from START (or ADOPTED) on, and must not be told otherwise.
    for (const { userId } of this.#moveAnswers.values()) keep.add(userId);
    const gone = [...named].filter((id) => !keep.has(id) && !this.#registering.has(id));
    if (gone.length === 0) return;
    for (const id of gone) named.delete(id);
    this.#socket.write(frame(UNWATCH, u32s(gone)));
  }

  /**
   * Asks the writer to move `userId`'s queue `queueId` here (this reader is `worker`);
   * resolves with true once it is in this reader's hub, false when no worker holds it
   * or the stream is gone. Null when not subscribed (nothing can be asked).
   */
  move(queueId: string, userId: number, worker: string): Promise<boolean> | null {
    if (this.#socket === null || !this.#subscribed) return null;
    const asked = this.#moving.get(queueId);
    if (asked !== undefined) return asked;
    const token = this.#nextToken++;
    const done = new Promise<boolean>((resolve) => this.#moveAnswers.set(token, { queueId, userId, resolve }));
    this.#moving.set(queueId, done);
    void done.then(() => this.#moving.delete(queueId));
    this.#socket.write(frame(MOVE, Buffer.concat([u32s([token, userId]), Buffer.from(`${worker}\n${queueId}`)])));
    return done;
  }

  #moveAnswered(token: number, held: boolean): void {
    this.#moveAnswers.get(token)?.resolve(held);
    this.#moveAnswers.delete(token);
  }

  /** A frame of a move (see the module's comment), at its point in the stream. */
  #moveFrame(kind: number, payload: Buffer): void {
    if (payload.length < 4) return;
    const token = payload.readUInt32BE(0);
    const queues = this.#handlers.queues;
    const queue = kind === ADOPTED || kind === START || kind === FILL ? queueAfterToken(payload) : null;
    // The writer names the user of a queue moving here in every later batch; kept named here too
    // (sweep keeps users with queues).
    if (queue !== null && (kind === ADOPTED || kind === START)) this.#named?.add(queue.userId);
    if (kind === ADOPTED) this.#moveAnswered(token, queue !== null && queues?.adopted(queue) === true);
    else if (kind === REFUSED) this.#moveAnswered(token, false);
    else if (kind === START) {
      if (queue !== null) queues?.expect(queue);
    } else if (kind === FILL) {
      const queueId = this.#moveAnswers.get(token)?.queueId;
      if (queueId !== undefined) this.#moveAnswered(token, queues?.fill(queueId, queue) === true);
    } else if (kind === ASK && payload.length >= 8) {
      const spec = queues?.describe(payload.subarray(8).toString("utf8"), payload.readUInt32BE(4)) ?? null;
      this.#socket?.write(frame(SPEC, withToken(token, spec === null ? undefined : JSON.stringify(spec))));
    } else if (kind === CUT) {
      const [to, queueId] = utf8Pair(payload.subarray(4));
      const saved = queues?.handOver(queueId, to) ?? null;
      this.#socket?.write(frame(HANDED, withToken(token, saved === null ? undefined : JSON.stringify(saved))));
    }
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
    for (const { resolve } of this.#moveAnswers.values()) resolve(false);
    this.#moveAnswers.clear();
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
      } else if (kind >= ADOPTED && kind <= FILL && this.#subscribed) {
        this.#moveFrame(kind, payload);
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
