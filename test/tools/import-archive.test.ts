/**
 * `parley import` reading hostile exports: tarballs and directories holding links to
 * files outside the export (/etc/passwd), devices, FIFOs, paths that climb out, and
 * compression and size bombs. Each is refused naming the entry (and, for a limit, the
 * flag that raises it), prints no byte of a file outside the export, and leaves no
 * data directory and no temporary files. Archives are written here byte by byte (so a
 * device entry needs no privileges) and, for a symbolic link, by the tar program.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { DEFAULT_LIMITS, MAX_JSON_BYTES_CEILING, parseSize, type ExportLimits } from "../../tools/import/limits.js";
import { openExport, readExport } from "../../tools/import/zulip-export.js";

const CLI = resolve(import.meta.dirname, "../../dist/tools/parley.js");
const root = mkdtempSync(join(tmpdir(), "parley-import-archive-"));
// Unpacked copies go here (this file runs in a process of its own), so a test can see that none is left.
const scratch = join(root, "tmp");
mkdirSync(scratch);
process.env["TMPDIR"] = scratch;
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => expect(readdirSync(scratch)).toEqual([]));

const TOP = "zulip-export-evil";
const REALM = JSON.stringify({
  zerver_realm: [{ id: 7, string_id: "evil", name: "Evil Corp", date_created: 1_700_000_000 }],
  zerver_userprofile: [
    {
      id: 10,
      email: "u10@zulip.example",
      delivery_email: "owner@evil.example",
      full_name: "Owner",
      role: 100,
      is_active: true,
    },
  ],
});

/** One tar header (ustar), its content and padding. */
function entry(name: string, type: string, content: Buffer | string = "", link = ""): Buffer {
  const body = Buffer.from(content);
  const header = Buffer.alloc(512);
  header.write(name, 0, 100);
  header.write("0000644\0", 100);
  header.write("0000000\0", 108);
  header.write("0000000\0", 116);
  header.write(`${body.length.toString(8).padStart(11, "0")}\0`, 124);
  header.write("14533000000\0", 136);
  header.write(" ".repeat(8), 148);
  header.write(type, 156);
  header.write(link, 157, 100);
  header.write("ustar\0", 257);
  header.write("00", 263);
  let sum = 0;
  for (const b of header) sum += b;
  header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
  return Buffer.concat([header, body, Buffer.alloc((512 - (body.length % 512)) % 512)]);
}

/** A pax extended header setting `path` for the next entry. */
function paxPath(path: string): Buffer {
  const record = (length: number) => `${length} path=${path}\n`;
  let length = record(0).length;
  while (record(length).length !== length) length = record(length).length;
  return entry("PaxHeaders/x", "x", record(length));
}

function write(name: string, parts: Buffer[], gzip = true): string {
  const tar = Buffer.concat([...parts, Buffer.alloc(1024)]);
  const path = join(root, name);
  writeFileSync(path, gzip ? gzipSync(tar) : tar);
  return path;
}

const validParts = () => [
  entry(`${TOP}/`, "5"),
  entry(`${TOP}/realm.json`, "0", REALM),
  entry(`${TOP}/messages-000001.json`, "0", JSON.stringify({ zerver_message: [], zerver_usermessage: [] })),
];

