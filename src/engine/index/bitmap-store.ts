/**
 * @module index/bitmap-store
 * Durable roaring bitmaps of message IDs, one per string key, persisted in
 * 2^16-ID chunks so that an update rewrites only the chunks it touched (bounded
 * write per update), and loaded lazily by key (no scan of messages at open).
 *
 * Invariant: between write transactions, every cached bitmap equals the union of its
 * persisted chunks. Mutations apply to the cached bitmap at once (later reads in the
 * same action see them), are written by commit() inside the LMDB transaction, and are
 * undone exactly by rollback() if the transaction fails.
 *
 * Ownership: get() returns the live cached bitmap. Callers must not mutate it; clone
 * before changing (RoaringBitmap32.and/or/andNot already return new bitmaps).
 */
import roaring from "roaring";
import { StorageError } from "../errors.js";
import type { Tables } from "../storage/tables.js";

const { RoaringBitmap32 } = roaring;
export type Bitmap = InstanceType<typeof RoaringBitmap32>;
export type ReadonlyBitmap = roaring.ReadonlyRoaringBitmap32;
export { RoaringBitmap32 };

const CHUNK_BITS = 16;
const CHUNK_SPAN = 1 << CHUNK_BITS;
const DEFAULT_CACHE_BYTES = 512 * 1024 * 1024;
/**
 * Memory a cached bitmap costs beyond its serialized bytes: the Map entry, the key
 * string, the Entry, roaring's JS wrapper and native header. Measured at ~650 bytes
 * of RSS per one-container bitmap on Node 20 (bench/gen-scaling.ts notes). Without
 * it, a realm with millions of small topic and conversation bitmaps fit its 512 MB
 * budget on paper while holding several GB.
 */
const ENTRY_OVERHEAD_BYTES = 600;

interface Entry {
  bitmap: Bitmap;
  bytes: number;
  /** Access stamp for least-recently-used eviction (cheaper than reordering a Map per access). */
  used: number;
}

interface UndoRecord {
  readonly key: string;
  readonly added: readonly number[] | Uint32Array;
  readonly removed: readonly number[];
}

/** An always-empty bitmap for "no such key" fast paths. Never mutate it. */
export const EMPTY: ReadonlyBitmap = new RoaringBitmap32();

/**
 * Longest key name, in UTF-8 bytes, that fits LMDB's 1978-byte key limit together
 * with its chunk number. Longer names are never written (add refuses them), so
 * reading one is empty: a 100 KB topic in a narrow or mark_topic_as_read finds
 * nothing instead of failing inside LMDB.
 */
export const MAX_KEY_NAME_BYTES = 1900;

function storable(key: string): boolean {
  return key.length <= MAX_KEY_NAME_BYTES / 3 || Buffer.byteLength(key, "utf8") <= MAX_KEY_NAME_BYTES;
}

export class BitmapStore {
  readonly #tables: Tables;
  readonly #cache = new Map<string, Entry>();
  readonly #dirty = new Map<string, Set<number>>();
  #undo: UndoRecord[] = [];
  #cachedBytes = 0;
  #clock = 0;
  readonly #versions = new Map<string, number>();
  readonly #maxCacheBytes: number;

  constructor(tables: Tables, maxCacheBytes = DEFAULT_CACHE_BYTES) {
    this.#tables = tables;
    this.#maxCacheBytes = maxCacheBytes;
  }

  /** The bitmap for `key` (empty if none). Live and cached: do not mutate. */
  get(key: string): ReadonlyBitmap {
    return storable(key) ? this.#entry(key).bitmap : EMPTY;
  }

  /** Adds one ID; returns whether it was absent. */
  add(key: string, id: number): boolean {
    const entry = this.#writableEntry(key);
    if (!entry.bitmap.tryAdd(id)) return false;
    this.#grow(entry, 4);
    this.#bump(key);
    this.#markDirty(key, id);
    this.#undo.push({ key, added: [id], removed: [] });
    return true;
  }

