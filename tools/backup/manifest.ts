/**
 * @module tools/backup/manifest
 * The layout of a parley backup and its manifest, shared by `parley backup` and
 * `parley restore`:
 *
 *   DEST/manifest.json   written last (atomically): a backup without it is incomplete
 *   DEST/data/...        the data directory's files as they are restored: the LMDB
 *                        snapshot (data.mdb), the configuration and uploaded files
 *
 * Every file under data/ is listed in the manifest with its size and SHA-256, so a
 * restore can refuse a damaged or altered backup before it writes anything.
 */
import { createHash } from "node:crypto";
import {
  closeSync,
  createReadStream,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, relative, sep } from "node:path";

export const MANIFEST_FILE = "manifest.json";
export const BACKUP_DATA_DIR = "data";
export const BACKUP_FORMAT = "parley-backup";
export const BACKUP_VERSION = 1;

/**
 * Configuration files of a data directory that a backup carries (those present).
 * secrets.json holds the camo key the stored messages' image URLs are signed with.
 */
export const CONFIG_FILES = ["parley.json", "demo-login.json", "secrets.json"] as const;
/** Uploaded files' directory (parley has no uploads yet; copied when present). */
export const UPLOADS_DIR = "uploads";

export interface ManifestFile {
  /** Relative to DEST/data, with "/" separators. */
  readonly path: string;
  readonly bytes: number;
  readonly sha256: string;
}

export interface Manifest {
  readonly format: typeof BACKUP_FORMAT;
  readonly version: number;
  readonly created_at: string;
  /** The data directory backed up (absolute). */
  readonly source: string;
  readonly compacted: boolean;
  readonly message_count: number;
  readonly last_message_id: number;
  readonly realms: number;
  readonly total_bytes: number;
  readonly duration_ms: number;
  readonly files: readonly ManifestFile[];
  /** What was in the data directory and deliberately left out, with why. */
  readonly not_included: readonly string[];
}

/** Streams a file through SHA-256, reporting bytes read. */
export function sha256File(path: string, onBytes?: (n: number) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash("sha256");
    const stream = createReadStream(path);
    stream.on("data", (chunk) => {
      hash.update(chunk);
      onBytes?.(chunk.length);
    });
    stream.on("error", reject);
    stream.on("end", () => resolve(hash.digest("hex")));
  });
}

/** Every regular file under `dir`, as paths relative to it with "/" separators, sorted. */
export function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (current: string): void => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) out.push(relative(dir, path).split(sep).join("/"));
    }
  };
  walk(dir);
  return out.sort();
}

export function fileBytes(path: string): number {
  return statSync(path).size;
}

/** Writes `path` durably and atomically (temporary file, fsync, rename). */
export function writeFileDurably(path: string, text: string): void {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, text);
  syncFile(tmp);
  renameSync(tmp, path);
}

export function syncFile(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** True when `dir` does not exist or is an empty directory. */
export function isMissingOrEmptyDir(dir: string): boolean {
  try {
    return statSync(dir).isDirectory() && readdirSync(dir).length === 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return true;
    throw error;
  }
}

/** Reads and checks DEST/manifest.json; the error says what is wrong with --from. */
export function readManifest(backupDir: string): Manifest {
  const path = join(backupDir, MANIFEST_FILE);
  let raw: string;
  try {
    raw = readFileSync(path, "utf8");
  } catch {
    throw new Error(
      `${backupDir} is not a complete parley backup: it has no ${MANIFEST_FILE} (a backup that was interrupted has none)`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new Error(`${path} is not valid JSON`);
  }
  if (typeof value !== "object" || value === null) throw new Error(`${path} is not a parley backup manifest`);
  const v = value as Record<string, unknown>;
  if (v["format"] !== BACKUP_FORMAT)
    throw new Error(`${path} is not a parley backup manifest (format ${JSON.stringify(v["format"])})`);
  if (v["version"] !== BACKUP_VERSION)
    throw new Error(
      `${path} has backup format version ${String(v["version"])}; this parley reads version ${BACKUP_VERSION}`,
    );
  const files = v["files"];
  if (!Array.isArray(files)) throw new Error(`${path} lists no files`);
  const parsedFiles: ManifestFile[] = files.map((f: unknown, i) => {
    const r = (typeof f === "object" && f !== null ? f : {}) as Record<string, unknown>;
    const filePath = r["path"];
    const bytes = r["bytes"];
    const sha = r["sha256"];
    // Paths stay inside the backup and the restored directory.
    if (
      typeof filePath !== "string" ||
      filePath === "" ||
      filePath.startsWith("/") ||
      filePath.split("/").includes("..")
    )
      throw new Error(`${path}: files[${i}] has a bad path`);
    if (
      typeof bytes !== "number" ||
      !Number.isInteger(bytes) ||
      bytes < 0 ||
      typeof sha !== "string" ||
      !/^[0-9a-f]{64}$/.test(sha)
    )
      throw new Error(`${path}: files[${i}] (${filePath}) has no valid size and sha256`);
    return { path: filePath, bytes, sha256: sha };
  });
  const int = (name: string): number => {
    const n = v[name];
    if (typeof n !== "number" || !Number.isInteger(n) || n < 0) throw new Error(`${path}: ${name} is missing`);
    return n;
  };
  return {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    created_at: typeof v["created_at"] === "string" ? v["created_at"] : "",
    source: typeof v["source"] === "string" ? v["source"] : "",
    compacted: v["compacted"] === true,
    message_count: int("message_count"),
    last_message_id: int("last_message_id"),
    realms: int("realms"),
    total_bytes: int("total_bytes"),
    duration_ms: int("duration_ms"),
    files: parsedFiles,
    not_included: Array.isArray(v["not_included"])
      ? v["not_included"].filter((x): x is string => typeof x === "string")
      : [],
  };
}
