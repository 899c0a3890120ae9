/**
 * @module uploads/files
 * Where uploaded bytes live: DATA/uploads/<realm>/<2 hex>/<random> for a file (its
 * name is only in the engine's record, so no client text ever becomes part of a disk
 * path), `<that>.<format>` for its thumbnail, DATA/uploads/<realm>/tmp/ for files
 * still arriving. A file is received into a temporary file, fsynced, then renamed into
 * place and the directory fsynced: it is either whole at its final path or absent.
 *
 * What a crash can leave (issue #26, item 14) is cleaned up here: temporary files of
 * uploads that never finished (at start, before any new one is created; tus uploads
 * with a sidecar are resumed instead), and a file renamed into place whose record was
 * never written (no attachment names it), once it is older than ORPHAN_GRACE_MS so an
 * upload between its rename and its record is never touched.
 */
import { lstat, mkdir, open, readdir, rename, stat, unlink, writeFile } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { isValidPathId } from "../engine/index.js";
import { TempFile } from "./temp-file.js";

/**
 * A file in place but unrecorded for this long is a crash's orphan: an upload's record
 * follows its rename within milliseconds.
 */
export const ORPHAN_GRACE_MS = 3600 * 1000;

/**
 * Where a cluster keeps uploaded files' bytes for every node (src/cluster/uploads: JetStream's object store;
 * docs/cluster.md section 8). A node stores locally and puts here; a node missing a file gets it from here.
 */
export interface UploadReplica {
  /** Stores the file at `path` as `pathId`; resolves once it is stored durably. */
  put(pathId: string, path: string): Promise<void>;
  /** Writes `pathId`'s bytes to `path`; false when it is not stored. */
  get(pathId: string, path: string): Promise<boolean>;
  remove(pathId: string): Promise<void>;
}

export class UploadFiles {
  readonly root: string;
  /** New temporary files wait for this (the start's cleanup of the temporary folders). */
  #ready: Promise<unknown> = Promise.resolve();
  readonly #replica: UploadReplica | null;
  /** pathId -> its fetch from the replica under way (two readers of one missing file fetch it once). */
  readonly #fetching = new Map<string, Promise<boolean>>();

  constructor(root: string, replica: UploadReplica | null = null) {
    this.root = root;
    this.#replica = replica;
  }

  /** Puts a stored file in the cluster's replica (none: nothing to do); resolves once the replica has it. */
  async replicate(pathId: string): Promise<void> {
    await this.#replica?.put(pathId, this.pathOf(pathId));
  }

  /**
   * Whether the file is on this node's disk, fetching it from the cluster's replica first when it is not (a file
   * another node stored). Callers check before they open the file.
   */
  async ensureLocal(pathId: string): Promise<boolean> {
    const target = this.pathOf(pathId);
    if (await isFile(target)) return true;
    const replica = this.#replica;
    if (replica === null) return false;
    const pending = this.#fetching.get(pathId);
    if (pending) return pending;
    const fetching = (async () => {
      await mkdir(join(target, ".."), { recursive: true, mode: 0o700 });
      // Its own name per fetch, renamed whole into place: a reader never sees half a file.
      const partial = `${target}.${randomBytes(6).toString("hex")}.partial`;
      try {
        if (!(await replica.get(pathId, partial))) return false;
        await rename(partial, target);
        return true;
      } finally {
        await unlink(partial).catch(() => undefined);
      }
    })();
    this.#fetching.set(pathId, fetching);
    try {
      return await fetching;
    } finally {
      this.#fetching.delete(pathId);
    }
  }

  /** Holds the creation of temporary files until `work` (which may delete old ones) is done. */
  holdNewFilesUntil(work: Promise<unknown>): void {
    this.#ready = work.catch(() => undefined);
  }

