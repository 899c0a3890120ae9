/**
 * BitmapStore.removeStored's absent marks: a probe that found none of a key's chunks
 * where the IDs fall says nothing of its other chunks (a topic deleted newest first
 * probes each reader's keys chunk by chunk), and warmStored reads what it would.
 */
import { afterEach, describe, expect, it } from "vitest";
import { internals } from "../../../src/engine/internal.js";
import { key } from "../../../src/engine/index/keys.js";
import { tempStore, type TempStore } from "../../support/temp-store.js";

const CHUNK = 1 << 16;

let t: TempStore;
afterEach(() => t?.cleanup());

describe("removeStored's probes", () => {
  it("a key with no chunk where the first IDs fell still loses an ID of an older chunk", () => {
    t = tempStore();
    const state = internals(t.store);
    const b = state.bitmaps;
    const k = key.userFlag(7, "starred");
    state.write(() => void b.addMany(k, [5, 9]));
    b.forgetKeys([k]);
    expect(state.write(() => b.removeStored(k, [CHUNK + 3, CHUNK + 4]))).toEqual([]);
    expect(state.write(() => b.removeStored(k, [5]))).toEqual([5]);
    expect([...b.get(k)]).toEqual([9]);
  });
});
