import { afterEach, describe, expect, it } from "vitest";
import type { MessageRenderer } from "../../src/engine/index.js";
import { renderMarkdown } from "../../src/markdown/index.js";
import { fingerprint } from "../support/snapshot.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";

describe("Store.warmUp", () => {
  let t: TempStore;
  afterEach(() => t.cleanup());

  it("runs the store's renderer over the corpus and writes nothing", () => {
    const seen: string[] = [];
    const spy: MessageRenderer = (content, context) => {
      seen.push(content);
      return renderMarkdown(content, context);
    };
    t = tempStore({ renderer: spy });
    seedRealm(t.store);
    const before = fingerprint(t.store);
    const result = t.store.warmUp(3);
    expect(result.rounds).toBe(3);
    expect(seen).toHaveLength(3);
    // The corpus exercises the inline rules a long message spends its time in.
    expect(seen[0]).toContain("**b** _i_");
    expect(seen[0]).toContain("@**Warm Up**");
    expect(fingerprint(t.store)).toBe(before);
    expect(t.store.verify().differences).toEqual([]);
  });

  it("a renderer that throws only ends the warm-up", () => {
    let calls = 0;
    t = tempStore({
      renderer: () => {
        calls++;
        throw new Error("broken renderer");
      },
    });
    expect(() => t.store.warmUp(4)).not.toThrow();
    expect(calls).toBe(1);
  });
});