  /** Adds many IDs; returns those that were absent (ascending if input was). */
  addMany(key: string, ids: Iterable<number>): number[] {
    if (ids instanceof RoaringBitmap32) return [...this.addBitmap(key, ids)];
    const entry = this.#writableEntry(key);
    const added: number[] = [];
    for (const id of ids) {
      if (entry.bitmap.tryAdd(id)) {
        added.push(id);
        this.#markDirty(key, id);
      }
    }
    if (added.length > 0) {
      this.#bump(key);
      this.#grow(entry, 4 * added.length);
      this.#undo.push({ key, added, removed: [] });
    }
    return added;
  }

  /**
   * Adds every ID of a bitmap in bulk (marking a 48k-message backlog read): one native
   * union, and dirty chunks found by range instead of per ID. Returns the IDs that
   * were absent, ascending.
   */
  addBitmap(key: string, ids: ReadonlyBitmap): Uint32Array {
    const entry = this.#writableEntry(key);
    const fresh = RoaringBitmap32.andNot(ids, entry.bitmap);
    if (fresh.size === 0) return new Uint32Array(0);
    entry.bitmap.orInPlace(fresh);
    const first = fresh.minimum() >>> CHUNK_BITS;
    const last = fresh.maximum() >>> CHUNK_BITS;
    for (let chunk = first; chunk <= last; chunk++) {
      if (first === last || fresh.rangeCardinality(chunk * CHUNK_SPAN, (chunk + 1) * CHUNK_SPAN) > 0) this.#markDirty(key, chunk * CHUNK_SPAN);
    }
    const added = fresh.toUint32Array();
    this.#bump(key);
    this.#grow(entry, 4 * added.length);
    this.#undo.push({ key, added, removed: [] });
    return added;
  }

  /** Removes many IDs; returns those that were present. */
  removeMany(key: string, ids: Iterable<number>): number[] {
    if (!storable(key)) return [];
    const entry = this.#entry(key);
    const removed: number[] = [];
    for (const id of ids) {
      if (entry.bitmap.delete(id)) {
        removed.push(id);
        this.#markDirty(key, id);
      }
    }
    if (removed.length > 0) {
      this.#bump(key);
      this.#undo.push({ key, added: [], removed });
    }
    return removed;
  }

  /**
   * A counter that changes whenever the key's bitmap changes (for caches derived from
   * it). Counted only from the first time someone asks: no cache can hold an older
   * value, and a bulk load then keeps no entry for each of its millions of keys.
   */
  version(key: string): number {
    const version = this.#versions.get(key);
    if (version !== undefined) return version;
    this.#versions.set(key, 0);
    return 0;
  }

