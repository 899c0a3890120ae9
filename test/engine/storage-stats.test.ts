/**
 * Store#storageStats and Store#countMessages: what metrics and backup manifests read.
 */
import { afterEach, describe, expect, it } from "vitest";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";

let temp: TempStore;
afterEach(() => temp.cleanup());

describe("storage stats", () => {
  it("reports the map, pages in use growing with writes, the bitmap cache and the message count", () => {
    temp = tempStore();
    const { owner } = seedRealm(temp.store);
    const before = temp.store.storageStats();
    expect(before.pageSize).toBeGreaterThan(0);
    expect(before.mapSizeBytes).toBeGreaterThanOrEqual(before.pagesUsed * before.pageSize);
    expect(temp.store.countMessages()).toBe(0);

    for (let i = 0; i < 200; i++) {
      temp.store.sendMessage({
        senderId: owner.id,
        to: { type: "channel", channel: "general", topic: `t${i % 7}` },
        content: `message ${i} ${"x".repeat(500)}`,
      });
    }
    const after = temp.store.storageStats();
    expect(after.pagesUsed).toBeGreaterThan(before.pagesUsed);
    expect(after.bitmapCacheBytes).toBeGreaterThan(0);
    expect(temp.store.countMessages()).toBe(200);
    expect(temp.store.countMessages()).toBe(temp.store.lastMessageId);
  });
});
