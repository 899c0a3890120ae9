/**
 * @module tools/import/tar
 * Reads an export tarball (.tar.gz, .tgz or .tar; the ustar, GNU and pax formats tar
 * writes) in one pass, checking every entry before any of its content is read, and
 * writes only the export's data files (.json at the top or in the one top folder) to
 * a fresh directory, and the files under uploads/, emoji/ and avatars/ (uploaded files,
 * custom emoji images, uploaded avatars), which the importer copies into the data
 * directory. Everything else (realm icons and logos) is counted and streamed past: the
 * importer does not read it.
 *
 * Refused, naming the entry, with nothing left behind: any entry but regular files,
 * directories and the metadata headers (symbolic and hard links, devices, FIFOs, GNU
 * sparse files), absolute paths and '..' components, a data file listed twice, and
 * anything past the limits (tools/import/limits.ts). The tar program is not used:
 * it would follow, create or overwrite whatever the archive says before a check
 * could see it.
 */
import { closeSync, constants, createReadStream, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { createGunzip } from "node:zlib";
import { describeBytes, ExportRefusedError, LIMIT_FLAGS, RATIO_FLOOR, type ExportLimits } from "./limits.js";

const BLOCK = 512;
/** Pax and GNU long-name headers are held in memory: a name, not content. */
const MAX_METADATA_BYTES = 1024 * 1024;

const REFUSED_TYPES: Readonly<Record<string, string>> = {
  "1": "a hard link",
  "2": "a symbolic link",
  "3": "a character device",
  "4": "a block device",
  "6": "a FIFO (named pipe)",
  "7": "a contiguous file",
  S: "a GNU sparse file",
  V: "a volume label",
  M: "a multi-volume continuation",
};

/** Pulls exact byte counts out of a stream of chunks. */
class ChunkReader {
  readonly #chunks: AsyncIterator<Buffer>;
  #pending: Buffer = Buffer.alloc(0);

  constructor(chunks: AsyncIterable<Buffer>) {
    this.#chunks = chunks[Symbol.asyncIterator]();
  }

  async #fill(): Promise<boolean> {
    const next = await this.#chunks.next();
    if (next.done === true) return false;
    this.#pending = this.#pending.length === 0 ? next.value : Buffer.concat([this.#pending, next.value]);
    return true;
  }

  /** Exactly n bytes (n small), or null when the stream ends first. */
  async take(n: number): Promise<Buffer | null> {
    while (this.#pending.length < n) if (!(await this.#fill())) return null;
    const out = this.#pending.subarray(0, n);
    this.#pending = this.#pending.subarray(n);
    return out;
  }

  /** Passes n bytes to `sink` chunk by chunk; false when the stream ends first. */
  async stream(n: number, sink: (chunk: Buffer) => void): Promise<boolean> {
    let left = n;
    while (left > 0) {
      if (this.#pending.length === 0 && !(await this.#fill())) return false;
      const part = this.#pending.subarray(0, Math.min(left, this.#pending.length));
      this.#pending = this.#pending.subarray(part.length);
      left -= part.length;
      sink(part);
    }
    return true;
  }
}

function text(header: Buffer, start: number, length: number): string {
  const field = header.subarray(start, start + length);
  const end = field.indexOf(0);
  return field.subarray(0, end < 0 ? field.length : end).toString("utf8");
}

/** A numeric field: octal text, or GNU's base-256 (high bit set) for large values. */
function number(header: Buffer, start: number, length: number): number {
  const field = header.subarray(start, start + length);
  if ((field[0]! & 0x80) !== 0) {
    let n = field[0]! & 0x7f;
    for (let i = 1; i < field.length; i++) n = n * 256 + field[i]!;
    return n;
  }
  const digits = text(header, start, length).trim();
  return digits === "" ? 0 : parseInt(digits, 8);
}

function checksumMatches(header: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : header[i]!;
  return sum === number(header, 148, 8);
}

/** Pax extended header records ("LEN key=value\n"). */
function paxRecords(body: Buffer): Map<string, string> {
  const records = new Map<string, string>();
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(0x20, at);
    const length = space < 0 ? NaN : Number(body.subarray(at, space).toString("ascii"));
    if (!Number.isInteger(length) || length <= 0 || at + length > body.length) break;
    const record = body.subarray(space + 1, at + length - 1).toString("utf8");
    const eq = record.indexOf("=");
    if (eq > 0) records.set(record.slice(0, eq), record.slice(eq + 1));
    at += length;
  }
  return records;
}

/**
 * An entry name as messages show it: names come from the archive, so control
 * characters (a terminal escape sequence, a newline faking another line) are escaped
 * and a long name is cut.
 */
function shown(name: string): string {
  const cut = name.length > 200 ? `${name.slice(0, 200)}…` : name;
  return JSON.stringify(cut).slice(1, -1);
}

/** The entry's path, normalized; refuses absolute paths and '..'. */
function safePath(raw: string): string {
  if (raw.startsWith("/"))
    throw new ExportRefusedError(`archive entry '${shown(raw)}' has an absolute path; an export's paths are relative`);
  const parts = raw.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.includes(".."))
    throw new ExportRefusedError(
      `archive entry '${shown(raw)}' has a '..' component, which would reach outside the export`,
    );
  if (parts.length === 0) throw new ExportRefusedError(`archive entry '${shown(raw)}' has an empty path`);
  return parts.join("/");
}

