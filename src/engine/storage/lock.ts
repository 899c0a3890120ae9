/**
 * @module engine/storage/lock
 * One writer per data directory. The engine holds realms, users, channels and ID
 * counters in memory, loaded at open, so a second process writing beside a running
 * one would be invisible to it and both would hand out the same IDs. LMDB itself
 * lets several processes in, so the engine guards the directory with DIR/parley.lock,
 * taken at open and dropped at close (and at process exit).
 *
 * Why a pid file, and why this one. A kernel-held lock (flock, fcntl) would vanish
 * with its process by itself, but Node has no synchronous flock and a native addon
 * would have to be built at install time. An abstract unix socket is kernel-held too,
 * but binding one is asynchronous (open is synchronous), Linux-only, and scoped to a
 * network namespace rather than to the directory. So the lock is a file holding its
 * holder's record, and the two things a pid file usually gets wrong are done soundly:
 *
 * - Creation is atomic. The record (pid, a random token, host, boot id, the process
 *   start time, command, time) is written whole to a temporary file in the directory
 *   (fsynced unless the store runs with noSync), then hard-linked to parley.lock;
 *   link() fails with EEXIST when the name exists, atomically. So parley.lock never
 *   exists without its complete record, and there is no "empty, being written" state
 *   for a racer to misread as abandoned.
 * - A lock is stale only when its record is complete and its holder is provably gone:
 *   written during another boot, or its pid does not exist (EPERM means it exists), or
 *   /proc shows the pid now belongs to a process started at another time (pid reuse)
 *   or is a zombie. A record from another host, or one whose pid cannot be checked, is
 *   taken as alive: refusing wrongly costs the operator a command, taking over wrongly
 *   corrupts data. An incomplete file (from an older parley, which created the lock
 *   empty and wrote the pid afterwards, or from tampering) is never taken over: the
 *   error says to delete it if no parley uses the directory.
 * - Taking over a stale lock is exclusive. The taker first creates, with the same
 *   link(), a marker named after a hash of the exact stale record it saw
 *   (parley.lock~HASH); only one process can hold that marker. Holding it, it re-reads
 *   parley.lock and, only if it is still exactly that record, rename()s its own record
 *   over it (an atomic replace). While parley.lock holds a stale record, nobody else can
 *   change it: fresh takers' link() fails, its holder is dead, and takers of that record
 *   need the marker. Records carry a random token, so a replaced record never comes back
 *   (no ABA). A marker left by a taker that died is itself a stale lock and is taken
 *   over the same way, one level down. Nothing is ever renamed away, so there is no
 *   moment at which a live holder's lock is missing.
 * - Release deletes parley.lock only if it still holds our record.
 *
 * Containers sharing a directory across pid namespaces on one host are not told apart
 * (same host name and boot id, meaningless pids); give each its own directory.
 */
import { createHash, randomBytes } from "node:crypto";
import {
  fsyncSync,
  closeSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { DataDirectoryLockedError, StorageError } from "../errors.js";

export const LOCK_FILE = "parley.lock";

/** Markers nest only when takers die mid-takeover; past this depth something else is wrong. */
const MAX_TAKEOVER_DEPTH = 6;
/** How long to wait for a live racer that is mid-takeover (it needs microseconds). */
const BUSY_WAIT_MS = 2000;

/** What a lock file says about its holder. */
export interface LockHolder {
  readonly pid: number;
  /** Random per acquisition: tells two records of one pid apart. */
  readonly token: string;
  readonly host: string;
  /** /proc/sys/kernel/random/boot_id, where available. */
  readonly bootId: string | null;
  /** Field 22 of /proc/PID/stat (clock ticks after boot), where available: detects pid reuse. */
  readonly startTime: string | null;
  /** Who holds it, for the message another opener gets (e.g. "parley serve"). */
  readonly command: string;
  /** When the lock was taken, in UNIX milliseconds. */
  readonly since: number;
}

export interface DataDirLock {
  readonly path: string;
  readonly holder: LockHolder;
  /** Deletes the lock if it is still ours. Idempotent. */
  release(): void;
}

export interface LockOptions {
  /** Who takes the lock, shown to anyone refused; defaults to the running script. */
  readonly command?: string;
  /** fsync the record before it becomes the lock (off with the store's noSync). */
  readonly durable?: boolean;
  /** How long to wait for a live racer that is mid-takeover; BUSY_WAIT_MS by default. */
  readonly waitMs?: number;
}

function errno(error: unknown): string | undefined {
  return error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
}

function readOptional(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if (errno(error) === "ENOENT") return null;
    throw error;
  }
}

const BOOT_ID: string | null = (() => {
  const raw = readOptional("/proc/sys/kernel/random/boot_id");
  return raw === null ? null : raw.trim() || null;
})();

