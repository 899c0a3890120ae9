/**
 * @module storage/snapshot
 * An online copy of a data directory's LMDB environment, safe while a server writes
 * to it. It does not take the one-writer lock (the server holds it, and a backup
 * writes nothing there): it opens the environment read-only, which only takes a reader
 * slot, and LMDB's mdb_env_copy2 copies the state of one read transaction, so the copy
 * is exactly the store as of one commit. Every write acknowledged before the copy
 * began is a committed transaction and is in it.
 */
import { existsSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { open } from "lmdb";
import { StorageError } from "../errors.js";
import { MAX_DBS } from "./tables.js";

/** LMDB's file in an environment directory (the one file a snapshot writes). */
export const ENVIRONMENT_FILE = "data.mdb";

export interface SnapshotOptions {
  /** Rewrite the copy without free pages (smaller, a little slower). Default true. */
  readonly compact?: boolean;
  /** Called while copying with bytes written so far and an upper estimate of the total. */
  readonly onProgress?: (bytes: number, estimatedBytes: number) => void;
}

export interface SnapshotResult {
  /** Size of the copy's environment file. */
  readonly bytes: number;
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * Copies the environment in `dir` to `destDir` (created; must not hold an
 * environment). Works whether or not another process has `dir` open.
 */
export async function snapshotEnvironment(
  dir: string,
  destDir: string,
  options: SnapshotOptions = {},
): Promise<SnapshotResult> {
  if (!existsSync(join(dir, ENVIRONMENT_FILE)))
    throw new StorageError(`${dir} holds no parley store (no ${ENVIRONMENT_FILE})`);
  const target = join(destDir, ENVIRONMENT_FILE);
  if (existsSync(target)) throw new StorageError(`${target} exists already`);
  mkdirSync(destDir, { recursive: true });
  // noSubdir: false as in openTables; readOnly takes a reader slot and nothing else.
  const env = open({ path: dir, readOnly: true, noSubdir: false, maxDbs: MAX_DBS, compression: false });
  try {
    const stats = env.getStats() as Record<string, unknown>;
    const pageSize = typeof stats["pageSize"] === "number" ? stats["pageSize"] : 4096;
    const lastPage = typeof stats["lastPageNumber"] === "number" ? stats["lastPageNumber"] : 0;
    const estimate = (lastPage + 1) * pageSize;
    const report = options.onProgress;
    const timer = report ? setInterval(() => report(fileSize(target), estimate), 200) : null;
    try {
      await env.backup(destDir, options.compact ?? true);
    } finally {
      if (timer) clearInterval(timer);
    }
    const bytes = fileSize(target);
    report?.(bytes, Math.max(bytes, estimate));
    return { bytes };
  } finally {
    await env.close();
  }
}
