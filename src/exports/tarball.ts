/**
 * @module exports/tarball
 * Writes a .tar.gz one entry at a time (POSIX ustar; a pax header for names over 100
 * bytes), hashing the compressed bytes as they go to disk. Entries are regular files
 * and their directories only: the tar reader of `parley import` (tools/import/tar.ts)
 * accepts nothing else.
 */
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { once } from "node:events";
import { createGzip, type Gzip } from "node:zlib";

const BLOCK = 512;

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, "0") + "\0";
}

function header(name: string, size: number, type: "0" | "x", mtime: number): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100, "utf8");
  h.write(octal(0o644, 8), 100, "ascii");
  h.write(octal(0, 8), 108, "ascii");
  h.write(octal(0, 8), 116, "ascii");
  h.write(octal(size, 12), 124, "ascii");
  h.write(octal(mtime, 12), 136, "ascii");
  h.write("        ", 148, "ascii");
  h.write(type, 156, "ascii");
  h.write("ustar\0", 257, "ascii");
  h.write("00", 263, "ascii");
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(octal(sum, 7) + " ", 148, "ascii");
  return h;
}

/** A pax record "LEN key=value\n", LEN counting itself. */
function paxRecord(keyName: string, value: string): Buffer {
  const body = ` ${keyName}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length) length++;
  return Buffer.from(`${length}${body}`, "utf8");
}

const padding = (size: number) => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

export class TarballWriter {
  readonly #gzip: Gzip;
  readonly #file: WriteStream;
  readonly #hash = createHash("sha256");
  #bytes = 0;
  readonly #mtime: number;

  constructor(path: string, mtime: number) {
    this.#mtime = Math.floor(mtime);
    this.#file = createWriteStream(path, { flags: "wx", mode: 0o600 });
    // Level 6 is zlib's default; exports are written once, read rarely.
    this.#gzip = createGzip({ level: 6 });
    this.#gzip.on("data", (chunk: Buffer) => {
      this.#hash.update(chunk);
      this.#bytes += chunk.length;
    });
    this.#gzip.pipe(this.#file);
  }

  async #write(chunk: Buffer): Promise<void> {
    if (!this.#gzip.write(chunk)) await once(this.#gzip, "drain");
  }

  async #head(name: string, size: number): Promise<void> {
    if (Buffer.byteLength(name) > 100) {
      const pax = paxRecord("path", name);
      await this.#write(header("PaxHeader", pax.length, "x", this.#mtime));
      await this.#write(pax);
      await this.#write(padding(pax.length));
      name = name.slice(-90).replace(/^[^/]*\//, "");
    }
    await this.#write(header(name, size, "0", this.#mtime));
  }

  /** Adds a file from memory. */
  async add(name: string, data: Buffer): Promise<void> {
    await this.#head(name, data.length);
    await this.#write(data);
    await this.#write(padding(data.length));
  }

  /** Adds a file from disk, `size` bytes of it (its recorded size: a file that changed is cut or padded). */
  async addFile(name: string, path: string, size: number): Promise<void> {
    await this.#head(name, size);
    let written = 0;
    if (size > 0)
      for await (const chunk of createReadStream(path, { start: 0, end: size - 1 })) {
        const buffer = chunk as Buffer;
        written += buffer.length;
        await this.#write(buffer);
      }
    if (written < size) await this.#write(Buffer.alloc(size - written));
    await this.#write(padding(size));
  }

  /** Ends the archive; resolves with its SHA-256 and size once it is on disk. */
  async finish(): Promise<{ sha256: string; sizeBytes: number }> {
    await this.#write(Buffer.alloc(2 * BLOCK));
    this.#gzip.end();
    await once(this.#file, "close");
    return { sha256: this.#hash.digest("hex"), sizeBytes: this.#bytes };
  }

  /** Stops writing (the caller removes the file). */
  async abort(): Promise<void> {
    this.#gzip.destroy();
    if (!this.#file.closed) {
      this.#file.destroy();
      await once(this.#file, "close").catch(() => undefined);
    }
  }
}
