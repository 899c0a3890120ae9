/**
 * @module index/deferred-writes
 * The journal of BitmapStore.addDeferred/removeDeferred: IDs added to or removed from
 * thousands of bitmaps in one write, whose chunks later writes write. Two writes needed
 * it. A resolve notice in a 10,000-subscriber channel is born read for everyone but the
 * topic's participants (Zulip's limit_unread_user_ids), and each reader's read bitmap is
 * its own key: writing 10,000 chunks held the event loop ~130 ms of a resolve's ~160.
 * A topic moved back from a private channel gives or takes its 5,000 IDs in 10,000
 * users' row bitmaps (actions/move-rows.ts): ~900 ms of loading and serializing.
 * Instead the write records one journal entry per operation (the op, the IDs, the
 * keys, per-user flag keys as user IDs), applies it to the bitmaps it has in memory, and
 * bounded later writes settle the keys a slice at a time, except entries of per-user
 * flag keys only, which last as an overlay (see DeferredWrites) up to MAX_LASTING_ENTRIES.
 *
 * Invariant: a journal entry lists exactly the keys whose persisted chunks may still
 * lack its effect. Whenever a key is written (settled, or changed by any other write)
 * its chunks touched by journaled IDs are rewritten whole from memory, which has every
 * effect, and the key leaves every entry in that same transaction. Reads see the
 * effects at once: BitmapStore applies a key's entries, oldest first, over whatever it
 * loads from disk. A crash leaves the entries, and the next open settles those due.
 */
import roaring from "roaring";
import type { Tables } from "../storage/tables.js";
import { userFlagHolderOf, type StoredFlag } from "./keys.js";

const { RoaringBitmap32 } = roaring;
type Bitmap = InstanceType<typeof RoaringBitmap32>;
type ReadonlyBitmap = roaring.ReadonlyRoaringBitmap32;

const RECORD_PREFIX = "deferredBitmapWrites:";
/** The meta key just past every record's (":" + 1 is ";"). */
const RECORD_END = "deferredBitmapWrites;";
/** key.userFlagHolders(flag) is this plus the flag. */
const HOLDERS_PREFIX = "uh:";
/**
 * Lasting entries kept before the oldest are settled after all: each one is asked by every
 * load of a bitmap of its flag, and holds its users' IDs in memory.
 */
export const MAX_LASTING_ENTRIES = 64;

export type DeferredOp = "add" | "remove";

/**
 * An entry's keys. Per-user flag keys (key.userFlag: a notice's 10,000 read bitmaps, a
 * move's row bitmaps) are held as each flag's user IDs, a few KB, rather than as a Set of
 * 10,000 strings indexed by key and stored as a list.
 */
interface Journal {
  readonly op: DeferredOp;
  readonly ids: ReadonlyBitmap;
  /** Keys still to be written, other than per-user flag keys. */
  readonly keys: Set<string>;
  /** Per-user flag keys still to be written: key.userFlag(user, flag) for each user under its flag. */
  readonly users: Map<StoredFlag, Bitmap>;
  /**
   * Named only per-user flag keys: an overlay left in place (see DeferredWrites) instead of
   * being settled, until a write of one of its keys settles that key.
   */
  readonly lasting: boolean;
}

/** As stored in the meta table; `users` appears in schema version 3 (older entries name every key in `keys`). */
interface StoredJournal {
  readonly op: DeferredOp;
  /** Portable roaring bytes. */
  readonly ids: Uint8Array;
  readonly keys: readonly string[];
  /** [flag, portable roaring bytes of user IDs]. */
  readonly users?: readonly (readonly [string, Uint8Array])[];
}

/** The flag and user of a per-user flag key, or null for any other key. */
function userFlagOf(name: string): { flag: StoredFlag; userId: number } | null {
  const holder = userFlagHolderOf(name);
  if (holder === null) return null;
  const flag = holder[0].slice(HOLDERS_PREFIX.length) as StoredFlag;
  // Only the key's one spelling (no leading zeros): the entry gives back userFlagKey's.
  return userFlagKey(holder[1], flag) === name ? { flag, userId: holder[1] } : null;
}

/** key.userFlag's spelling (index/keys.ts memoizes its strings; this module only compares and rebuilds). */
function userFlagKey(userId: number, flag: StoredFlag): string {
  return `u:${userId}:${flag}`;
}

