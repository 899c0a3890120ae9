/**
 * @module accounts/password
 * Password hashing: scrypt from node:crypto, run on libuv's thread pool (never on the
 * event loop: one hash costs tens of milliseconds by design), a few at a time through
 * the process's hash pool (accounts/hash-pool.ts), which refuses what it cannot queue.
 * The parameters are stored with each hash, so they can be raised later without
 * invalidating old ones.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";
import { passwordHashPool } from "./hash-pool.js";

export interface PasswordRecord {
  readonly algorithm: "scrypt";
  /** CPU/memory cost, block size and parallelism, as scrypt names them. */
  readonly N: number;
  readonly r: number;
  readonly p: number;
  /** Base64. */
  readonly salt: string;
  /** Base64 of the derived key. */
  readonly hash: string;
}

/** OWASP's scrypt minimum (N=2^17 would be stronger but costs ~300 ms here per login). */
export const SCRYPT_COST = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;

function derive(plain: string, salt: Buffer, cost: { N: number; r: number; p: number }): Promise<Buffer> {
  // scrypt needs 128 * N * r bytes; Node's default ceiling (32 MiB) is exactly that at N=2^15, r=8.
  const options: ScryptOptions = { N: cost.N, r: cost.r, p: cost.p, maxmem: 256 * cost.N * cost.r };
  const normalized = plain.normalize("NFC");
  return passwordHashPool.run(
    () =>
      new Promise<Buffer>((resolve, reject) =>
        scrypt(normalized, salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key))),
      ),
  );
}

export async function hashPassword(
  plain: string,
  cost: { N: number; r: number; p: number } = SCRYPT_COST,
): Promise<PasswordRecord> {
  const salt = randomBytes(16);
  const key = await derive(plain, salt, cost);
  return {
    algorithm: "scrypt",
    N: cost.N,
    r: cost.r,
    p: cost.p,
    salt: salt.toString("base64"),
    hash: key.toString("base64"),
  };
}

/** True when `plain` matches; with the record's own parameters, in constant time. */
export async function verifyPassword(record: PasswordRecord, plain: string): Promise<boolean> {
  const expected = Buffer.from(record.hash, "base64");
  const key = await derive(plain, Buffer.from(record.salt, "base64"), record);
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** Shape check for records read back from storage. */
export function isPasswordRecord(value: unknown): value is PasswordRecord {
  if (typeof value !== "object" || value === null) return false;
  const r = value as Record<string, unknown>;
  return (
    r["algorithm"] === "scrypt" &&
    typeof r["N"] === "number" &&
    typeof r["r"] === "number" &&
    typeof r["p"] === "number" &&
    typeof r["salt"] === "string" &&
    typeof r["hash"] === "string"
  );
}
