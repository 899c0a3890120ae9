import { describe, expect, it } from "vitest";
import { BoundedCache } from "../../../src/engine/index/bounded-cache.js";

describe("BoundedCache", () => {
  it("evicts least recently used entries to stay within its byte budget", () => {
    const cache = new BoundedCache<string, number>(100);
    cache.set("a", 1, 40);
    cache.set("b", 2, 40);
    expect(cache.get("a")).toBe(1); // a is now more recent than b
    cache.set("c", 3, 40);
    expect(cache.peek("b")).toBeUndefined();
    expect(cache.peek("a")).toBe(1);
    expect(cache.peek("c")).toBe(3);
    expect(cache.bytes).toBe(80);
  });

  it("keeps the entry being written even if it alone exceeds the budget, and tracks growth", () => {
    const cache = new BoundedCache<string, number>(100);
    cache.set("a", 1, 30);
    cache.set("big", 2, 150);
    expect(cache.peek("a")).toBeUndefined();
    expect(cache.peek("big")).toBe(2);
    cache.set("small", 3, 10);
    expect(cache.peek("big")).toBeUndefined();
    cache.resize("small", 20);
    expect(cache.bytes).toBe(30);
    cache.delete("small");
    expect(cache.bytes).toBe(0);
  });
});
