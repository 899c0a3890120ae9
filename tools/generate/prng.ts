/**
 * @module tools/generate/prng
 * A small seeded PRNG (sfc32) and the samplers the generator needs. Our own, not
 * Math.random, so that one seed always yields the same realm on every machine.
 */

export class Rng {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(seed: number) {
    // splitmix32 spreads a small integer seed over the 128-bit state.
    let s = seed >>> 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.#a = next();
    this.#b = next();
    this.#c = next();
    this.#d = next();
    for (let i = 0; i < 12; i++) this.next();
  }

  /** Uniform in [0, 1). */
  next(): number {
    const t = (((this.#a + this.#b) >>> 0) + this.#d) >>> 0;
    this.#d = (this.#d + 1) >>> 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) >>> 0;
    this.#c = ((this.#c << 21) | (this.#c >>> 11)) >>> 0;
    this.#c = (this.#c + t) >>> 0;
    return t / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from an empty list");
    return items[this.int(items.length)]!;
  }

  /** A child generator: independent streams stay stable when one of them changes. */
  fork(salt: number): Rng {
    return new Rng((Math.floor(this.next() * 0xffffffff) ^ Math.imul(salt, 0x27d4eb2d)) >>> 0);
  }

  /** Fisher–Yates shuffle in place. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const tmp = items[i]!;
      items[i] = items[j]!;
      items[j] = tmp;
    }
    return items;
  }
}

/**
 * Zipf-distributed ranks in [0, n) with exponent s: rank r has weight 1/(r+1)^s.
 * A cumulative table and binary search: O(log n) per sample.
 */
export class Zipf {
  readonly #cdf: Float64Array;

  constructor(n: number, s: number) {
    this.#cdf = new Float64Array(Math.max(1, n));
    let total = 0;
    for (let r = 0; r < this.#cdf.length; r++) {
      total += 1 / Math.pow(r + 1, s);
      this.#cdf[r] = total;
    }
    for (let r = 0; r < this.#cdf.length; r++) this.#cdf[r]! /= total;
  }

  sample(rng: Rng): number {
    const u = rng.next();
    let lo = 0;
    let hi = this.#cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Probability of rank r. */
  weight(r: number): number {
    return r === 0 ? this.#cdf[0]! : this.#cdf[r]! - this.#cdf[r - 1]!;
  }
}
