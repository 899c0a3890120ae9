/**
 * @module engine/storage/copy-store-file
 * Copying an LMDB data file so that the copy behaves as a store LMDB wrote itself: bench
 * runs' working copies and `parley restore`.
 */
import { closeSync, ftruncateSync, openSync, readSync, writeSync } from "node:fs";

/** The bytes copyStoreFile writes at a time: LMDB's page, as LMDB itself writes a store's pages. */
const COPY_PAGE = 4096;
/** How much of the source copyStoreFile reads at a time. */
const COPY_READ = 1 << 20;

/**
 * Copies an LMDB data file a page at a time, keeping holes: a store once written through
 * LMDB's write map (round six's generator, bench/results/gen-scaling.md) is as long as
 * the whole map with the unused tail a hole, and copyFileSync would write that hole out
 * as zeros, so an all-zero page is left a hole (as `cp --sparse=always` did).
 *
 * A page at a time, not in large writes: the page cache keeps a file in folios as large
 * as the writes that filled it (ext4 since Linux 6.16), and every later commit that
 * dirties a 4 KiB page of a 2 MB folio makes its fdatasync walk the whole folio. A
 * copy made by `cp` left the whole store so; a server's store, written by LMDB's
 * page-sized writes and read through its random-access map, is not. On the 100k store
 * an edit's commit (22 pages) cost ~0.2 ms more CPU that way (bench/mutation-cpu).
 */
export function copyStoreFile(from: string, to: string): void {
  const source = openSync(from, "r");
  const target = openSync(to, "w");
  try {
    const buffer = Buffer.alloc(COPY_READ);
    let position = 0;
    for (;;) {
      const read = readSync(source, buffer, 0, COPY_READ, position);
      if (read <= 0) break;
      for (let at = 0; at < read; at += COPY_PAGE) {
        const end = Math.min(at + COPY_PAGE, read);
        if (!isZero(buffer, at, end)) writeSync(target, buffer, at, end - at, position + at);
      }
      position += read;
    }
    ftruncateSync(target, position);
  } finally {
    closeSync(source);
    closeSync(target);
  }
}

const ZERO_PAGE = Buffer.alloc(COPY_PAGE);

function isZero(buffer: Buffer, from: number, to: number): boolean {
  return buffer.compare(ZERO_PAGE, 0, to - from, from, to) === 0;
}