/** State and start time of a process from /proc, or null where /proc is missing or the pid is gone. */
function procStat(pid: number): { state: string; startTime: string } | null {
  let raw: string | null;
  try {
    raw = readOptional(`/proc/${pid}/stat`);
  } catch {
    return null;
  }
  if (raw === null) return null;
  // The command name (field 2) is in parentheses and may itself hold spaces or ")".
  const fields = raw.slice(raw.lastIndexOf(")") + 2).split(" ");
  const state = fields[0];
  const startTime = fields[19];
  return state !== undefined && startTime !== undefined ? { state, startTime } : null;
}

function defaultCommand(): string {
  const script = process.argv[1];
  return script ? `node ${script}` : "node";
}

function newHolder(command: string): LockHolder {
  return {
    pid: process.pid,
    token: randomBytes(12).toString("hex"),
    host: hostname(),
    bootId: BOOT_ID,
    startTime: procStat(process.pid)?.startTime ?? null,
    command,
    since: Date.now(),
  };
}

/** The record in a lock file, or null when it is not a complete record. */
export function parseHolder(raw: string): LockHolder | null {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const v = value as Record<string, unknown>;
  const nullableString = (x: unknown): x is string | null => x === null || typeof x === "string";
  if (typeof v["pid"] !== "number" || !Number.isInteger(v["pid"]) || v["pid"] <= 0) return null;
  if (
    typeof v["token"] !== "string" ||
    v["token"] === "" ||
    typeof v["host"] !== "string" ||
    typeof v["command"] !== "string"
  )
    return null;
  if (!nullableString(v["bootId"]) || !nullableString(v["startTime"]) || typeof v["since"] !== "number") return null;
  return {
    pid: v["pid"],
    token: v["token"],
    host: v["host"],
    bootId: v["bootId"],
    startTime: v["startTime"],
    command: v["command"],
    since: v["since"],
  };
}

/** False only when the holder is provably gone (see the module comment). */
export function holderAlive(holder: LockHolder): boolean {
  if (holder.host !== hostname()) return true;
  if (holder.bootId !== null && BOOT_ID !== null && holder.bootId !== BOOT_ID) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    if (errno(error) !== "EPERM") return false;
  }
  const stat = holder.startTime === null ? null : procStat(holder.pid);
  if (stat === null) return true;
  // A zombie has exited (its files are closed); only its parent's wait() is pending.
  return stat.state !== "Z" && stat.state !== "X" && stat.startTime === holder.startTime;
}

/** The marker a taker must hold to replace the stale record `raw` at `path`. */
export function takeoverMarker(path: string, raw: string): string {
  return `${path}~${createHash("sha256").update(raw).digest("hex").slice(0, 12)}`;
}

/** Why `path` could not be taken now. */
type Refusal =
  | { readonly kind: "held"; readonly path: string; readonly holder: LockHolder }
  | { readonly kind: "incomplete"; readonly path: string }
  /** Takeover markers nested MAX_TAKEOVER_DEPTH deep: every taker died mid-takeover. */
  | { readonly kind: "stuck"; readonly path: string }
  /** Changed under us, or a live racer is mid-takeover: look again. */
  | { readonly kind: "retry"; readonly why: LockHolder | null };

/**
 * Takes `path` with our record (already complete in `tmp`), or says why not. A stale
 * record is replaced under its takeover marker, which is taken by this same function.
 */
function take(path: string, tmp: string, ours: string, depth: number): true | Refusal {
  try {
    linkSync(tmp, path);
    return true;
  } catch (error) {
    const code = errno(error);
    if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP") {
      throw new StorageError(
        `cannot lock ${path}: the filesystem does not support hard links (${code}), which the one-writer lock needs; put the data directory on a local filesystem`,
        error,
      );
    }
    if (code !== "EEXIST") throw error;
  }
  const raw = readOptional(path);
  if (raw === null) return { kind: "retry", why: null };
  const holder = parseHolder(raw);
  if (holder === null) return { kind: "incomplete", path };
  if (holderAlive(holder)) return { kind: "held", path, holder };

  if (depth >= MAX_TAKEOVER_DEPTH) return { kind: "stuck", path };
  const marker = takeoverMarker(path, raw);
  const claimed = take(marker, tmp, ours, depth + 1);
  if (claimed !== true) {
    // A live taker holds the marker and is replacing this very record: wait for it.
    return claimed.kind === "held" ? { kind: "retry", why: claimed.holder } : claimed;
  }
  try {
    // Holding the marker, nobody else can change `path` while it holds the stale record.
    if (readOptional(path) !== raw) return { kind: "retry", why: null };
    const copy = `${tmp}.${depth}`;
    linkSync(tmp, copy);
    try {
      renameSync(copy, path);
    } catch (error) {
      rmSync(copy, { force: true });
      throw error;
    }
    return true;
  } finally {
    removeIfOurs(marker, ours);
  }
}

/** Deletes `path` if it holds `ours`. Nobody replaces a live holder's file, so read-then-delete is safe. */
function removeIfOurs(path: string, ours: string): void {
  if (readOptional(path) === ours) rmSync(path, { force: true });
}

