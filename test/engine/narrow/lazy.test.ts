/**
 * The lazy matching set (narrow/lazy.ts) against the set it stands for, on sets large
 * enough that walks take several doubling chunks and complements have long runs to
 * jump (a read set is "everything up to X" plus scattered IDs): every lastUpTo,
 * firstFrom and has answer equals the brute-force intersection's.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { RoaringBitmap32, type ReadonlyBitmap } from "../../../src/engine/index/bitmap-store.js";
import { bitmapSet, lazyMatching, nextAbsent, prevAbsent } from "../../../src/engine/narrow/lazy.js";
import type { Plan, PlanContext, PlanStep } from "../../../src/engine/narrow/plan.js";
import type { Term } from "../../../src/engine/narrow/terms.js";

const MAX_ID = 20_000;

/** A set of IDs: a few runs (some long) plus scattered IDs. */
const idSet = fc
  .record({
    runs: fc.array(fc.tuple(fc.integer({ min: 1, max: MAX_ID }), fc.integer({ min: 0, max: 6000 })), { maxLength: 4 }),
    scattered: fc.array(fc.integer({ min: 1, max: MAX_ID }), { maxLength: 400 }),
    density: fc.integer({ min: 1, max: 9 }),
  })
  .map(({ runs, scattered, density }) => {
    const set = new RoaringBitmap32(scattered);
    for (const [from, length] of runs) set.addRange(from, Math.min(from + length, MAX_ID + 1));
    // Thin some of it so that runs are not always whole.
    for (let id = density; id <= MAX_ID; id += density * 7) set.delete(id);
    return set;
  });

const TERM: Term = { kind: "sender", userId: 1, negated: false };
const CHANNEL: Term = { kind: "channel", channelId: 1, negated: false };

/** A shared-history plan (a channel step first): no personal universe involved. */
function sharedPlan(channel: ReadonlyBitmap, positives: ReadonlyBitmap[], negatives: ReadonlyBitmap[]): Plan {
  const steps: PlanStep[] = [
    { term: CHANNEL, complement: false, bitmap: channel },
    ...positives.map((bitmap) => ({ term: TERM, complement: false, bitmap })),
    ...negatives.map((bitmap) => ({ term: { ...TERM, negated: true }, complement: true, bitmap })),
  ];
  return { universe: "shared", steps };
}

/** A personal plan whose universe is `universe` (the personal history). */
function personalContext(universe: ReadonlyBitmap): PlanContext {
  const received = {
    personal: () => universe,
    restrictToPersonal: (_user: number, x: ReadonlyBitmap) => RoaringBitmap32.and(x, universe),
  };
  return { user: { id: 1, realmId: 1 }, received } as unknown as PlanContext;
}

function expectSame(
  lazy: ReturnType<typeof bitmapSet>,
  truth: ReadonlyBitmap,
  probes: readonly number[],
  limits: readonly number[],
): void {
  const exact = bitmapSet(truth);
  for (const limit of limits) {
    expect(lazy.lastUpTo(null, limit)).toEqual(exact.lastUpTo(null, limit));
    expect(lazy.firstFrom(null, limit)).toEqual(exact.firstFrom(null, limit));
    for (const p of probes) {
      expect(lazy.lastUpTo(p, limit), `lastUpTo(${p}, ${limit})`).toEqual(exact.lastUpTo(p, limit));
      expect(lazy.firstFrom(p, limit), `firstFrom(${p}, ${limit})`).toEqual(exact.firstFrom(p, limit));
    }
  }
  for (const p of probes) expect(lazy.has(p)).toBe(truth.has(p));
}

describe("lazyMatching", () => {
  it("equals the intersection for shared plans with positive and complement steps", () => {
    fc.assert(
      fc.property(
        idSet,
        fc.array(idSet, { maxLength: 2 }),
        fc.array(idSet, { maxLength: 2 }),
        fc.array(fc.integer({ min: 0, max: MAX_ID + 5 }), { maxLength: 8 }),
        (channel, positives, negatives, probes) => {
          const truth = new RoaringBitmap32(channel);
          for (const p of positives) truth.andInPlace(p);
          for (const n of negatives) truth.andNotInPlace(n);
          const lazy = lazyMatching({} as PlanContext, sharedPlan(channel, positives, negatives));
          expectSame(lazy, truth, probes, [1, 7, 100, 1000]);
        },
      ),
      { seed: 1201, numRuns: 80 },
    );
  });

  it("walks the universe, jumping over runs of the complements, when there is no positive step (is:unread, first_unread)", () => {
    fc.assert(
      fc.property(
        idSet,
        fc.array(idSet, { minLength: 1, maxLength: 2 }),
        fc.array(fc.integer({ min: 0, max: MAX_ID + 5 }), { maxLength: 8 }),
        (universe, negatives, probes) => {
          const truth = new RoaringBitmap32(universe);
          for (const n of negatives) truth.andNotInPlace(n);
          const plan: Plan = { universe: "personal", steps: [] };
          const lazy = lazyMatching(personalContext(universe), plan, negatives);
          expectSame(lazy, truth, probes, [1, 60, 150]);
        },
      ),
      { seed: 1202, numRuns: 80 },
    );
  });

  it("nextAbsent and prevAbsent find the nearest ID outside a set", () => {
    fc.assert(
      fc.property(idSet, fc.integer({ min: 0, max: MAX_ID + 2 }), (set, x) => {
        let next = x;
        while (set.has(next)) next++;
        let prev = x;
        while (prev >= 0 && set.has(prev)) prev--;
        expect(nextAbsent(set, x)).toBe(next);
        expect(prevAbsent(set, x)).toBe(prev);
      }),
      { seed: 1203, numRuns: 400 },
    );
  });
});