/** A .json file at the top or in one top folder: the tables the reader parses. */
function isDataFile(path: string): boolean {
  return path.endsWith(".json") && path.split("/").length <= 2;
}

/** A file under uploads/, emoji/ or avatars/ (at the top or in the one top folder): bytes the importer copies. */
function isCopiedFile(path: string): boolean {
  const parts = path.split("/");
  const folder = parts.findIndex((p) => p === "uploads" || p === "emoji" || p === "avatars");
  return folder >= 0 && folder <= 1 && parts.length > folder + 1;
}

/** Told the bytes of the archive file read so far. */
export type UnpackProgress = (read: number) => void;

/**
 * Unpacks the data files of the tarball at `path` into `dest` (an empty directory this
 * process made). Throws ExportRefusedError for a hostile or oversized archive, Error
 * for one that is not a tarball at all.
 */
export async function unpackExportTarball(
  path: string,
  dest: string,
  limits: ExportLimits,
  onProgress?: UnpackProgress,
): Promise<void> {
  const file = createReadStream(path);
  const gzip = /\.(tar\.gz|tgz)$/.test(path) ? createGunzip() : null;
  const source = gzip === null ? file : file.pipe(gzip);
  file.on("error", (error) => gzip?.destroy(error));
  let current = "(the first entry)";
  let unpacked = 0;
  // The ratio is measured on the bytes tar reads, headers included, so an archive of
  // empty entries is a bomb too.
  async function* measured(): AsyncGenerator<Buffer> {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      unpacked += chunk.length;
      onProgress?.(file.bytesRead);
      if (gzip !== null && unpacked > RATIO_FLOOR && unpacked > limits.maxRatio * file.bytesRead) {
        throw new ExportRefusedError(
          `the archive unpacks to more than ${limits.maxRatio} times its compressed size (${describeBytes(unpacked)} from ` +
            `${describeBytes(file.bytesRead)}, at entry '${shown(current)}'): a compression bomb, or an unusually repetitive export; ` +
            `if it is genuine, pass ${LIMIT_FLAGS.maxRatio} N to raise the limit`,
        );
      }
      yield chunk;
    }
  }
  const reader = new ChunkReader(measured());
  try {
    await readEntries(reader, dest, limits, (name) => (current = name));
  } catch (error) {
    if (error instanceof ExportRefusedError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "Z_DATA_ERROR" || code === "Z_BUF_ERROR")
      throw new Error(`it is not gzip data, or the data is damaged (${(error as Error).message})`);
    throw error;
  } finally {
    source.destroy();
    file.destroy();
  }
}

