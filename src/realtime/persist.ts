/**
 * @module realtime/persist
 * Event queues across a graceful restart: on SIGTERM the server writes its queues
 * (descriptor and pending events) to DATA/event-queues.json (temporary file, fsync,
 * rename); the next start reads it, restores the queues and deletes the file. After a
 * crash there is no file, and clients get BAD_EVENT_QUEUE_ID and register again, as
 * with Zulip.
 *
 * The save is bounded: one synchronous JSON.stringify of every queue held the event
 * loop for over 15 minutes at ~3.8 GB with 20,000 queues. The file is JSON lines (a
 * header, then one queue per line, most recently polled first), written in ~1 MiB
 * chunks with the event loop free between them, and the writing stops at a deadline:
 * the queues that did not fit are dropped (their clients register again) and the
 * file ends at the last whole queue. Loading reads line by line and skips a damaged or
 * truncated line, so a file cut short still restores every queue before the cut.
 * Files of the single-object format (version 1) of earlier releases still load.
 *
 * Queues share event texts in memory (one DM to a user with many queues is one
 * string), and so does the file: an event text is written once with a key, and later
 * copies as a reference to it ({"id","key","body"}, then {"id","ref"}), so that a
 * restored server holds what it held before, not a copy per queue.
 */
import { once } from "node:events";
import { createReadStream, readdirSync, rmSync } from "node:fs";
import { open, rename, rm, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { z } from "zod";
import type { SavedQueue } from "./queue.js";

export const SAVED_QUEUES_FILE = "event-queues.json";
/** How long a shutdown spends writing queues before it drops the rest. */
export const DEFAULT_SAVE_DEADLINE_MS = 10_000;
const CHUNK_BYTES = 1024 * 1024;

const savedQueue = z.object({
  id: z.string(),
  userId: z.number().int(),
  realmId: z.number().int(),
  nextEventId: z.number().int().min(0),
  lastActivity: z.number(),
  options: z.object({
    eventTypes: z.array(z.string()).nullable(),
    allPublicStreams: z.boolean(),
    narrow: z.array(z.object({ operator: z.string(), operand: z.unknown(), negated: z.boolean().optional() })),
    applyMarkdown: z.boolean(),
    clientGravatar: z.boolean(),
    emptyTopicName: z.boolean(),
    streamTypingNotifications: z.boolean(),
    // Queues saved before this option existed did not ask for it.
    includeDeactivatedGroups: z.boolean().default(false),
    presenceFormat: z.enum(["legacy", "slim", "modern"]).default("legacy"),
    individualEmojiChanges: z.boolean().default(false),
    userListIncomplete: z.boolean().default(false),
    archivedChannels: z.boolean().default(false),
    bulkMessageDeletion: z.boolean().default(false),
    linkifierUrlTemplate: z.boolean().default(false),
    idleTimeoutSecs: z.number().positive(),
    defaultChannelId: z.number().int().optional(),
  }),
  events: z.array(z.object({ id: z.number().int(), body: z.string() })),
});
/**
 * A queue's line in a version 2 file. Its events (event texts given with a key, or a
 * reference to one) are checked by withBodies: zod took ~1 s per million of them.
 */
const savedLine = savedQueue.extend({ events: z.custom<readonly unknown[]>((v) => Array.isArray(v)) });
const headerV2 = z.object({ version: z.literal(2), seq: z.number().int().optional() });
const fileV1 = z.object({ version: z.literal(1), queues: z.array(savedQueue) });

export interface SaveOptions {
  /** Milliseconds after the start past which nothing more is written (default 10 s). */
  readonly deadlineMs?: number;
  /** Bytes gathered before each write (default 1 MiB). */
  readonly chunkBytes?: number;
  /** Milliseconds, for the deadline (injectable for tests). */
  readonly now?: () => number;
  /** The file's name in the data directory (default SAVED_QUEUES_FILE; a reader worker's is its own). */
  readonly file?: string;
  /**
   * A reader worker's: the change-log sequence number its queues hold every event up to.
   * Written in the header; loading with another `seq` discards the file (events of the
   * writes between were never delivered to these queues).
   */
  readonly seq?: number;
}

export interface SaveResult {
  readonly saved: number;
  /** Queues left out because the deadline passed. */
  readonly dropped: number;
  readonly bytes: number;
}

/**
 * Text gathered into chunks for a file, with the byte offset where the current line
 * began, so that a line cut short by the deadline can be taken back whole.
 */
class LineWriter {
  readonly #file: FileHandle;
  readonly #chunkBytes: number;
  #pieces: string[] = [];
  #pendingBytes = 0;
  #flushedBytes = 0;
  #lineStart = 0;
  #lineStartPiece = 0;

  constructor(file: FileHandle, chunkBytes: number) {
    this.#file = file;
    this.#chunkBytes = chunkBytes;
  }

  get bytes(): number {
    return this.#flushedBytes + this.#pendingBytes;
  }

  get full(): boolean {
    return this.#pendingBytes >= this.#chunkBytes;
  }

  beginLine(): void {
    this.#lineStart = this.bytes;
    this.#lineStartPiece = this.#pieces.length;
  }

  add(text: string): void {
    this.#pieces.push(text);
    this.#pendingBytes += Buffer.byteLength(text);
  }

  /** Writes what is gathered; the await is where the event loop runs other work. */
  async flush(): Promise<void> {
    if (this.#pieces.length === 0) return;
    const data = Buffer.from(this.#pieces.join(""));
    this.#pieces = [];
    this.#pendingBytes = 0;
    this.#lineStartPiece = 0;
    await this.#file.write(data);
    this.#flushedBytes += data.length;
  }

  /** Takes back the line begun last: the file ends with the line before it. */
  async abandonLine(): Promise<void> {
    if (this.#flushedBytes <= this.#lineStart) {
      this.#pieces.length = this.#lineStartPiece;
      this.#pendingBytes = this.#lineStart - this.#flushedBytes;
      await this.flush();
    } else {
      this.#pieces = [];
      this.#pendingBytes = 0;
      await this.#file.truncate(this.#lineStart);
      this.#flushedBytes = this.#lineStart;
    }
  }
}

/**
 * Writes `queues` (most important first) until the deadline, then fsyncs and renames
 * the file into place. Resolves with how many were saved and dropped.
 */
export async function writeSavedQueues(
  dataDir: string,
  queues: readonly SavedQueue[],
  options: SaveOptions = {},
): Promise<SaveResult> {
  const now = options.now ?? Date.now;
  const deadline = now() + (options.deadlineMs ?? DEFAULT_SAVE_DEADLINE_MS);
  const path = join(dataDir, options.file ?? SAVED_QUEUES_FILE);
  const tmp = `${path}.${process.pid}.tmp`;
  const file = await open(tmp, "w");
  let saved = 0;
  let bytes = 0;
  try {
    const out = new LineWriter(file, options.chunkBytes ?? CHUNK_BYTES);
    // Event texts already written, by key. Strings hash once (V8 caches it), so a lookup is cheap.
    const keys = new Map<string, number>();
    out.add(`${JSON.stringify(options.seq === undefined ? { version: 2 } : { version: 2, seq: options.seq })}\n`);
    let late = false;
    for (const queue of queues) {
      if (now() >= deadline) break;
      out.beginLine();
      const { events, ...head } = queue;
      out.add(`${JSON.stringify(head).slice(0, -1)},"events":[`);
      for (let i = 0; i < events.length && !late; i++) {
        const { id, body } = events[i]!;
        const ref = keys.get(body);
        const sep = i === 0 ? "" : ",";
        if (ref !== undefined) out.add(`${sep}{"id":${id},"ref":${ref}}`);
        else {
          // A key defined in a line taken back below is never referred to: writing stops there.
          keys.set(body, keys.size);
          out.add(`${sep}${JSON.stringify({ id, key: keys.size - 1, body })}`);
        }
        if (out.full) {
          await out.flush();
          late = now() >= deadline;
        }
      }
      if (late) {
        await out.abandonLine();
        break;
      }
      out.add("]}\n");
      saved++;
      if (out.full) await out.flush();
    }
    await out.flush();
    bytes = out.bytes;
    await file.sync();
  } catch (error) {
    await file.close();
    await rm(tmp, { force: true });
    throw error;
  }
  await file.close();
  await rename(tmp, path);
  return { saved, dropped: queues.length - saved, bytes };
}

/**
 * Reads and deletes the saved queues; [] when there are none. Damaged or truncated
 * lines are skipped and reported through `warn` (their clients register again), as is
 * a file that does not parse at all. Reading stops at the deadline (the start waits
 * for it): the queues not read yet, the least recently polled, are dropped.
 */
export async function loadSavedQueues(
  dataDir: string,
  warn: (message: string) => void = () => undefined,
  options: Pick<SaveOptions, "deadlineMs" | "now" | "file" | "seq"> = {},
): Promise<SavedQueue[]> {
  const now = options.now ?? Date.now;
  const deadline = now() + (options.deadlineMs ?? DEFAULT_SAVE_DEADLINE_MS);
  const path = join(dataDir, options.file ?? SAVED_QUEUES_FILE);
  removeStaleTemporaries(dataDir);
  let input;
  try {
    input = createReadStream(path, { encoding: "utf8" });
    await once(input, "open");
  } catch {
    return [];
  }
  const queues: SavedQueue[] = [];
  let version: number | null = null;
  let damaged = 0;
  let late = false;
  const bodies = new Map<number, string>();
  try {
    for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
      if (now() >= deadline) {
        late = true;
        break;
      }
      if (version === null) {
        const first = parseJson(line);
        const v1 = fileV1.safeParse(first);
        if (v1.success) {
          queues.push(...(v1.data.queues as SavedQueue[]));
          version = 1;
        } else if (headerV2.safeParse(first).success) {
          const saved = headerV2.parse(first).seq;
          if (options.seq !== undefined && saved !== options.seq) {
            warn(
              `ignoring ${path}: writes were committed since its queues were saved; their clients will register again`,
            );
            break;
          }
          version = 2;
        } else {
          warn(`ignoring ${path}: not a saved event queue file; its clients will register again`);
          break;
        }
        continue;
      }
      if (version !== 2 || line === "") continue;
      const queue = savedLine.safeParse(parseJson(line));
      const restored = queue.success ? withBodies(queue.data, bodies) : null;
      if (restored) queues.push(restored);
      else damaged++;
    }
  } finally {
    input.destroy();
    rmSync(path, { force: true });
  }
  if (damaged > 0) warn(`${path}: skipped ${damaged} damaged or truncated queue(s); their clients will register again`);
  if (late) warn(`${path}: read ${queues.length} queue(s) before the deadline; the rest's clients will register again`);
  return queues;
}

/**
 * A line's events with references resolved (the keys it defines are added to
 * `bodies`); null when one is malformed or refers to a text never read.
 */
function withBodies(line: z.infer<typeof savedLine>, bodies: Map<number, string>): SavedQueue | null {
  const events: { id: number; body: string }[] = [];
  for (const event of line.events) {
    if (typeof event !== "object" || event === null) return null;
    const { id, key, ref, body } = event as Record<string, unknown>;
    if (typeof id !== "number" || !Number.isSafeInteger(id)) return null;
    let text: string | undefined;
    if (typeof body === "string" && typeof key === "number") bodies.set(key, (text = body));
    else if (typeof ref === "number") text = bodies.get(ref);
    if (text === undefined) return null;
    events.push({ id, body: text });
  }
  return { ...line, events } as SavedQueue;
}

/**
 * A queue one worker hands another (realtime/writer-stream's moves), as JSON of a
 * SavedQueue; null when it is not one.
 */
export function parseHandedQueue(text: string): SavedQueue | null {
  const queue = savedLine.safeParse(parseJson(text));
  if (!queue.success) return null;
  for (const event of queue.data.events) {
    if (typeof event !== "object" || event === null) return null;
    const { id, body } = event as Record<string, unknown>;
    if (typeof id !== "number" || !Number.isSafeInteger(id) || typeof body !== "string") return null;
  }
  return queue.data as SavedQueue;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Temporary files of a save that never finished (a second signal killed it). */
function removeStaleTemporaries(dataDir: string): void {
  let names: string[];
  try {
    names = readdirSync(dataDir);
  } catch {
    return;
  }
  for (const name of names) {
    if (name.startsWith(`${SAVED_QUEUES_FILE}.`) && name.endsWith(".tmp")) rmSync(join(dataDir, name), { force: true });
  }
}
