import { describe, expect, it } from "vitest";
import { key, MAX_INDEX_KEY_BYTES } from "../../../src/engine/index/keys.js";

describe("index keys", () => {
  it("keeps every key of storable values as written", () => {
    const topic = "ü".repeat(30) + "😀".repeat(30); // 60 characters, 180 bytes
    expect(key.channelTopic(4, topic)).toBe(`ct:4:${"Ü".repeat(30)}${"😀".repeat(30)}`);
    expect(key.topic(1, "Lunch")).toBe("t:1:LUNCH");
    expect(key.term(1, "quixotic")).toBe("w:1:quixotic");
  });

  it("turns a key over the bound into a short digest, distinct per value", () => {
    const a = key.topic(1, "é".repeat(1000));
    const b = key.topic(1, `${"é".repeat(999)}e`);
    for (const k of [a, b, key.channelTopic(3, "x".repeat(100_000)), key.term(1, "y".repeat(600))]) {
      expect(k.startsWith("#")).toBe(true);
      expect(Buffer.byteLength(k)).toBeLessThanOrEqual(MAX_INDEX_KEY_BYTES);
    }
    expect(a).not.toBe(b);
    // Folding still applies before the digest: case variants are one key.
    expect(key.topic(1, "a".repeat(600))).toBe(key.topic(1, "A".repeat(600)));
  });
});