async function readEntries(
  reader: ChunkReader,
  dest: string,
  limits: ExportLimits,
  onEntry: (name: string) => void,
): Promise<void> {
  let entries = 0;
  let total = 0;
  let longName: string | null = null;
  let pax = new Map<string, string>();
  const truncated = (name: string) =>
    new ExportRefusedError(`the archive ends in the middle of entry '${shown(name)}': it is truncated`);

  for (;;) {
    const header = await reader.take(BLOCK);
    // The archive ends with zero blocks; some writers stop at the end of the data.
    if (header === null || header.every((b) => b === 0)) return;
    if (!checksumMatches(header)) {
      throw new ExportRefusedError(
        entries === 0
          ? "it is not a tar archive (the first header's checksum does not match)"
          : `the archive is damaged after ${entries} entries (a header's checksum does not match)`,
      );
    }
    entries++;
    const type = String.fromCharCode(header[156]!) === "\0" ? "0" : String.fromCharCode(header[156]!);
    const ustar = text(header, 257, 6) === "ustar";
    const prefix = ustar ? text(header, 345, 155) : "";
    const headerName = prefix === "" ? text(header, 0, 100) : `${prefix}/${text(header, 0, 100)}`;
    const rawName = pax.get("path") ?? longName ?? headerName;
    const paxSize = pax.get("size");
    const size = paxSize !== undefined ? Number(paxSize) : number(header, 124, 12);
    onEntry(rawName);
    if (entries > limits.maxEntries) {
      throw new ExportRefusedError(
        `the archive has more than ${limits.maxEntries} entries (at '${shown(rawName)}'); pass ${LIMIT_FLAGS.maxEntries} N to raise the limit`,
      );
    }
    if (!Number.isSafeInteger(size) || size < 0)
      throw new ExportRefusedError(`archive entry '${shown(rawName)}' has no valid size`);
    const padded = Math.ceil(size / BLOCK) * BLOCK;

    if (type === "x" || type === "g" || type === "L" || type === "K") {
      if (size > MAX_METADATA_BYTES)
        throw new ExportRefusedError(
          `a metadata header before '${shown(rawName)}' is ${describeBytes(size)}, over ${describeBytes(MAX_METADATA_BYTES)}`,
        );
      const body = await reader.take(padded);
      if (body === null) throw truncated(rawName);
      // A global header ('g') sets defaults parley does not need; 'K' names a link target, refused with its link.
      if (type === "x") pax = paxRecords(body.subarray(0, size));
      if (type === "L") longName = text(body, 0, size);
      continue;
    }
    longName = null;
    pax = new Map();

    const refusedAs = REFUSED_TYPES[type] ?? (type === "0" || type === "5" ? null : `of tar type '${type}'`);
    if (refusedAs !== null) {
      const target = type === "1" || type === "2" ? ` (to '${shown(text(header, 157, 100))}')` : "";
      throw new ExportRefusedError(
        `archive entry '${shown(rawName)}' is ${refusedAs}${target}: an export holds regular files and directories only`,
      );
    }
    const name = safePath(rawName);
    // Pre-POSIX tars mark a directory by a trailing '/' on a regular-file entry.
    if (type === "5" || rawName.endsWith("/")) {
      if (!(await reader.stream(padded, () => undefined))) throw truncated(rawName);
      continue;
    }

    const data = isDataFile(name);
    const cap = data ? limits.maxJsonBytes : limits.maxFileBytes;
    if (size > cap) {
      const what = data ? "the limit for a data file (.json, read into memory)" : "the limit for a file";
      const flag = data ? LIMIT_FLAGS.maxJsonBytes : LIMIT_FLAGS.maxFileBytes;
      throw new ExportRefusedError(
        `archive entry '${shown(name)}' is ${describeBytes(size)}, over ${what} of ${describeBytes(cap)}; pass ${flag} SIZE to raise it`,
      );
    }
    total += size;
    if (total > limits.maxTotalBytes) {
      throw new ExportRefusedError(
        `archive entry '${shown(name)}' brings the unpacked size to ${describeBytes(total)}, over the limit of ${describeBytes(limits.maxTotalBytes)}; ` +
          `pass ${LIMIT_FLAGS.maxTotalBytes} SIZE to raise it`,
      );
    }

    if (!data && !isCopiedFile(name)) {
      if (!(await reader.stream(padded, () => undefined))) throw truncated(name);
      continue;
    }
    const target = join(dest, name);
    mkdirSync(dirname(target), { recursive: true });
    let fd: number;
    try {
      // dest is fresh and only this loop writes to it, so nothing there can be a link; O_EXCL finds a repeated name.
      fd = openSync(target, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST")
        throw new ExportRefusedError(`archive entry '${shown(name)}' appears twice`);
      throw error;
    }
    try {
      let left = size;
      const complete = await reader.stream(padded, (chunk) => {
        const part = chunk.subarray(0, Math.min(left, chunk.length));
        left -= part.length;
        for (let at = 0; at < part.length;) at += writeSync(fd, part, at);
      });
      if (!complete) throw truncated(name);
    } finally {
      closeSync(fd);
    }
  }
}
