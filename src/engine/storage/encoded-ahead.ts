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

/** What a table stores for a value encoded ahead: lmdb-js's marker for bytes to store as they are. */
export type EncodedValue = ReturnType<typeof asBinary>;

interface TableEncoder {
  encode(value: unknown): Uint8Array;
}

/**
 * The table's encoding of `value`, copied: lmdb-js rewinds the encoder's buffer at each
 * put inside a transaction, which would overwrite bytes kept across turns.
 */
export function encodeAhead(db: Database<unknown, never> | Database<unknown, number>, value: unknown): Uint8Array {
  const encoder = (db as unknown as { encoder?: Partial<TableEncoder> }).encoder;
  if (typeof encoder?.encode !== "function") throw new Error("lmdb-js changed: a table has no encoder");
  return Uint8Array.prototype.slice.call((encoder as TableEncoder).encode(value));
}

/** The value to put for bytes from encodeAhead. */
export function encodedValue(bytes: Uint8Array): EncodedValue {
  return asBinary(bytes);
}
