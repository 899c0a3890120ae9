/**
 * @module uploads/files
 * Where uploaded bytes live: DATA/uploads/<realm>/<2 hex>/<random> for a file (its
 * name is only in the engine's record, so no client text ever becomes part of a disk
 * path), `<that>.<format>` for its thumbnail, DATA/uploads/<realm>/tmp/ for files
 * still arriving. A file is received into a temporary file, fsynced, then renamed into
 * place and the directory fsynced: it is either whole at its final path or absent.
 */
import { mkdir, open, readdir, rename, rm, stat, unlink } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { isValidPathId } from "../engine/index.js";
import { TempFile } from "./temp-file.js";

export class UploadFiles {
  readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  #tempDir(realmId: number): string {
    return join(this.root, String(realmId), "tmp");
  }

  /** A fresh temporary file for realm `realmId`. */
  async createTemp(realmId: number, prefix = "upload"): Promise<TempFile> {
    const dir = this.#tempDir(realmId);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    return TempFile.create(join(dir, `${prefix}-${randomBytes(12).toString("hex")}`));
  }

  /** The temporary file of a tus upload (its ID is server-made, checked by the caller). */
  tusPath(realmId: number, uploadId: string): string {
    return join(this.#tempDir(realmId), `tus-${uploadId}`);
  }

  async createTusFile(realmId: number, uploadId: string): Promise<TempFile> {
    await mkdir(this.#tempDir(realmId), { recursive: true, mode: 0o700 });
    return TempFile.create(this.tusPath(realmId, uploadId));
  }

  /** The disk path of a stored file; throws for a path_id of another shape (never reached with one from a record). */
  pathOf(pathId: string): string {
    if (!isValidPathId(pathId)) throw new Error(`not a path_id: ${JSON.stringify(pathId).slice(0, 80)}`);
    const [realm, hash, random] = pathId.split("/");
    return join(this.root, realm!, hash!, random!);
  }

  thumbnailPathOf(pathId: string, format: string): string {
    if (!/^[0-9a-z.-]{1,40}$/.test(format)) throw new Error("bad thumbnail format");
    return `${this.pathOf(pathId)}.${format}`;
  }

  /** Moves a finished (fsynced, closed) temporary file to `pathId`'s place and makes the rename durable. */
  async install(temp: TempFile, pathId: string): Promise<void> {
    const target = this.pathOf(pathId);
    const dir = join(target, "..");
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await rename(temp.path, target);
    await syncDirectory(dir);
  }

  /** Deletes a stored file and its thumbnails; a missing file is not an error. */
  async remove(pathId: string): Promise<void> {
    const target = this.pathOf(pathId);
    const dir = join(target, "..");
    const base = target.slice(dir.length + 1);
    const names = await readdir(dir).catch(() => [] as string[]);
    await Promise.all(names.filter((n) => n === base || n.startsWith(`${base}.`)).map((n) => unlink(join(dir, n)).catch(() => undefined)));
  }

  async size(pathId: string): Promise<number | null> {
    return stat(this.pathOf(pathId)).then((s) => s.size, () => null);
  }

  /** Deletes temporary files left by a previous process (uploads that never finished). */
  async removeStaleTemporaries(): Promise<void> {
    const realms = await readdir(this.root).catch(() => [] as string[]);
    await Promise.all(realms.filter((r) => /^\d+$/.test(r)).map((r) => rm(this.#tempDir(Number(r)), { recursive: true, force: true })));
  }
}

/** fsync of a directory, so a rename in it survives a power loss. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
