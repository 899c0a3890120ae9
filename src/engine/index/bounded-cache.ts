/**
 * @module index/bounded-cache
 * A least-recently-used map bounded by an estimate of its values' bytes, for derived
 * bitmaps (per-user received sets) whose size grows with the realm's history.
 */
export class BoundedCache<K, V> {
  readonly #entries = new Map<K, { value: V; bytes: number; touched: number }>();
  /** Counts lookups and writes: an entry's `touched` is the count when it last moved. */
  #clock = 0;
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    // Map order is recency order, approximately: an entry moved within the last `size`
    // operations is not moved again, so its place is off by fewer than `size` uses.
    // A hot entry (one user's sets, looked up several times per query) then costs one
    // Map lookup instead of a delete and an insert each time.
    const now = ++this.#clock;
    if (now - entry.touched >= this.#entries.size) {
      this.#entries.delete(key);
      this.#entries.set(key, entry);
      entry.touched = now;
    }
    return entry.value;
  }

  /** Looks without touching recency. */
  peek(key: K): V | undefined {
    return this.#entries.get(key)?.value;
  }

  set(key: K, value: V, bytes: number): void {
    this.delete(key);
    this.#entries.set(key, { value, bytes, touched: ++this.#clock });
    this.#bytes += bytes;
    this.#evict(key);
  }

  /** Records that a cached value grew (or shrank) by `delta` bytes. */
  resize(key: K, delta: number): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    entry.bytes += delta;
    this.#bytes += delta;
    this.#evict(key);
  }

  delete(key: K): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }

  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }

  /** Every entry, least recently used first, without touching recency. */
  entries(): [K, V][] {
    return [...this.#entries].map(([key, entry]) => [key, entry.value]);
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** Drops the least recently used entries until within budget, never `keep`. */
  #evict(keep: K): void {
    for (const [key, entry] of this.#entries) {
      if (this.#bytes <= this.#maxBytes) return;
      if (key === keep) continue;
      this.#entries.delete(key);
      this.#bytes -= entry.bytes;
    }
  }
}