  #tempDir(realmId: number): string {
    return join(this.root, String(realmId), "tmp");
  }

  /** A fresh temporary file for realm `realmId`. */
  async createTemp(realmId: number, prefix = "upload"): Promise<TempFile> {
    await this.#ready;
    const dir = this.#tempDir(realmId);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    return TempFile.create(join(dir, `${prefix}-${randomBytes(12).toString("hex")}`));
  }

  /** The temporary file of a tus upload (its ID is server-made, checked by the caller). */
  tusPath(realmId: number, uploadId: string): string {
    return join(this.#tempDir(realmId), `tus-${uploadId}`);
  }

  /** Its sidecar: the upload's facts, so that it survives a restart (uploads/tus). */
  tusSidecarPath(realmId: number, uploadId: string): string {
    return `${this.tusPath(realmId, uploadId)}.json`;
  }

  async createTusFile(realmId: number, uploadId: string): Promise<TempFile> {
    await this.#ready;
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

  /** Deletes a stored file and its thumbnails, and the replica's copy; a missing file is not an error. */
  async remove(pathId: string): Promise<void> {
    // Best effort: a copy left in the replica (NATS unreachable) is never served without its record.
    await this.#replica?.remove(pathId).catch(() => undefined);
    const target = this.pathOf(pathId);
    const dir = join(target, "..");
    const base = target.slice(dir.length + 1);
    const names = await readdir(dir).catch(() => [] as string[]);
    await Promise.all(
      names
        .filter((n) => n === base || n.startsWith(`${base}.`))
        .map((n) => unlink(join(dir, n)).catch(() => undefined)),
    );
  }

  async size(pathId: string): Promise<number | null> {
    return stat(this.pathOf(pathId)).then(
      (s) => s.size,
      () => null,
    );
  }

  /** The realms that have a folder here, with the names in their temporary folder. */
  async temporaries(): Promise<{ realmId: number; names: string[] }[]> {
    const realms = (await readdir(this.root).catch(() => [] as string[])).filter((r) => /^\d+$/.test(r));
    const namesIn = (realmId: number) => readdir(this.#tempDir(realmId)).catch(() => [] as string[]);
    return Promise.all(realms.map(async (r) => ({ realmId: Number(r), names: await namesIn(Number(r)) })));
  }

  /** Deletes `realmId`'s temporary files but those in `keep`; returns how many went. */
  async removeTemporaries(realmId: number, names: readonly string[], keep: ReadonlySet<string>): Promise<number> {
    const doomed = names.filter((name) => !keep.has(name));
    await Promise.all(doomed.map((name) => unlink(join(this.#tempDir(realmId), name)).catch(() => undefined)));
    return doomed.length;
  }

  /**
   * Deletes files in place that no record names (`recorded`: every attachment's
   * path_id) and that were last written more than `graceMs` ago, with their
   * thumbnails; also thumbnails half-made before a crash. Returns how many files went.
   */
  async removeOrphans(recorded: Iterable<string>, nowMs: number, graceMs = ORPHAN_GRACE_MS): Promise<number> {
    const owned = new Set<string>();
    for (const pathId of recorded) owned.add(pathId.slice(0, pathId.lastIndexOf("/")));
    let removed = 0;
    const realms = (await readdir(this.root).catch(() => [] as string[])).filter((r) => /^\d+$/.test(r));
    for (const realm of realms) {
      const entries = await readdir(join(this.root, realm)).catch(() => [] as string[]);
      const hashes = entries.filter((h) => /^[0-9a-f]{2}$/.test(h));
      for (const hash of hashes) {
        const dir = join(this.root, realm, hash);
        for (const name of await readdir(dir).catch(() => [] as string[])) {
          const base = name.split(".")[0]!;
          if (owned.has(`${realm}/${hash}/${base}`) && !name.endsWith(".partial")) continue;
          const path = join(dir, name);
          const facts = await lstat(path).catch(() => null);
          if (facts === null || !facts.isFile() || nowMs - facts.mtimeMs < graceMs) continue;
          if (
            await unlink(path).then(
              () => true,
              () => false,
            )
          )
            removed++;
        }
      }
    }
    return removed;
  }
}

/** Writes `text` to `path` so that it survives a crash or power loss whole or not at all. */
export async function writeFileDurably(path: string, text: string): Promise<void> {
  const partial = `${path}.partial`;
  const handle = await open(partial, "w", 0o600);
  try {
    await writeFile(handle, text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(partial, path);
  await syncDirectory(join(path, ".."));
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

function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}
