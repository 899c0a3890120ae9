/**
 * @module storage/encoded-ahead
 * Values encoded by their table's own encoder before the write transaction that stores
 * them, so that a large write (a topic move's thousands of records) only copies bytes
 * while it holds the event loop. For a table with shared structures, a record shape
 * msgpackr has not seen yet is saved at key 0 in a transaction of its own, as lmdb-js
 * does: harmless, a structure is only ever added, and cluster replicas encode with their
 * own (replication.ts decodes such a put before it travels).
 */
import { asBinary, type Database } from "lmdb";
import { RESET_BUFFER_MODE, REUSE_BUFFER_MODE } from "msgpackr";

/** What a table stores for a value encoded ahead: lmdb-js's marker for bytes to store as they are. */
export type EncodedValue = ReturnType<typeof asBinary>;

interface TableEncoder {
  /** In REUSE_BUFFER_MODE, the encoder's whole buffer, the value's bytes from `start` to `end`. */
  encode(value: unknown, mode: number): Uint8Array & { start?: number; end?: number };
}

/**
 * Encoded values are copied into shared slabs of ARENA_BYTES: one ArrayBuffer per few
 * hundred values instead of one each (a 5,000-message move's 10,000 values, each its
 * own ArrayBuffer, were a sixth of its CPU time in garbage collection).
 */
const ARENA_BYTES = 1 << 16;
let arena = new Uint8Array(ARENA_BYTES);
let arenaUsed = 0;

function keep(bytes: Uint8Array): Uint8Array {
  if (bytes.length > ARENA_BYTES >>> 4) return bytes.slice();
  if (arenaUsed + bytes.length > ARENA_BYTES) {
    arena = new Uint8Array(ARENA_BYTES);
    arenaUsed = 0;
  }
  const out = arena.subarray(arenaUsed, arenaUsed + bytes.length);
  out.set(bytes);
  arenaUsed += bytes.length;
  return out;
}

/**
 * The table's encoding of `value`, copied: it is made in the encoder's own buffer, which
 * the next encoding (lmdb-js's at each put too) writes over, as lmdb-js encodes inside
 * a transaction (msgpackr's REUSE_BUFFER_MODE | RESET_BUFFER_MODE).
 */
export function encodeAhead(db: Database<unknown, never> | Database<unknown, number>, value: unknown): Uint8Array {
  const encoder = (db as unknown as { encoder?: Partial<TableEncoder> }).encoder;
  if (typeof encoder?.encode !== "function") throw new Error("lmdb-js changed: a table has no encoder");
  const out = (encoder as TableEncoder).encode(value, REUSE_BUFFER_MODE | RESET_BUFFER_MODE);
  return keep(out.start === undefined ? out : out.subarray(out.start, out.end));
}

/** The value to put for bytes from encodeAhead. */
export function encodedValue(bytes: Uint8Array): EncodedValue {
  return asBinary(bytes);
}