  #bump(key: string): void {
    const version = this.#versions.get(key);
    if (version !== undefined) this.#versions.set(key, version + 1);
  }

  /**
   * Writes every dirty chunk. Call inside the LMDB write transaction. The undo log is
   * kept: the transaction may still fail to commit, and then rollback() needs it.
   */
  writeDirty(): void {
    for (const [key, chunks] of this.#dirty) {
      const bitmap = this.#entry(key).bitmap;
      for (const chunk of chunks) {
        const bytes = serializeChunk(bitmap, chunk);
        if (bytes === null) this.#tables.bitmapChunks.removeSync([key, chunk]);
        else this.#tables.bitmapChunks.putSync([key, chunk], bytes);
      }
    }
  }

  /**
   * The transaction committed: re-measure what changed, forget the undo log, then
   * bound the cache. Between commits add() charges 4 bytes an ID, which overstates a
   * dense bitmap many times over (a bitmap container holds 65,536 IDs in 8 KB): without
   * re-measuring, a bulk load's hot bitmaps crowd out the budget and get evicted and
   * reloaded from disk again and again.
   */
  committed(): void {
    for (const key of this.#dirty.keys()) {
      const entry = this.#cache.get(key);
      if (!entry) continue;
      const bytes = sizeOf(entry.bitmap);
      this.#cachedBytes += bytes - entry.bytes;
      entry.bytes = bytes;
    }
    this.#dirty.clear();
    this.#undo = [];
    this.#evict();
  }

  /** Reverts every mutation since the last commit (the transaction failed). */
  rollback(): void {
    for (let i = this.#undo.length - 1; i >= 0; i--) {
      const record = this.#undo[i]!;
      const entry = this.#cache.get(record.key);
      if (!entry) continue;
      for (const id of record.added) entry.bitmap.delete(id);
      for (const id of record.removed) entry.bitmap.add(id);
      // Give back the size estimate add()/addMany() charged, or failed writes would
      // ratchet the cache toward premature eviction.
      this.#grow(entry, -4 * record.added.length);
      this.#bump(record.key);
    }
    this.#undo = [];
    this.#dirty.clear();
  }

  /** Every key that has persisted chunks, in key order (for verify). */
  *persistedKeys(): Generator<string> {
    let last: string | null = null;
    for (const key of this.#tables.bitmapChunks.getKeys()) {
      const name = key[0];
      if (name !== last) {
        last = name;
        yield name;
      }
    }
  }

  /** Every key with a cached bitmap (tests compare memory with disk through it). */
  cachedKeys(): string[] {
    return [...this.#cache.keys()];
  }

  /** Reads a key straight from disk, bypassing the cache (for verify). */
  loadFromDisk(key: string): Bitmap {
    if (!storable(key)) return new RoaringBitmap32();
    const parts: Bitmap[] = [];
    for (const { value } of this.#tables.bitmapChunks.getRange({ start: [key, 0], end: [key, CHUNK_SPAN] })) {
      parts.push(RoaringBitmap32.deserialize(value, "portable"));
    }
    return parts.length === 1 ? parts[0]! : RoaringBitmap32.orMany(parts);
  }

  /** Approximate bytes held by cached bitmaps. */
  get cachedBytes(): number {
    return this.#cachedBytes;
  }

  /** Drops every cached bitmap (tests and tools use it to prove persistence). */
  clearCache(): void {
    if (this.#dirty.size > 0) throw new Error("clearCache with uncommitted bitmap changes");
    this.#cache.clear();
    this.#cachedBytes = 0;
  }

  #writableEntry(key: string): Entry {
    if (!storable(key)) throw new StorageError(`bitmap key longer than ${MAX_KEY_NAME_BYTES} bytes: ${key.slice(0, 40)}...`);
    return this.#entry(key);
  }

  #entry(key: string): Entry {
    let entry = this.#cache.get(key);
    if (entry) {
      entry.used = ++this.#clock;
      return entry;
    }
    const bitmap = this.loadFromDisk(key);
    entry = { bitmap, bytes: sizeOf(bitmap), used: ++this.#clock };
    this.#cache.set(key, entry);
    this.#cachedBytes += entry.bytes;
    return entry;
  }

  /** Size changes are estimates (4 bytes an ID); re-measured when a key is next loaded. */
  #grow(entry: Entry, delta: number): void {
    entry.bytes += delta;
    this.#cachedBytes += delta;
  }

  #markDirty(key: string, id: number): void {
    let chunks = this.#dirty.get(key);
    if (!chunks) this.#dirty.set(key, (chunks = new Set()));
    chunks.add(id >>> CHUNK_BITS);
  }

  /** Drops least recently used bitmaps down to 80% of the budget (rare: sorts once). */
  #evict(): void {
    if (this.#cachedBytes <= this.#maxCacheBytes) return;
    const byAge = [...this.#cache].sort((a, b) => a[1].used - b[1].used);
    for (const [key, entry] of byAge) {
      if (this.#cachedBytes <= this.#maxCacheBytes * 0.8) break;
      this.#cache.delete(key);
      this.#cachedBytes -= entry.bytes;
    }
  }
}

function sizeOf(bitmap: ReadonlyBitmap): number {
  return ENTRY_OVERHEAD_BYTES + bitmap.getSerializationSizeInBytes("portable");
}

/** The portable bytes of one chunk of `bitmap`, or null when the chunk is empty. */
export function serializeChunk(bitmap: ReadonlyBitmap, chunk: number): Uint8Array | null {
  const low = chunk * CHUNK_SPAN;
  const part = valueRange(bitmap, low, low + CHUNK_SPAN);
  if (part.size === 0) return null;
  part.runOptimize();
  return part.serialize("portable");
}

const ID_LIMIT = 2 ** 32;

/**
 * The IDs of `set` in [from, to), as a new bitmap. Costs the containers that overlap
 * the range. (roaring's rangeUint32Array(offset, limit) instead walks from the first
 * element, so its cost grows with the offset: avoid it for anything but offset 0.)
 */
export function valueRange(set: ReadonlyBitmap, from: number, to: number = ID_LIMIT): Bitmap {
  // Clamp to the set: a range up to 2^32 would itself hold one container per 2^16 IDs.
  const end = set.size === 0 ? 0 : Math.min(to, ID_LIMIT, set.maximum() + 1);
  const start = Math.max(from, set.size === 0 ? 0 : set.minimum());
  if (start >= end) return new RoaringBitmap32();
  return RoaringBitmap32.and(set, new RoaringBitmap32().addRange(start, end));
}

/** The `count` IDs of `set` from rank `start` (0-based), ascending; select() finds the bounds. */
export function sliceByRank(set: ReadonlyBitmap, start: number, count: number): number[] {
  const size = set.size;
  if (count <= 0 || start >= size) return [];
  const first = set.select(start);
  const last = set.select(Math.min(start + count, size) - 1);
  if (first === undefined || last === undefined) return [];
  return idsInRange(set, first, last + 1);
}

/*
 * Reused by the extractions below, which run synchronously and never hand them out.
 * A roaring bitmap is a native object freed by a weak callback, and toUint32Array()
 * allocates an off-heap buffer: per narrow query, a dozen of each cost more (in
 * allocation and garbage collection) than the set operations themselves.
 */
const SCRATCH = new RoaringBitmap32();
let idBuffer = new Uint32Array(1024);
const MAX_REUSED_IDS = 1 << 16;

/** The first `limit` IDs of `bitmap` (all if null), as a view of the reused buffer: read it before the next call. */
export function idsView(bitmap: ReadonlyBitmap, limit: number | null = null): Uint32Array {
  const wanted = limit === null ? bitmap.size : Math.min(limit, bitmap.size);
  if (wanted === 0) return idBuffer.subarray(0, 0);
  // Kept at most 256 KB: a larger extraction (a long walk's last chunk) gets its own array.
  if (wanted > MAX_REUSED_IDS) return bitmap.toUint32Array(wanted);
  if (idBuffer.length < wanted) idBuffer = new Uint32Array(Math.min(MAX_REUSED_IDS, Math.max(wanted, idBuffer.length * 2)));
  return bitmap.toUint32Array(wanted === idBuffer.length ? idBuffer : idBuffer.subarray(0, wanted));
}

/** The IDs of `set` in [from, to), ascending, as plain numbers: valueRange without a new bitmap. */
export function idsInRange(set: ReadonlyBitmap, from: number, to: number = ID_LIMIT): number[] {
  const end = set.size === 0 ? 0 : Math.min(to, ID_LIMIT, set.maximum() + 1);
  const start = Math.max(from, set.size === 0 ? 0 : set.minimum());
  if (start >= end) return [];
  SCRATCH.clear();
  SCRATCH.addRange(start, end);
  SCRATCH.andInPlace(set);
  return numbersOf(idsView(SCRATCH));
}

/**
 * The IDs of `set` in [from, to) with `restrict` applied (in place, to a reused bitmap
 * that it must not keep), ascending, as plain numbers; at most the first or last
 * `limit` of them. Also returns how many IDs of `set` the range held.
 */
export function restrictedRange(set: ReadonlyBitmap, from: number, to: number, restrict: (part: Bitmap) => void, limit: number, fromEnd: boolean): { ids: number[]; examined: number } {
  if (from >= to) return { ids: [], examined: 0 };
  SCRATCH.clear();
  SCRATCH.addRange(from, to);
  SCRATCH.andInPlace(set);
  const examined = SCRATCH.size;
  if (examined === 0) return { ids: [], examined };
  restrict(SCRATCH);
  const size = SCRATCH.size;
  if (!fromEnd || size <= limit) return { ids: numbersOf(idsView(SCRATCH, limit)), examined };
  const all = idsView(SCRATCH);
  return { ids: numbersOf(all.subarray(size - limit)), examined };
}

/** A typed array's values as a plain array: an indexed copy (Array.from walks the iterator protocol, ~20× slower). */
export function numbersOf(values: Uint32Array): number[] {
  const out = new Array<number>(values.length);
  for (let i = 0; i < values.length; i++) out[i] = values[i]!;
  return out;
}
