import { describe, expect, it } from "vitest";
import { RateLimiter } from "../../src/http/rate-limit.js";
import { AuthFailureGuard } from "../../src/http/auth.js";
import { RateLimitError } from "../../src/engine/index.js";
import { seedRealm, tempStore } from "../support/temp-store.js";

describe("RateLimiter", () => {
  it("keeps one bucket per key; wait() reports without consuming and refills over time", () => {
    let now = 0;
    const limiter = new RateLimiter({ requests: 2, windowSeconds: 60 }, () => now);
    expect(limiter.wait("10.0.0.1")).toBe(0);
    limiter.take("10.0.0.1");
    limiter.take("10.0.0.1");
    expect(limiter.wait("10.0.0.1")).toBeCloseTo(30, 5);
    expect(limiter.wait("10.0.0.1")).toBeCloseTo(30, 5);
    expect(limiter.wait("10.0.0.2")).toBe(0);
    expect(limiter.take(7).allowed).toBe(true);
    now = 30_000;
    expect(limiter.wait("10.0.0.1")).toBe(0);
  });
});

describe("AuthFailureGuard", () => {
  it("counts failures per address and then refuses that address only", () => {
    const t = tempStore();
    try {
      const w = seedRealm(t.store);
      const guard = new AuthFailureGuard(new RateLimiter({ requests: 2, windowSeconds: 60 }));
      const basic = (key: string) => `Basic ${Buffer.from(`${w.alice.email}:${key}`).toString("base64")}`;
      const head = (remoteAddress: string, key: string) => ({
        authorization: basic(key),
        host: "localhost",
        remoteAddress,
        method: "GET",
        extra: { cookie: "", origin: "", "x-csrftoken": "" },
      });
      for (let i = 0; i < 2; i++)
        expect(() => guard.authenticate(t.store, head("10.0.0.1", "y".repeat(32)), "localhost")).toThrow(
          "Invalid API key",
        );
      expect(() => guard.authenticate(t.store, head("10.0.0.1", w.alice.apiKey), "localhost")).toThrow(RateLimitError);
      expect(guard.authenticate(t.store, head("10.0.0.2", w.alice.apiKey), "localhost").user.id).toBe(w.alice.id);
    } finally {
      t.cleanup();
    }
  });
});
