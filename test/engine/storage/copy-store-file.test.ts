/**
 * copyStoreFile: the working copies bench runs make of a dataset's store, and restore's copy of a backup's
 * store, written a page at a time. It must be the same bytes, keep an all-zero stretch
 * a hole (a store written through LMDB's write map is as long as its whole map), and
 * copy a file whose length is not a whole number of pages.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { copyStoreFile } from "../../../src/engine/storage/copy-store-file.js";

let dir: string | undefined;
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("copyStoreFile", () => {
  it("copies every byte and leaves zero pages as holes", () => {
    dir = mkdtempSync(join(tmpdir(), "parley-copy-test-"));
    const from = join(dir, "from.mdb");
    const to = join(dir, "to.mdb");
    // 3 MiB + 100 bytes: data, 2 MiB of zeros, data, and a partial last page.
    const bytes = Buffer.alloc(3 * 1024 * 1024 + 100);
    for (let i = 0; i < 512 * 1024; i++) bytes[i] = (i * 7 + 1) & 0xff;
    for (let i = 2560 * 1024; i < bytes.length; i++) bytes[i] = (i * 13 + 5) & 0xff;
    writeFileSync(from, bytes);
    copyStoreFile(from, to);
    expect(readFileSync(to).equals(bytes)).toBe(true);
    // st_blocks counts 512-byte blocks allocated: the 2 MiB of zeros take none.
    expect(statSync(to).blocks * 512).toBeLessThan(bytes.length - 1024 * 1024);
  });

  it("copies an empty file", () => {
    dir = mkdtempSync(join(tmpdir(), "parley-copy-test-"));
    writeFileSync(join(dir, "from.mdb"), Buffer.alloc(0));
    copyStoreFile(join(dir, "from.mdb"), join(dir, "to.mdb"));
    expect(statSync(join(dir, "to.mdb")).size).toBe(0);
  });
});
