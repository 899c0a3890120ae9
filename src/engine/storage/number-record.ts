/**
 * @module storage/number-record
 * The counters record (write-coordinator puts it in the meta table at every commit),
 * encoded directly into the bytes lmdb-js's encoder of that table makes: msgpackr's
 * self-describing record, that is its definition (extension 0x72 naming record 0x40
 * and its keys) followed by each value. That encoder mints and forgets the definition
 * at each call: ~20-50 µs for the 27 counters, erratic (hundreds of µs at times), in
 * every write's transaction, against ~1 µs here. The definition is the table
 * encoder's own (asked once per key list), so the bytes are the same and every build,
 * follower and replica reads them as before.
 */
import { asBinary, type Database } from "lmdb";

interface TableEncoder {
  encode(value: unknown): Uint8Array;
}

/** Per table encoder and key list (joined by NUL), the record definition's bytes. */
const definitions = new WeakMap<TableEncoder, Map<string, Uint8Array>>();

const MAX_UINT32 = 0xffffffff;

function definitionOf(encoder: TableEncoder, keys: readonly string[]): Uint8Array {
  let byKeys = definitions.get(encoder);
  if (byKeys === undefined) definitions.set(encoder, (byKeys = new Map()));
  const id = keys.join("\0");
  let definition = byKeys.get(id);
  if (definition === undefined) {
    // Zeros take one byte each (a positive fixint): what precedes them is the definition.
    const zeros = Object.fromEntries(keys.map((k) => [k, 0]));
    const bytes = encoder.encode(zeros);
    definition = bytes.slice(0, bytes.length - keys.length);
    byKeys.set(id, definition);
  }
  return definition;
}

/**
 * The value to put in `db` (a table without shared structures) for a record of unsigned
 * 32-bit integers, as the table's encoder would write it; the record itself when a
 * value is anything else (the table encodes it then).
 */
export function numberRecordValue(db: Database<unknown, string>, record: Readonly<Record<string, number>>): unknown {
  const encoder = (db as unknown as { encoder?: Partial<TableEncoder> }).encoder;
  if (typeof encoder?.encode !== "function") throw new Error("lmdb-js changed: a table has no encoder");
  const keys = Object.keys(record);
  for (const k of keys) {
    const v = record[k]!;
    if (!Number.isInteger(v) || v < 0 || v > MAX_UINT32) return record;
  }
  const definition = definitionOf(encoder as TableEncoder, keys);
  const out = new Uint8Array(definition.length + 5 * keys.length);
  out.set(definition);
  let at = definition.length;
  for (const k of keys) {
    const v = record[k]!;
    // As msgpackr with records on: a positive fixint only below 0x40 (0x40-0x7f name records).
    if (v < 0x40) out[at++] = v;
    else if (v < 0x100) {
      out[at++] = 0xcc;
      out[at++] = v;
    } else if (v < 0x10000) {
      out[at++] = 0xcd;
      out[at++] = v >>> 8;
      out[at++] = v & 0xff;
    } else {
      out[at++] = 0xce;
      out[at++] = v >>> 24;
      out[at++] = (v >>> 16) & 0xff;
      out[at++] = (v >>> 8) & 0xff;
      out[at++] = v & 0xff;
    }
  }
  return asBinary(out.subarray(0, at));
}
