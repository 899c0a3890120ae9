/**
 * The per-user rate limit of `parley serve --workers` (src/http/shared-limits): the
 * writer's limiter, served over a Unix socket, is one bucket for every reader asking;
 * while the writer is away, readers let requests through.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RateLimiter } from "../../src/http/rate-limit.js";
import { RemoteRateLimiter, serveRateLimits } from "../../src/http/shared-limits.js";

const dir = mkdtempSync(join(tmpdir(), "parley-limits-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("shared rate limits", () => {
  it("counts every reader's requests in one bucket", async () => {
    const socket = join(dir, "limits.sock");
    const server = await serveRateLimits(new RateLimiter({ requests: 3, windowSeconds: 3600 }, () => 0), socket);
    const [a, b] = [new RemoteRateLimiter(socket), new RemoteRateLimiter(socket)];
    const decisions = [await a.take(7), await b.take(7), await a.take(7), await b.take(7), await a.take(8)];
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, true]);
    expect(decisions.map((d) => d.headers.find(([n]) => n === "X-RateLimit-Remaining")?.[1])).toEqual([
      "2",
      "1",
      "0",
      "0",
      "2",
    ]);
    expect(decisions[3]!.retryAfter).toBeGreaterThan(0);
    // Many in flight on one connection: each answer reaches its own request.
    const burst = await Promise.all(Array.from({ length: 50 }, (_, i) => a.take(100 + (i % 2))));
    expect(burst.filter((d) => d.allowed)).toHaveLength(6);
    a.close();
    b.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it("lets requests through while the writer is away", async () => {
    const remote = new RemoteRateLimiter(join(dir, "nobody.sock"));
    const decision = await remote.take(1);
    expect(decision).toEqual({ allowed: true, retryAfter: 0, headers: [] });
    remote.close();
  });
});
