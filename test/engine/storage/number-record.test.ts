import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../../src/engine/index.js";
import { internals } from "../../../src/engine/internal.js";
import { numberRecordValue } from "../../../src/engine/storage/number-record.js";
import { seedRealm, tempStore, type TempStore } from "../../support/temp-store.js";

let t: TempStore;
let s: Store;

beforeEach(() => {
  t = tempStore();
  s = t.store;
});
afterEach(() => t.cleanup());

/** lmdb-js's own encoding in a table without shared structures (its encoder is not in its typings). */
const tableBytes = (db: unknown, value: unknown): string =>
  Buffer.from((db as { encoder: { encode(v: unknown): Uint8Array } }).encoder.encode(value)).toString("hex");
/** numberRecordValue's bytes (lmdb-js's asBinary wrapper holds them under this key), or null for the record. */
const ourBytes = (db: Parameters<typeof numberRecordValue>[0], record: Record<string, number>): string | null => {
  const value = numberRecordValue(db, record);
  if (value === record) return null;
  return Buffer.from((value as Record<string, Uint8Array>)["\x10binary-data\x02"]!).toString("hex");
};

describe("numberRecordValue (the counters record every commit writes)", () => {
  it("makes the meta table encoder's bytes at every size of integer", () => {
    const meta = internals(s).tables.meta;
    const counters = { ...internals(s).counters };
    const keys = Object.keys(counters);
    const sizes = [0, 1, 0x3f, 0x40, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 123_456_789, 0xffffffff];
    for (const [i, value] of sizes.entries()) {
      const record = Object.fromEntries(keys.map((k, j) => [k, sizes[(i + j) % sizes.length]!]));
      record[keys[0]!] = value;
      expect(ourBytes(meta, record)).toBe(tableBytes(meta, record));
    }
    // Another key list gets its own definition.
    expect(ourBytes(meta, { a: 1, b: 300 })).toBe(tableBytes(meta, { a: 1, b: 300 }));
  });

  it("leaves anything but unsigned 32-bit integers to the table's encoder", () => {
    const meta = internals(s).tables.meta;
    for (const odd of [-1, 1.5, 2 ** 32, Number.NaN]) expect(ourBytes(meta, { a: 1, b: odd })).toBeNull();
  });

  it("stores counters that the store and a reopened one read back as they were", () => {
    const state = internals(s);
    const w = seedRealm(s);
    s.sendMessage({ senderId: w.alice.id, to: { type: "channel", channel: "general", topic: "t" }, content: "hi" });
    const before = { ...state.counters };
    expect(before.nextMessageId).toBeGreaterThan(1);
    expect(state.tables.meta.get("counters")).toEqual(before);
    expect(internals(t.reopen()).counters).toEqual(before);
  });
});
