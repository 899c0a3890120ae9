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
 * keys), applies it to the bitmaps it has in memory, and bounded later writes settle
 * the keys a slice at a time.
 *
 * Invariant: a journal entry lists exactly the keys whose persisted chunks may still
 * lack its effect. Whenever a key is written (settled, or changed by any other write)
 * its chunks touched by journaled IDs are rewritten whole from memory, which has every
 * effect, and the key leaves every entry in that same transaction. Reads see the
 * effects at once: BitmapStore applies a key's entries, oldest first, over whatever it
 * loads from disk. A crash leaves the entries, and the next open settles them.
 */
import roaring from "roaring";
import type { Tables } from "../storage/tables.js";

const { RoaringBitmap32 } = roaring;
type Bitmap = InstanceType<typeof RoaringBitmap32>;
type ReadonlyBitmap = roaring.ReadonlyRoaringBitmap32;

const RECORD_PREFIX = "deferredBitmapWrites:";
/** The meta key just past every record's (":" + 1 is ";"). */
const RECORD_END = "deferredBitmapWrites;";

export type DeferredOp = "add" | "remove";

interface Journal {
  readonly op: DeferredOp;
  readonly ids: ReadonlyBitmap;
  /** Keys still to be written. */
  readonly keys: Set<string>;
}

interface StoredJournal {
  readonly op: DeferredOp;
  /** Portable roaring bytes. */
  readonly ids: Uint8Array;
  readonly keys: readonly string[];
}

export class DeferredWrites {
  readonly #meta: Tables["meta"];
  /** By sequence, in insertion (= sequence) order. */
  readonly #journals = new Map<number, Journal>();
  /** Per key, the entries that name it, oldest first. */
  readonly #of = new Map<string, number[]>();
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
    for (const { key, value } of this.#meta.getRange({ start: RECORD_PREFIX, end: RECORD_END })) {
      const seq = Number(key.slice(RECORD_PREFIX.length));
      const stored = value as StoredJournal;
      const ids = RoaringBitmap32.deserialize(Buffer.from(stored.ids), "portable");
      this.#add(seq, { op: stored.op, ids, keys: new Set(stored.keys) });
      this.#nextSeq = Math.max(this.#nextSeq, seq + 1);
    }
    // An entry only loses keys as they settle: a key it did not name before is new.
    const fresh: string[] = [];
    for (const [seq, journal] of this.#journals) {
      const known = before.get(seq);
      for (const key of journal.keys) if (known?.keys.has(key) !== true) fresh.push(key);
    }
    return fresh;
  }

  get isEmpty(): boolean {
    return this.#journals.size === 0;
  }

  /** Whether some entry still names `key`. */
  has(key: string): boolean {
    return this.#of.has(key);
  }

  /** Applies `key`'s entries, oldest first, to a bitmap loaded from disk for IDs in [low, high). */
  overlay(key: string, bitmap: Bitmap, low: number, high: number): void {
    const seqs = this.#of.get(key);
    if (seqs === undefined) return;
    for (const seq of seqs) {
      const journal = this.#journals.get(seq)!;
      const ids = within(journal.ids, low, high);
      if (journal.op === "add") bitmap.orInPlace(ids);
      else bitmap.andNotInPlace(ids);
    }
  }

  /** Every ID `key`'s entries name (the chunks a write of the key rewrites whole). */
  touched(key: string): ReadonlyBitmap {
    const seqs = this.#of.get(key) ?? [];
    if (seqs.length === 1) return this.#journals.get(seqs[0]!)!.ids;
    return RoaringBitmap32.orMany(seqs.map((seq) => this.#journals.get(seq)!.ids));
  }

  /** Journals `op` of `ids` (copied: callers' bitmaps change) on `keys` in the running transaction. */
  record(op: DeferredOp, ids: ReadonlyBitmap, keys: readonly string[]): void {
    const seq = this.#nextSeq++;
    this.#add(seq, { op, ids: new RoaringBitmap32(ids), keys: new Set(keys) });
    this.#created.push(seq);
  }

  /** Up to `limit` keys of the oldest entry, for the next settling write. */
  nextToSettle(limit: number): string[] {
    const out: string[] = [];
    for (const journal of this.#journals.values()) {
      for (const key of journal.keys) {
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
    for (const key of this.#settling) for (const seq of this.#of.get(key) ?? []) touched.add(seq);
    for (const seq of touched) {
      const journal = this.#journals.get(seq)!;
      const keys = [...journal.keys].filter((key) => !this.#settling.has(key));
      if (keys.length === 0) this.#meta.removeSync(RECORD_PREFIX + seq);
      else {
        const ids = journal.ids.serialize("portable");
        this.#meta.putSync(RECORD_PREFIX + seq, { op: journal.op, ids, keys } satisfies StoredJournal);
      }
    }
    return touched.size > 0;
  }

  committed(): void {
    for (const key of this.#settling) {
      for (const seq of this.#of.get(key) ?? []) {
        const journal = this.#journals.get(seq)!;
        journal.keys.delete(key);
        if (journal.keys.size === 0) this.#journals.delete(seq);
      }
      this.#of.delete(key);
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
      for (const key of this.#journals.get(seq)!.keys) {
        named.push(key);
        const seqs = this.#of.get(key)!.filter((s) => s !== seq);
        if (seqs.length === 0) this.#of.delete(key);
        else this.#of.set(key, seqs);
      }
      this.#journals.delete(seq);
    }
    this.#created = [];
    this.#settling.clear();
    return named;
  }

  #add(seq: number, journal: Journal): void {
    this.#journals.set(seq, journal);
    for (const key of journal.keys) {
      const seqs = this.#of.get(key);
      if (seqs === undefined) this.#of.set(key, [seq]);
      else seqs.push(seq);
    }
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
