/**
 * @module tools/generate/pg-copy
 * Writes the generated dataset as PostgreSQL COPY text files in Zulip's schema
 * (zerver_message, zerver_usermessage, zerver_recipient, zerver_subscription,
 * zerver_stream, zerver_userprofile, zerver_usertopic). bench/peer loads them.
 *
 * zerver_usermessage follows Zulip's send path with soft deactivation: one row per
 * (recipient, message) for direct messages and for awake channel subscribers; a
 * soft-deactivated (long_term_idle) subscriber gets a row for a channel message only
 * when the message gives them a non-zero flag (here: a personal mention). The sender
 * always gets a row. See bench/README.md for how these rows relate to the engine.
 */
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";

/** Zulip's UserMessage flag bits (zerver/models/messages.py). */
export const FLAG = { read: 1, starred: 2, mentioned: 8, isPrivate: 2048 } as const;

/** Recipient ID layout of the generated peer database. */
export const RECIPIENT = {
  personal: (userId: number) => userId,
  stream: (channelId: number) => 10_000_000 + channelId,
  huddle: (seq: number) => 20_000_000 + seq,
} as const;

export const PG_TABLES = [
  "zerver_userprofile",
  "zerver_recipient",
  "zerver_stream",
  "zerver_subscription",
  "zerver_usertopic",
  "zerver_message",
  "zerver_usermessage",
] as const;
export type PgTable = (typeof PG_TABLES)[number];

/** COPY text-format escaping of one field. */
export function copyField(value: string | number | boolean | null): string {
  if (value === null) return "\\N";
  if (typeof value === "boolean") return value ? "t" : "f";
  if (typeof value === "number") return String(value);
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/\r/g, "\\r").replace(/\t/g, "\\t");
}

/** Buffered, synchronous writers for each table file (flushed every ~1 MB). */
export class CopyWriter {
  readonly dir: string;
  readonly #fds = new Map<PgTable, number>();
  readonly #buffers = new Map<PgTable, string[]>();
  readonly #sizes = new Map<PgTable, number>();
  readonly rows = new Map<PgTable, number>();

  constructor(dir: string) {
    this.dir = dir;
    mkdirSync(dir, { recursive: true });
    for (const table of PG_TABLES) {
      this.#fds.set(table, openSync(join(dir, `${table}.copy`), "w"));
      this.#buffers.set(table, []);
      this.#sizes.set(table, 0);
      this.rows.set(table, 0);
    }
  }

  row(table: PgTable, fields: readonly (string | number | boolean | null)[]): void {
    this.rawLine(table, fields.map(copyField).join("\t"));
  }

  /** A pre-escaped line (hot path: usermessage rows). */
  rawLine(table: PgTable, line: string): void {
    const buffer = this.#buffers.get(table)!;
    buffer.push(line);
    this.rows.set(table, this.rows.get(table)! + 1);
    const size = this.#sizes.get(table)! + line.length;
    if (size > 1 << 20) this.#flush(table);
    else this.#sizes.set(table, size);
  }

  #flush(table: PgTable): void {
    const buffer = this.#buffers.get(table)!;
    if (buffer.length > 0) writeSync(this.#fds.get(table)!, buffer.join("\n") + "\n");
    buffer.length = 0;
    this.#sizes.set(table, 0);
  }

  close(): void {
    for (const table of PG_TABLES) {
      this.#flush(table);
      closeSync(this.#fds.get(table)!);
    }
  }
}
