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
import { RemoteLimits, serveSharedLimits, type ServerLimits } from "../../src/http/shared-limits.js";
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

  it("lets requests through while the writer is away", async () => {
    const remote = new RemoteLimits(join(dir, "nobody.sock"));
    const decision = await remote.admit("10.0.0.1", 1);
    expect([decision.refusal, decision.rate]).toEqual([null, null]);
    decision.release();
    remote.close();
  });
});
