/**
 * @module tools/import/limits
 * What `parley import` accepts from an export, and the flags that raise each bound.
 * An export comes from outside (another server, a customer, a download), so it is read
 * as hostile: regular files and directories only, inside the export, and bounded in
 * size and count before anything is decompressed past the bound.
 */

export interface ExportLimits {
  /** Largest data file (a .json table file the reader parses in memory). */
  readonly maxJsonBytes: number;
  /** Largest other file (uploads, avatars, emoji: streamed past, never held). */
  readonly maxFileBytes: number;
  /** Sum of the sizes of all entries. */
  readonly maxTotalBytes: number;
  /** Entries of every kind (files, directories, metadata headers). */
  readonly maxEntries: number;
  /** Unpacked bytes per compressed byte, checked once RATIO_FLOOR bytes are unpacked. */
  readonly maxRatio: number;
}

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

/**
 * Sized for real exports: realm.json of a large organization stays well under 256 MiB
 * (and V8 cannot hold a string over 512 MiB anyway); Zulip's own upload limit defaults
 * to 100 MiB; Zulip's message tables compress about 18:1 with gzip, where a bomb of
 * zeros reaches 1,000:1.
 */
export const DEFAULT_LIMITS: ExportLimits = {
  maxJsonBytes: 256 * MIB,
  maxFileBytes: GIB,
  maxTotalBytes: 32 * GIB,
  maxEntries: 1_000_000,
  maxRatio: 200,
};

/** Below this many unpacked bytes the ratio is not checked: small archives compress oddly well and harm nothing. */
export const RATIO_FLOOR = 16 * MIB;

/** The option that raises each limit, named in every refusal. */
export const LIMIT_FLAGS: Readonly<Record<keyof ExportLimits, string>> = {
  maxJsonBytes: "--max-json-size",
  maxFileBytes: "--max-file-size",
  maxTotalBytes: "--max-total-size",
  maxEntries: "--max-entries",
  maxRatio: "--max-ratio",
};

/** An export refused as it is; nothing was imported. */
export class ExportRefusedError extends Error {}

/** "300000000 bytes (286.1 MiB)": exact for the operator's flag, readable at a glance. */
export function describeBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  const [value, unit] = n >= GIB ? [n / GIB, "GiB"] : n >= MIB ? [n / MIB, "MiB"] : [n / 1024, "KiB"];
  return `${n} bytes (${value.toFixed(1)} ${unit})`;
}

const UNITS: Readonly<Record<string, number>> = { "": 1, K: 1024, M: MIB, G: GIB, T: 1024 * GIB };

/** V8's longest string is just under 512 Mi characters: a larger JSON file cannot be parsed at all. */
export const MAX_JSON_BYTES_CEILING = 512 * MIB - 64;

/** A size option: bytes, or a number with K, M, G or T (binary units, KiB/KB also read as 1024), at most `max`. */
export function parseSize(flag: string, text: string, max = Number.MAX_SAFE_INTEGER): number {
  const match = /^(\d+)\s*([KMGT]?)(?:i?B)?$/i.exec(text.trim());
  const n = match ? Number(match[1]) * UNITS[match[2]!.toUpperCase()]! : NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new Error(`${flag} must be a size such as 512M, 2G or a number of bytes, not '${text}'`);
  }
  if (n > max) throw new Error(`${flag} can be at most ${describeBytes(max)}, not '${text}'`);
  return n;
}