function writeRecord(path: string, raw: string, durable: boolean): void {
  const fd = openSync(path, "wx");
  try {
    writeSync(fd, raw);
    if (durable) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Locks held by this process, released at exit by one listener. */
const held = new Set<DataDirLock>();
let exitHook = false;

/**
 * Takes DIR/parley.lock (creating DIR), or throws DataDirectoryLockedError naming the
 * holder. Synchronous: the store's open is.
 */
export function lockDataDir(dir: string, options: LockOptions = {}): DataDirLock {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, LOCK_FILE);
  const holder = newHolder(options.command ?? defaultCommand());
  const ours = JSON.stringify(holder);
  const tmp = join(dir, `${LOCK_FILE}.${holder.token}.tmp`);
  writeRecord(tmp, ours, options.durable ?? true);
  let outcome: true | Refusal;
  try {
    const deadline = Date.now() + (options.waitMs ?? BUSY_WAIT_MS);
    for (;;) {
      outcome = take(path, tmp, ours, 0);
      if (outcome === true || outcome.kind !== "retry" || Date.now() > deadline) break;
      if (outcome.why !== null) sleep(2);
    }
  } finally {
    rmSync(tmp, { force: true });
  }
  if (outcome !== true) throw refusal(dir, outcome, options.waitMs ?? BUSY_WAIT_MS);

  let released = false;
  const lock: DataDirLock = {
    path,
    holder,
    release() {
      if (released) return;
      released = true;
      held.delete(lock);
      removeIfOurs(path, ours);
    },
  };
  held.add(lock);
  if (!exitHook) {
    exitHook = true;
    // A process that ends without closing its store still frees the directory.
    process.on("exit", () => {
      for (const l of [...held]) l.release();
    });
  }
  return lock;
}

/**
 * Joins the lock another process of the same server holds on DIR (a follower store joins
 * its writer's, or every worker joins the lock their supervising parent took): `token`
 * is the holder's LockHolder.token, handed down by that server. Takes nothing, and its
 * release() leaves the lock to its holder. Throws DataDirectoryLockedError when DIR is
 * not locked, or locked by a dead holder or by another server (another token): an
 * unrelated server never gets in this way, since only the holder knows its token.
 */
export function joinDataDirLock(dir: string, token: string): DataDirLock {
  const path = join(dir, LOCK_FILE);
  const raw = readOptional(path);
  const holder = raw === null ? null : parseHolder(raw);
  if (holder === null || !holderAlive(holder)) {
    throw new DataDirectoryLockedError(
      `${dir} is not held by a running parley server (${raw === null ? "no lock" : "a stale or incomplete lock"}): start the server that owns it first; a follower only joins a live writer`,
      holder,
    );
  }
  if (holder.token !== token) {
    throw new DataDirectoryLockedError(
      `${dir} is in use by ${describeHolder(holder)}, another server than the one this worker belongs to: stop it first, or use another data directory`,
      holder,
    );
  }
  return { path, holder, release: () => undefined };
}

function describeHolder(holder: LockHolder): string {
  const where =
    holder.host !== hostname() ? ` on host ${holder.host}` : holder.pid === process.pid ? ", this process" : "";
  return `${holder.command} (pid ${holder.pid}${where}, since ${new Date(holder.since).toISOString()})`;
}

function refusal(dir: string, r: Refusal, waitedMs: number): DataDirectoryLockedError | StorageError {
  switch (r.kind) {
    case "held":
      if (r.holder.pid === process.pid && r.holder.host === hostname()) {
        return new DataDirectoryLockedError(
          `${dir} is already open in this process (by ${describeHolder(r.holder)}): close that store first`,
          r.holder,
        );
      }
      return new DataDirectoryLockedError(
        `${dir} is in use by ${describeHolder(r.holder)}: stop it first, or use another data directory; two processes writing one directory would hand out the same IDs`,
        r.holder,
      );
    case "incomplete":
      return new DataDirectoryLockedError(
        `${dir} is locked by ${r.path}, which holds no complete holder record (left by an older parley that crashed while taking the lock, or edited by hand): if no parley process is using ${dir}, delete ${r.path} and try again`,
        null,
      );
    case "stuck":
      return new DataDirectoryLockedError(
        `${dir} has a stale lock that ${MAX_TAKEOVER_DEPTH} processes died taking over (${r.path}): if no parley process is using ${dir}, delete ${join(dir, LOCK_FILE)}* and try again`,
        null,
      );
    case "retry":
      return r.why === null
        ? new StorageError(`could not take ${join(dir, LOCK_FILE)}: it kept changing for ${waitedMs} ms`)
        : new DataDirectoryLockedError(
            `${dir} is being taken over by ${describeHolder(r.why)}, which did not finish within ${waitedMs} ms: try again`,
            r.why,
          );
  }
}
