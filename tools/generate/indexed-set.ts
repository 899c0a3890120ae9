/**
 * @module tools/generate/indexed-set
 * A set of small integers with O(1) add, delete, has and uniform random pick
 * (array + position map, swap-remove). Channel memberships churn constantly.
 */
import type { Rng } from "./prng.js";

export class IndexedSet {
  readonly #items: number[] = [];
  readonly #pos = new Map<number, number>();

  constructor(items: Iterable<number> = []) {
    for (const x of items) this.add(x);
  }

  get size(): number {
    return this.#items.length;
  }

  has(x: number): boolean {
    return this.#pos.has(x);
  }

  add(x: number): boolean {
    if (this.#pos.has(x)) return false;
    this.#pos.set(x, this.#items.length);
    this.#items.push(x);
    return true;
  }

  delete(x: number): boolean {
    const at = this.#pos.get(x);
    if (at === undefined) return false;
    const last = this.#items.pop()!;
    if (at < this.#items.length) {
      this.#items[at] = last;
      this.#pos.set(last, at);
    }
    this.#pos.delete(x);
    return true;
  }

  pick(rng: Rng): number | undefined {
    return this.#items.length === 0 ? undefined : this.#items[rng.int(this.#items.length)];
  }

  values(): readonly number[] {
    return this.#items;
  }
}
