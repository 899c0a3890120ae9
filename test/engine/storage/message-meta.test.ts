/**
 * message_meta read by hand (storage/message-meta) answers exactly what the table's own
 * decoder and resolveMeta answer, for every form a meta can be stored in: channel IDs
 * and row IDs of every integer width msgpack has, topics of every length class and of any
 * UTF-16 (lone surrogates included, which only msgpackr's decoder keeps), rows present,
 * renamed since the meta was written, or missing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getMessageMeta, getStoredMessageMeta } from "../../../src/engine/storage/message-meta.js";
import { openTables, type Tables } from "../../../src/engine/storage/tables.js";
import { putTopicRow, resolveMeta, type StoredMessageMeta } from "../../../src/engine/storage/topic-rows.js";

let dir: string;
let tables: Tables;

/** Rows 1 and 2 exist (1 renamed: its name is no meta's), row 3 does not. */
const ROW_RENAMED = 1;
const ROW_SAME = 2;
const ROW_MISSING = 3;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "parley-meta-"));
  tables = openTables(dir, { noSync: true });
  tables.env.transactionSync(() => {
    putTopicRow(tables, ROW_RENAMED, {
      channelId: 7,
      name: "renamed ✔",
      renames: [{ userId: 1, timestamp: 1, prevTopic: "before", topic: "renamed ✔", moved: false }],
    });
    putTopicRow(tables, ROW_SAME, { channelId: 7, name: "same", renames: [] });
  });
});
afterAll(() => {
  tables.env.close();
  rmSync(dir, { recursive: true, force: true });
});

let nextId = 1;
function stored(meta: StoredMessageMeta): number {
  const id = nextId++;
  tables.env.transactionSync(() => tables.messageMeta.putSync(id, meta));
  return id;
}

function expectSameAsTable(id: number): void {
  const expected = tables.messageMeta.get(id) as StoredMessageMeta;
  expect(getStoredMessageMeta(tables, id)).toStrictEqual(expected);
  tables.topicRowCache.clear();
  expect(getMessageMeta(tables, id)).toStrictEqual(resolveMeta(tables, expected));
  // And again with the rows held in the cache.
  expect(getMessageMeta(tables, id)).toStrictEqual(resolveMeta(tables, expected));
}

const INTS = [
  0,
  1,
  127,
  128,
  255,
  256,
  65_535,
  65_536,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 32 - 1,
  2 ** 32,
  2 ** 40,
  -1,
  -32,
  -33,
  -128,
  -129,
  -32_768,
  -32_769,
  -(2 ** 31),
  -(2 ** 31) - 1,
  1.5,
];

/** Row IDs (uint32 keys from 1) of every width, none of them a row. */
const MISSING_ROWS = INTS.filter((n) => Number.isInteger(n) && n > 3 && n < 2 ** 32);

describe("message_meta read by hand", () => {
  it("answers the table's decode for every integer width, string length class and row", () => {
    const topics = ["", "a", "x".repeat(31), "x".repeat(32), "y".repeat(255), "z".repeat(256), "w".repeat(70_000)];
    for (const where of INTS)
      for (const topic of topics) {
        expectSameAsTable(stored([where, topic]));
        for (const row of [ROW_RENAMED, ROW_SAME, ROW_MISSING, ...MISSING_ROWS])
          expectSameAsTable(stored([where, topic, row]));
      }
  });

  it("answers the table's decode for any UTF-16 topic (non-ASCII, astral, lone surrogates, U+FFFD)", () => {
    const topic = fc.oneof(
      fc.string({ unit: "binary", maxLength: 80 }),
      fc.string({ unit: "grapheme", maxLength: 80 }),
      fc.constantFrom("café", "日本語", "😀 launch", "\uD800", "a\uDC00b", "\uFFFD", "✔ done"),
    );
    const row = fc.option(fc.constantFrom(ROW_RENAMED, ROW_SAME, ROW_MISSING), { nil: undefined });
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 31), max: 2 ** 32 - 1 }), topic, row, (where, name, rowId) => {
        expectSameAsTable(stored(rowId === undefined ? [where, name] : [where, name, rowId]));
      }),
      { numRuns: 400 },
    );
  });

  it("answers undefined for a message without meta", () => {
    expect(getStoredMessageMeta(tables, 4_000_000_000)).toBeUndefined();
    expect(getMessageMeta(tables, 4_000_000_000)).toBeUndefined();
  });
});