function isEmptyJournal(journal: Journal): boolean {
  if (journal.keys.size > 0) return false;
  for (const users of journal.users.values()) if (!users.isEmpty) return false;
  return true;
}

/** Every key an entry still names. */
function* keysOf(journal: Journal): Generator<string> {
  yield* journal.keys;
  for (const [flag, users] of journal.users) for (const userId of users) yield userFlagKey(userId, flag);
}

/**
 * Entries that name only per-user flag keys are lasting: a resolve notice born read for a
 * channel's 10,000 subscribers is one entry ("read for these users"), overlaid on every
 * load of their read bitmaps, and not settled by later writes: settling wrote 10,000
 * keys' chunks, ~130 ms of CPU in twenty writes, for a bit each. A write of one of the
 * keys (a user marking the notice unread) settles that key as for any entry. Past
 * MAX_LASTING_ENTRIES the oldest are settled as other entries are.
 */
export class DeferredWrites {
  readonly #meta: Tables["meta"];
  /** By sequence, in insertion (= sequence) order. */
  readonly #journals = new Map<number, Journal>();
  /** Per key other than per-user flag keys, the entries that name it, oldest first. */
  readonly #of = new Map<string, number[]>();
  /** Per flag, the entries naming some users' keys of it, oldest first. */
  readonly #ofFlag = new Map<StoredFlag, number[]>();
  #lasting = 0;
  #nextSeq = 1;
  /** Entries the running transaction created: written at its end, forgotten if it fails. */
  #created: number[] = [];
  /** Keys the running transaction writes whole where journaled: they leave their entries at the commit. */
  readonly #settling = new Set<string>();

  constructor(meta: Tables["meta"]) {
    this.#meta = meta;
    this.reload();
  }