async function refusal(path: string, limits: Partial<ExportLimits> = {}): Promise<string> {
  try {
    const opened = await openExport(path, { ...DEFAULT_LIMITS, ...limits });
    try {
      readExport(opened.root, { ...DEFAULT_LIMITS, ...limits });
    } finally {
      opened.cleanup();
    }
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${path} was accepted`);
}

function parley(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  // A bounded wait: an importer that blocks on a FIFO or reads a device must fail, not hang the suite.
  const r = spawnSync(process.execPath, [CLI, ...args], {
    encoding: "utf8",
    timeout: 20_000,
    env: { ...process.env, TMPDIR: scratch },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("parley import of hostile exports", () => {
  it("reads a tarball with pax and GNU long names and unpacks its uploads folder", async () => {
    const longUpload = `${TOP}/uploads/2/${"a".repeat(120)}/photo.png`;
    const path = write("valid.tar.gz", [
      ...validParts(),
      paxPath(longUpload),
      entry("placeholder", "0", Buffer.alloc(3000, 1)),
      entry("././@LongLink", "L", `${TOP}/uploads/${"b".repeat(130)}.json\0`),
      entry("placeholder", "0", "{}"),
    ]);
    const opened = await openExport(path, DEFAULT_LIMITS);
    try {
      expect(readExport(opened.root, DEFAULT_LIMITS).realm.string_id).toBe("evil");
      // The data files and the uploads (the importer copies those a records.json lists).
      expect(readdirSync(opened.root).sort()).toEqual(["messages-000001.json", "realm.json", "uploads"]);
      expect(readdirSync(opened.root, { recursive: true }).map(String).sort()).toEqual([
        "messages-000001.json",
        "realm.json",
        "uploads",
        "uploads/2",
        `uploads/2/${"a".repeat(120)}`,
        `uploads/2/${"a".repeat(120)}/photo.png`,
        `uploads/${"b".repeat(130)}.json`,
      ]);
    } finally {
      opened.cleanup();
    }
    const data = join(root, "valid-data");
    const r = parley("import", "--data", data, "--from", path, "--json");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });

  it("refuses links, devices, FIFOs and paths outside the export, naming the entry and printing no file's content", async () => {
    const cases: [string, Buffer, RegExp][] = [
      [
        "hard link",
        entry(`${TOP}/messages-000001.json`, "1", "", "/etc/passwd"),
        /archive entry 'zulip-export-evil\/messages-000001.json' is a hard link \(to '\/etc\/passwd'\)/,
      ],
      [
        "symbolic link",
        entry(`${TOP}/messages-000001.json`, "2", "", "/dev/zero"),
        /'zulip-export-evil\/messages-000001.json' is a symbolic link \(to '\/dev\/zero'\)/,
      ],
      [
        "character device",
        entry(`${TOP}/messages-000001.json`, "3"),
        /is a character device: an export holds regular files and directories only/,
      ],
      ["block device", entry(`${TOP}/uploads/disk`, "4"), /'zulip-export-evil\/uploads\/disk' is a block device/],
      ["FIFO", entry(`${TOP}/messages-000002.json`, "6"), /'zulip-export-evil\/messages-000002.json' is a FIFO/],
      [
        "absolute path",
        entry("/etc/cron.d/evil", "0", "* * * * * root true"),
        /archive entry '\/etc\/cron.d\/evil' has an absolute path/,
      ],
      [
        "'..'",
        entry(`${TOP}/../../evil.json`, "0", "{}"),
        /archive entry 'zulip-export-evil\/..\/..\/evil.json' has a '..' component/,
      ],
      [
        "'..' by pax",
        Buffer.concat([paxPath("../outside.json"), entry("innocent.json", "0", "{}")]),
        /archive entry '..\/outside.json' has a '..' component/,
      ],
      [
        "terminal escape in a name",
        entry(`${TOP}/\x1b[2J\nall clear.json`, "2", "", "/etc/shadow"),
        /archive entry 'zulip-export-evil\/\\u001b\[2J\\nall clear.json' is a symbolic link/,
      ],
      ["twice", entry(`${TOP}/realm.json`, "0", "{}"), /archive entry 'zulip-export-evil\/realm.json' appears twice/],
    ];
    for (const [name, hostile, message] of cases) {
      const text = await refusal(write(`${name.replace(/\W/g, "-")}.tar.gz`, [...validParts(), hostile]));
      expect(
        [...text].some((c) => c.charCodeAt(0) < 0x20),
        name,
      ).toBe(false);
      expect(text, name).toMatch(message);
      expect(text, name).toMatch(/is refused: .*; nothing was imported$/);
    }
    expect(existsSync(join(root, "evil.json"))).toBe(false);
    expect(existsSync(join(root, "outside.json"))).toBe(false);

    // The tar program's own symbolic link, as an attacker would make it: realm.json is /etc/passwd.
    const staging = join(root, "staging");
    mkdirSync(join(staging, TOP), { recursive: true });
    symlinkSync("/etc/passwd", join(staging, TOP, "realm.json"));
    const tarball = join(root, "passwd.tar.gz");
    expect(spawnSync("tar", ["-czf", tarball, "-C", staging, TOP]).status).toBe(0);
    const data = join(root, "passwd-data");
    const r = parley("import", "--data", data, "--from", tarball);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /parley import: --from .*passwd\.tar\.gz is refused: archive entry 'zulip-export-evil\/realm.json' is a symbolic link \(to '\/etc\/passwd'\)/,
    );
    expect(r.stderr).not.toMatch(/root:/);
    expect(existsSync(data)).toBe(false);
  });

  it("refuses a directory export whose data files are links to files outside it, FIFOs or devices", async () => {
    const dir = join(root, "dir-export");
    mkdirSync(dir);
    symlinkSync("/etc/passwd", join(dir, "realm.json"));
    expect(await refusal(dir)).toMatch(/realm\.json is a symbolic link: an export holds regular files only/);

    rmSync(join(dir, "realm.json"));
    writeFileSync(join(dir, "realm.json"), REALM);
    symlinkSync("/dev/zero", join(dir, "messages-000001.json"));
    expect(await refusal(dir)).toMatch(/messages-000001\.json is a symbolic link/);

    rmSync(join(dir, "messages-000001.json"));
    expect(spawnSync("mkfifo", [join(dir, "messages-000001.json")]).status).toBe(0);
    const data = join(root, "fifo-data");
    const r = parley("import", "--data", data, "--from", dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/messages-000001\.json is a FIFO \(named pipe\): an export holds regular files only/);
    expect(existsSync(data)).toBe(false);

    // A data file that is not JSON: the error gives the position, not the text.
    rmSync(join(dir, "messages-000001.json"));
    writeFileSync(join(dir, "messages-000001.json"), "secret words, not JSON");
    const text = await refusal(dir);
    expect(text).toMatch(/messages-000001\.json is not valid JSON/);
    expect(text).not.toMatch(/secret words/);
  });

  it("bounds entry sizes, the unpacked total and the entry count, naming the limit and the flag that raises it", async () => {
    const big = write("big-json.tar.gz", [
      ...validParts(),
      entry(`${TOP}/attachment.json`, "0", JSON.stringify({ zerver_attachment: "x".repeat(5000) })),
    ]);
    expect(await refusal(big, { maxJsonBytes: 4096 })).toMatch(
      /archive entry 'zulip-export-evil\/attachment.json' is 5\d{3} bytes \(\d\.\d KiB\), over the limit for a data file \(\.json, read into memory\) of 4096 bytes \(4\.0 KiB\); pass --max-json-size SIZE to raise it/,
    );
    const upload = write("big-upload.tar.gz", [
      ...validParts(),
      entry(`${TOP}/uploads/big.bin`, "0", Buffer.alloc(20_000)),
    ]);
    expect(await refusal(upload, { maxFileBytes: 10_000 })).toMatch(
      /'zulip-export-evil\/uploads\/big.bin' is 20000 bytes .*over the limit for a file of 10000 bytes .*--max-file-size SIZE/,
    );
    expect(await refusal(upload, { maxJsonBytes: 10_000, maxFileBytes: 30_000 }).catch(String)).toMatch(/was accepted/);
    const many = write("many.tar.gz", [
      ...validParts(),
      ...[1, 2, 3, 4].map((n) => entry(`${TOP}/uploads/${n}.bin`, "0", Buffer.alloc(8_000))),
    ]);
    expect(await refusal(many, { maxTotalBytes: 12_000 })).toMatch(
      /archive entry 'zulip-export-evil\/uploads\/2.bin' brings the unpacked size to 1\d{4} bytes .*over the limit of 12000 bytes .*--max-total-size SIZE/,
    );
    expect(await refusal(many, { maxEntries: 4 })).toMatch(
      /the archive has more than 4 entries \(at 'zulip-export-evil\/uploads\/2.bin'\); pass --max-entries N/,
    );

    // The flags read sizes as operators write them; a data file cannot be raised past what V8 can parse.
    expect(parseSize("--max-total-size", "64G")).toBe(64 * 1024 ** 3);
    expect(parseSize("--max-file-size", "1500KiB")).toBe(1500 * 1024);
    expect(() => parseSize("--max-json-size", "1G", MAX_JSON_BYTES_CEILING)).toThrow(/--max-json-size can be at most/);
    expect(() => parseSize("--max-total-size", "-1")).toThrow(/must be a size such as 512M/);

    // A JSON file in a directory export is bounded the same way.
    const dir = join(root, "dir-big");
    mkdirSync(dir);
    writeFileSync(join(dir, "realm.json"), REALM);
    expect(await refusal(dir, { maxJsonBytes: 100 })).toMatch(
      /realm\.json is \d+ bytes, over the limit for a data file .*--max-json-size SIZE/,
    );
  });

  it("refuses a compression bomb before unpacking it, and imports it when the operator raises the ratio", async () => {
    // 48 MiB of zeros gzip to about 48 KiB: 1,000:1, where real exports stay near 20:1.
    const bomb = write("bomb.tar.gz", [
      ...validParts(),
      entry(`${TOP}/uploads/zeros.bin`, "0", Buffer.alloc(48 * 1024 * 1024)),
    ]);
    const data = join(root, "bomb-data");
    const r = parley("import", "--data", data, "--from", bomb);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /the archive unpacks to more than 200 times its compressed size \(\d+ bytes \(\d+\.\d MiB\) from \d+ bytes .*at entry 'zulip-export-evil\/uploads\/zeros.bin'\).*pass --max-ratio N to raise the limit/,
    );
    expect(existsSync(data)).toBe(false);
    const raised = parley("import", "--data", data, "--from", bomb, "--max-ratio", "2000", "--json");
    expect(raised.stderr).toBe("");
    expect(raised.code).toBe(0);
  });
});
