/**
 * @module queries/storage-stats
 * Numbers an operator watches about the store's storage (metrics, backup manifests):
 * the LMDB map and how much of it is in use, the bitmap cache, the message count.
 */
import { FIRST_ID } from "../storage/tables.js";
import type { StatsReader } from "../directory.js";

export interface StorageStats {
  /** Bytes of address space LMDB maps (the file may grow up to it before a remap). */
  readonly mapSizeBytes: number;
  readonly pageSize: number;
  /**
   * Pages up to the highest one written (LMDB's last_pgno + 1): the file's used
   * extent. Pages freed by later writes are inside it and are reused before it grows.
   */
  readonly pagesUsed: number;
  /** Read transactions open on the environment, this process's and others' (a backup's). */
  readonly readers: number;
  /** Approximate bytes of decoded bitmaps held in the cache. */
  readonly bitmapCacheBytes: number;
}

function numberField(record: Record<string, unknown>, name: string): number {
  const value = record[name];
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** Cheap: reads LMDB's environment header, no iteration. */
export function storageStats(state: StatsReader): StorageStats {
  // lmdb-js types getStats() as {}; its fields are LMDB's mdb_env_info and mdb_stat.
  const stats = state.tables.env.getStats() as Record<string, unknown>;
  return {
    mapSizeBytes: numberField(stats, "mapSize"),
    pageSize: numberField(stats, "pageSize"),
    pagesUsed: numberField(stats, "lastPageNumber") + 1,
    readers: numberField(stats, "numReaders"),
    bitmapCacheBytes: state.bitmaps.cachedBytes,
  };
}

/** How many messages the store holds (iterates the keys: O(messages), for tools, not per request). */
export function countMessages(state: StatsReader): number {
  return state.tables.messages.getKeysCount({ start: FIRST_ID });
}
