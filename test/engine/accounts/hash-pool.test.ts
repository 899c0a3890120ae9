/**
 * The bounded pool password hashes run on (hardening round three, item 6): at most
 * `concurrency` at once, at most `maxQueued` waiting, the rest refused at once with
 * HashingBusyError (429 RATE_LIMIT_HIT with Retry-After on the wire); and every real
 * scrypt call of the engine goes through the process's pool.
 */
import { afterEach, describe, expect, it } from "vitest";
import { defaultHashPoolLimits, HashingBusyError, HashPool, hashPassword } from "../../../src/engine/index.js";
import { passwordHashPool, verifyPassword } from "../../../src/engine/index.js";

const CHEAP = { N: 1024, r: 8, p: 1 };

/** A task that finishes when the test says so, and records how many ran at once. */
function gated(counter: { now: number; peak: number }): { task: () => Promise<string>; open: () => void } {
  let open = (): void => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  return {
    open: () => open(),
    task: async () => {
      counter.now++;
      counter.peak = Math.max(counter.peak, counter.now);
      await gate;
      counter.now--;
      return "done";
    },
  };
}

afterEach(() => passwordHashPool.configure(defaultHashPoolLimits()));

describe("HashPool", () => {
  it("runs at most `concurrency` tasks at once, queues up to `maxQueued`, refuses the rest unrun", async () => {
    const pool = new HashPool({ concurrency: 2, maxQueued: 3 });
    const counter = { now: 0, peak: 0 };
    const tasks = Array.from({ length: 8 }, () => gated(counter));
    const outcomes = tasks.map((t) =>
      pool.run(t.task).then(
        (value) => value,
        (error: unknown) => error,
      ),
    );
    expect([pool.running, pool.queued, pool.refused]).toEqual([2, 3, 3]);
    const refused = await Promise.all(outcomes.slice(5));
    for (const error of refused) {
      expect(error).toBeInstanceOf(HashingBusyError);
      expect(error).toMatchObject({ code: "RATE_LIMIT_HIT", retryAfter: 1 });
    }
    for (const t of tasks) t.open();
    expect(await Promise.all(outcomes.slice(0, 5))).toEqual(["done", "done", "done", "done", "done"]);
    expect(counter.peak).toBe(2);
    expect([pool.started, pool.peakRunning, pool.running, pool.queued]).toEqual([5, 2, 0, 0]);
  });

  it("frees its slot when a task fails, so the queue moves on", async () => {
    const pool = new HashPool({ concurrency: 1, maxQueued: 1 });
    const failing = pool.run(() => Promise.reject(new Error("scrypt failed")));
    const next = pool.run(() => Promise.resolve(7));
    await expect(failing).rejects.toThrow("scrypt failed");
    expect(await next).toBe(7);
    expect(pool.running).toBe(0);
  });

  it("leaves half of libuv's threads to file I/O", () => {
    const { concurrency, maxQueued } = defaultHashPoolLimits();
    expect(concurrency).toBeGreaterThanOrEqual(1);
    expect(concurrency).toBeLessThanOrEqual(2);
    expect(maxQueued).toBeGreaterThan(0);
  });
});

describe("the process's password hash pool", () => {
  it("carries every hash and check: a full pool refuses them before scrypt runs", async () => {
    passwordHashPool.configure({ concurrency: 1, maxQueued: 0 });
    const counter = { now: 0, peak: 0 };
    const holder = gated(counter);
    const held = passwordHashPool.run(holder.task);
    const started = passwordHashPool.started;
    await expect(hashPassword("correct horse battery", CHEAP)).rejects.toBeInstanceOf(HashingBusyError);
    holder.open();
    await held;
    const record = await hashPassword("correct horse battery", CHEAP);
    expect(await verifyPassword(record, "correct horse battery")).toBe(true);
    expect(passwordHashPool.started - started).toBe(2);
  });
});