  /**
   * Reads the journal from the meta table, forgetting what memory held. At open, and in a
   * follower each time its writer changed the journal (a follower overlays it on loads as
   * the writer does, and never settles it). Returns the keys named by entries it did not
   * hold before: those bitmaps changed in the writer's memory, not on disk.
   */
  reload(): string[] {
    const before = new Map(this.#journals);
    this.#journals.clear();
    this.#of.clear();
    this.#ofFlag.clear();
    this.#lasting = 0;
    for (const { key, value } of this.#meta.getRange({ start: RECORD_PREFIX, end: RECORD_END })) {
      const seq = Number(key.slice(RECORD_PREFIX.length));
      const stored = value as StoredJournal;
      const ids = RoaringBitmap32.deserialize(Buffer.from(stored.ids), "portable");
      const users = new Map<StoredFlag, Bitmap>();
      for (const [flag, bytes] of stored.users ?? [])
        users.set(flag as StoredFlag, RoaringBitmap32.deserialize(Buffer.from(bytes), "portable"));
      const lasting = stored.keys.length === 0 && users.size > 0;
      this.#add(seq, { op: stored.op, ids, keys: new Set(stored.keys), users, lasting });
      this.#nextSeq = Math.max(this.#nextSeq, seq + 1);
    }
    // An entry only loses keys as they settle: a key it did not name before is new.
    const fresh: string[] = [];
    for (const [seq, journal] of this.#journals) {
      const known = before.get(seq);
      for (const key of keysOf(journal)) if (known === undefined || !this.#names(known, key)) fresh.push(key);
    }
    return fresh;
  }

  get isEmpty(): boolean {
    return this.#journals.size === 0;
  }

  /** Whether some entry is due to be settled (lasting entries are not, up to MAX_LASTING_ENTRIES). */
  get hasUnsettled(): boolean {
    return this.#journals.size > this.#lasting || this.#lasting > MAX_LASTING_ENTRIES;
  }

  /** Whether some entry still names `key`. */
  has(key: string): boolean {
    if (this.#of.has(key)) return true;
    if (this.#ofFlag.size === 0) return false;
    return this.#seqsOf(key).length > 0;
  }

  /** Applies `key`'s entries, oldest first, to a bitmap loaded from disk for IDs in [low, high). */
  overlay(key: string, bitmap: Bitmap, low: number, high: number): void {
    for (const seq of this.#seqsOf(key)) {
      const journal = this.#journals.get(seq)!;
      const ids = within(journal.ids, low, high);
      if (journal.op === "add") bitmap.orInPlace(ids);
      else bitmap.andNotInPlace(ids);
    }
  }

  /** Every ID `key`'s entries name (the chunks a write of the key rewrites whole). */
  touched(key: string): ReadonlyBitmap {
    const seqs = this.#seqsOf(key);
    if (seqs.length === 1) return this.#journals.get(seqs[0]!)!.ids;
    return RoaringBitmap32.orMany(seqs.map((seq) => this.#journals.get(seq)!.ids));
  }

  /** Journals `op` of `ids` (copied: callers' bitmaps change) on `keys` in the running transaction. */
  record(op: DeferredOp, ids: ReadonlyBitmap, keys: readonly string[]): void {
    const plain = new Set<string>();
    const userIds = new Map<StoredFlag, number[]>();
    for (const key of keys) {
      const userFlag = userFlagOf(key);
      if (userFlag === null) plain.add(key);
      else {
        const list = userIds.get(userFlag.flag);
        if (list === undefined) userIds.set(userFlag.flag, [userFlag.userId]);
        else list.push(userFlag.userId);
      }
    }
    const users = new Map([...userIds].map(([flag, list]) => [flag, RoaringBitmap32.from(list)] as const));
    this.#record(op, ids, plain, users);
  }

  /** record() of one flag's per-user keys, given as the users' IDs (copied, as `ids`). */
  recordUsers(op: DeferredOp, ids: ReadonlyBitmap, flag: StoredFlag, userIds: ReadonlyBitmap): void {
    this.#record(op, ids, new Set(), new Map([[flag, new RoaringBitmap32(userIds)]]));
  }

  #record(op: DeferredOp, ids: ReadonlyBitmap, plain: Set<string>, users: Map<StoredFlag, Bitmap>): void {
    const seq = this.#nextSeq++;
    // Run containers: a channel's subscribers are mostly runs of consecutive user IDs.
    for (const bitmap of users.values()) bitmap.runOptimize();
    const lasting = plain.size === 0 && users.size > 0;
    this.#add(seq, { op, ids: new RoaringBitmap32(ids), keys: plain, users, lasting });
    this.#created.push(seq);
  }

  /** Up to `limit` keys of the oldest entry due to be settled, for the next settling write. */
  nextToSettle(limit: number): string[] {
    const out: string[] = [];
    let lastingToSettle = this.#lasting - MAX_LASTING_ENTRIES;
    for (const journal of this.#journals.values()) {
      if (journal.lasting && lastingToSettle-- <= 0) continue;
      for (const key of keysOf(journal)) {
        if (out.length >= limit) return out;
        if (!this.#settling.has(key)) out.push(key);
      }
      if (out.length > 0) return out;
    }
    return out;
  }

  /** The running transaction writes `key`'s journaled chunks from memory (BitmapStore.writeDirty). */
  settling(key: string): void {
    this.#settling.add(key);
  }

  /** Inside the transaction, after the bitmaps' chunks: the entries it created or changed; whether any. */
  write(): boolean {
    if (this.#created.length === 0 && this.#settling.size === 0) return false;
    const touched = new Set(this.#created);
    for (const key of this.#settling) for (const seq of this.#seqsOf(key)) touched.add(seq);
    const settlingUsers = this.#settlingUsers();
    for (const seq of touched) {
      const journal = this.#journals.get(seq)!;
      const keys = [...journal.keys].filter((key) => !this.#settling.has(key));
      const users: [string, Uint8Array][] = [];
      for (const [flag, ids] of journal.users) {
        const settled = settlingUsers.get(flag);
        const left = settled === undefined ? ids : RoaringBitmap32.andNot(ids, settled);
        if (!left.isEmpty) users.push([flag, left.serialize("portable")]);
      }
      if (keys.length === 0 && users.length === 0) this.#meta.removeSync(RECORD_PREFIX + seq);
      else {
        const ids = journal.ids.serialize("portable");
        const stored: StoredJournal =
          users.length > 0 ? { op: journal.op, ids, keys, users } : { op: journal.op, ids, keys };
        this.#meta.putSync(RECORD_PREFIX + seq, stored);
      }
    }
    return touched.size > 0;
  }

  committed(): void {
    if (this.#settling.size > 0) {
      const settlingUsers = this.#settlingUsers();
      const touched = new Set<number>();
      for (const key of this.#settling) {
        for (const seq of this.#of.get(key) ?? []) {
          this.#journals.get(seq)!.keys.delete(key);
          touched.add(seq);
        }
        this.#of.delete(key);
      }
      for (const [flag, settled] of settlingUsers) {
        for (const seq of this.#ofFlag.get(flag) ?? []) {
          this.#journals.get(seq)!.users.get(flag)!.andNotInPlace(settled);
          touched.add(seq);
        }
      }
      for (const seq of touched) {
        const journal = this.#journals.get(seq);
        if (journal !== undefined && isEmptyJournal(journal)) this.#forget(seq, journal);
      }
    }
    this.#settling.clear();
    this.#created = [];
  }

  /**
   * The transaction failed: its entries never existed, and what it settled is still
   * journaled. Returns the keys its entries named: a bitmap loaded after the entry was
   * recorded holds its effect, which no undo record covers.
   */
  rollback(): string[] {
    const named: string[] = [];
    for (const seq of this.#created) {
      const journal = this.#journals.get(seq)!;
      named.push(...keysOf(journal));
      this.#forget(seq, journal);
    }
    this.#created = [];
    this.#settling.clear();
    return named;
  }

  /** The settling per-user flag keys, as each flag's user IDs. */
  #settlingUsers(): Map<StoredFlag, Bitmap> {
    const out = new Map<StoredFlag, Bitmap>();
    if (this.#ofFlag.size === 0) return out;
    for (const key of this.#settling) {
      const userFlag = userFlagOf(key);
      if (userFlag === null || !this.#ofFlag.has(userFlag.flag)) continue;
      let users = out.get(userFlag.flag);
      if (users === undefined) out.set(userFlag.flag, (users = new RoaringBitmap32()));
      users.add(userFlag.userId);
    }
    return out;
  }

  /** Whether an entry still names `key`. */
  #names(journal: Journal, key: string): boolean {
    if (journal.keys.has(key)) return true;
    const userFlag = userFlagOf(key);
    return userFlag !== null && journal.users.get(userFlag.flag)?.has(userFlag.userId) === true;
  }

  /** The entries naming `key`, oldest first. */
  #seqsOf(key: string): readonly number[] {
    const plain = this.#of.get(key) ?? [];
    if (this.#ofFlag.size === 0) return plain;
    const userFlag = userFlagOf(key);
    if (userFlag === null) return plain;
    const byFlag = (this.#ofFlag.get(userFlag.flag) ?? []).filter((seq) =>
      this.#journals.get(seq)!.users.get(userFlag.flag)!.has(userFlag.userId),
    );
    if (byFlag.length === 0) return plain;
    if (plain.length === 0) return byFlag;
    return [...plain, ...byFlag].sort((a, b) => a - b);
  }

  #add(seq: number, journal: Journal): void {
    this.#journals.set(seq, journal);
    if (journal.lasting) this.#lasting++;
    for (const key of journal.keys) {
      const seqs = this.#of.get(key);
      if (seqs === undefined) this.#of.set(key, [seq]);
      else seqs.push(seq);
    }
    for (const flag of journal.users.keys()) {
      const seqs = this.#ofFlag.get(flag);
      if (seqs === undefined) this.#ofFlag.set(flag, [seq]);
      else seqs.push(seq);
    }
  }

  /** Drops an entry from memory and the indexes. */
  #forget(seq: number, journal: Journal): void {
    if (journal.lasting) this.#lasting--;
    for (const key of journal.keys) {
      const seqs = this.#of.get(key)?.filter((s) => s !== seq) ?? [];
      if (seqs.length === 0) this.#of.delete(key);
      else this.#of.set(key, seqs);
    }
    for (const flag of journal.users.keys()) {
      const seqs = this.#ofFlag.get(flag)?.filter((s) => s !== seq) ?? [];
      if (seqs.length === 0) this.#ofFlag.delete(flag);
      else this.#ofFlag.set(flag, seqs);
    }
    this.#journals.delete(seq);
  }
}

/**
 * The IDs of `ids` in [low, high). The range bitmap spans `ids` only: one from a chunk to
 * 2^32 is 65,536 containers, and built for each load it cost ~50 ms a key.
 */
export function within(ids: ReadonlyBitmap, low: number, high: number): ReadonlyBitmap {
  if (ids.isEmpty) return ids;
  const first = Math.max(low, ids.minimum());
  const end = Math.min(high, ids.maximum() + 1);
  if (first >= end) return new RoaringBitmap32();
  if (first === ids.minimum() && end === ids.maximum() + 1) return ids;
  return RoaringBitmap32.and(ids, new RoaringBitmap32().addRange(first, end));
}
