/**
 * The limits `parley serve --workers` keeps for the whole server (src/http/shared-limits):
 * the writer's per-user bucket, open requests per address and blocked addresses, served
 * over a Unix socket, are one count for every reader asking; a reader that goes away
 * frees what it held; while the writer is away, readers let requests through.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RateLimiter } from "../../src/http/rate-limit.js";
import { OpenRequests } from "../../src/http/load-limits.js";
import {
  LEASE_MS,
  RemoteLimits,
  serveSharedLimits,
  type SharedAdmission,
  type ServerLimits,
} from "../../src/http/shared-limits.js";
import { sleep } from "../support/serve-process.js";

const dir = mkdtempSync(join(tmpdir(), "parley-limits-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function limits(overrides: Partial<ServerLimits> = {}): ServerLimits {
  return {
    open: new OpenRequests({ perAddress: 100, total: 1000 }),
    authFailures: null,
    rate: new RateLimiter({ requests: 3, windowSeconds: 3600 }, () => 0),
    ...overrides,
  };
}

async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await sleep(10);
  if (!check()) throw new Error(`timed out waiting for ${what}`);
}

describe("shared limits", () => {
  it("counts every reader's requests in one bucket", async () => {
    const socket = join(dir, "rate.sock");
    const server = await serveSharedLimits(limits(), socket);
    const [a, b] = [new RemoteLimits(socket), new RemoteLimits(socket)];
    const decisions = [
      await a.admit("10.0.0.1", 7),
      await b.admit("10.0.0.1", 7),
      await a.admit("10.0.0.1", 7),
      await b.admit("10.0.0.2", 7),
      await a.admit("10.0.0.1", 8),
    ];
    expect(decisions.map((d) => d.rate?.allowed)).toEqual([true, true, true, false, true]);
    expect(decisions.map((d) => d.refusal?.code ?? null)).toEqual([null, null, null, "RATE_LIMIT_HIT", null]);
    expect(decisions.map((d) => d.rate?.headers.find(([n]) => n === "X-RateLimit-Remaining")?.[1])).toEqual([
      "2",
      "1",
      "0",
      "0",
      "2",
    ]);
    expect(decisions[3]!.rate!.retryAfter).toBeGreaterThan(0);
    // Many in flight on one connection: each answer reaches its own request.
    const burst = await Promise.all(Array.from({ length: 50 }, (_, i) => a.admit("10.0.0.3", 100 + (i % 2))));
    expect(burst.filter((d) => d.rate?.allowed)).toHaveLength(6);
    a.close();
    b.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it("caps requests in progress per address across readers, and frees a gone reader's", async () => {
    const socket = join(dir, "open.sock");
    const open = new OpenRequests({ perAddress: 2, total: 1000 });
    const server = await serveSharedLimits(limits({ open }), socket);
    const [a, b] = [new RemoteLimits(socket), new RemoteLimits(socket)];
    const first = await a.admit("10.0.0.9", null);
    const second = await b.admit("10.0.0.9", 1);
    const third = await a.admit("10.0.0.9", null);
    expect([first.refusal, second.refusal]).toEqual([null, null]);
    expect(third.refusal?.code).toBe("SERVER_BUSY");
    expect(third.refusal?.message).toMatch(/from this address/);
    // Another address is not held back; a freed slot lets the next one in.
    expect((await b.admit("10.0.0.10", null)).refusal).toBeNull();
    first.release();
    first.release();
    const fourth = await a.admit("10.0.0.9", null);
    expect(fourth.refusal).toBeNull();
    expect(open.open).toBe(3);
    // Reader b goes away holding two slots (10.0.0.9 and 10.0.0.10): the writer frees them.
    b.close();
    await until("b's slots freed", () => open.open === 1);
    expect((await a.admit("10.0.0.9", null)).refusal).toBeNull();
    a.close();
    await until("a's slots freed", () => open.open === 0);
    await new Promise((resolve) => server.close(resolve));
  });

  it("refuses an authenticated request from an address blocked for failed authentication", async () => {
    const socket = join(dir, "blocked.sock");
    const authFailures = new RateLimiter({ requests: 2, windowSeconds: 60 }, () => 0);
    const server = await serveSharedLimits(limits({ authFailures }), socket);
    authFailures.take("10.0.0.5");
    authFailures.take("10.0.0.5");
    const reader = new RemoteLimits(socket);
    const blocked = await reader.admit("10.0.0.5", 1);
    expect(blocked.refusal?.code).toBe("RATE_LIMIT_HIT");
    // Without credentials (a public endpoint) the block does not apply, as on a single server.
    expect((await reader.admit("10.0.0.5", null)).refusal).toBeNull();
    expect((await reader.admit("10.0.0.6", 1)).refusal).toBeNull();
    reader.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it("admits from the slots a reader leased, and gives back those unused for LEASE_MS", async () => {
    const socket = join(dir, "slots.sock");
    const open = new OpenRequests({ perAddress: 100, total: 1000 });
    const server = await serveSharedLimits(limits({ open, rate: null }), socket);
    const reader = new RemoteLimits(socket);
    const first = await reader.admit("10.0.0.20", null);
    const second = await reader.admit("10.0.0.20", 1);
    expect(open.open).toBe(2);
    // The first's slot stays with the reader (the second is in progress): the next request takes it, unasked.
    first.release();
    const third = reader.admit("10.0.0.20", 1);
    expect(third).not.toBeInstanceOf(Promise);
    expect((third as SharedAdmission).refusal).toBeNull();
    expect(open.open).toBe(2);
    // Slots no request needed for a whole LEASE_MS go back to the writer (the timer calls this every LEASE_MS).
    second.release();
    (third as SharedAdmission).release();
    reader.giveBackUnused();
    expect(open.open).toBe(2);
    reader.giveBackUnused();
    await until("the slots given back", () => open.open === 0);
    reader.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it("leases a user's tokens, answering with the bucket's headers, and gives back the unused ones", async () => {
    const socket = join(dir, "tokens.sock");
    const rate = new RateLimiter({ requests: 200, windowSeconds: 60 }, () => 0);
    const server = await serveSharedLimits(limits({ rate }), socket);
    let now = 1_000_000;
    const [a, b] = [new RemoteLimits(socket, () => now), new RemoteLimits(socket, () => now)];
    const remaining = (d: SharedAdmission): string | undefined =>
      d.rate?.headers.find(([n]) => n === "X-RateLimit-Remaining")?.[1];
    const first = await a.admit("10.0.0.30", 7);
    expect(remaining(first)).toBe("199");
    // The writer took 8 tokens for a: its next 7 requests of user 7 are answered from them, as one server counts
    // (the second asks for a slot of the address; the others take the slot it leaves, first still in progress).
    const second = await a.admit("10.0.0.30", 7);
    second.release();
    const local = Array.from({ length: 6 }, () => {
      const d = a.admit("10.0.0.30", 7);
      if (!(d instanceof Promise)) d.release();
      return d;
    });
    expect(local.some((d) => d instanceof Promise)).toBe(false);
    expect([second, ...local].map((d) => remaining(d as SharedAdmission))).toEqual([
      "198",
      "197",
      "196",
      "195",
      "194",
      "193",
      "192",
    ]);
    // b's count does not see a's requests since a's lease, only its tokens: 192 left, b takes 8.
    expect(remaining(await b.admit("10.0.0.30", 7))).toBe("191");
    // a's lease is used up: it asks (a token for this request, 7 more).
    expect(remaining(await a.admit("10.0.0.30", 7))).toBe("183");
    // Past LEASE_MS a's 7 unused tokens go back before it asks again: 176 + 7 in the bucket, then 8 taken.
    now += LEASE_MS;
    expect(remaining(await a.admit("10.0.0.30", 7))).toBe("182");
    first.release();
    a.close();
    b.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it("asks about a block for failed authentication again LEASE_MS after the last answer", async () => {
    const socket = join(dir, "recheck.sock");
    const authFailures = new RateLimiter({ requests: 1, windowSeconds: 60 }, () => 0);
    const server = await serveSharedLimits(limits({ authFailures, rate: null }), socket);
    let now = 1_000_000;
    const reader = new RemoteLimits(socket, () => now);
    const held = await reader.admit("10.0.0.40", 1);
    (await reader.admit("10.0.0.40", 1)).release();
    // The address is blocked at the writer; the reader's lease answered for it a moment ago.
    authFailures.take("10.0.0.40");
    expect((reader.admit("10.0.0.40", 1) as SharedAdmission).refusal).toBeNull();
    now += LEASE_MS;
    expect((await reader.admit("10.0.0.40", 1)).refusal?.code).toBe("RATE_LIMIT_HIT");
    held.release();
    reader.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it("lets requests through while the writer is away", async () => {
    const remote = new RemoteLimits(join(dir, "nobody.sock"));
    const decision = await remote.admit("10.0.0.1", 1);
    expect([decision.refusal, decision.rate]).toEqual([null, null]);
    decision.release();
    remote.close();
  });
});
