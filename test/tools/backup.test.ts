/**
 * `parley backup` and `parley restore` end to end, as operators run them: the built
 * CLI (dist/) in child processes. A backup is taken from a running `parley serve`
 * during a burst of concurrent sends over HTTP; the restored store holds every
 * message acknowledged before the backup started, verifies clean, and serves.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Message, type User } from "../../src/engine/index.js";
import { openStore } from "../../src/index.js";
import { internals } from "../../src/engine/internal.js";

const CLI = resolve(import.meta.dirname, "../../dist/tools/parley.js");
const root = mkdtempSync(join(tmpdir(), "parley-backup-"));
const dataDir = join(root, "data");
const children: ChildProcess[] = [];
let owner: User;

beforeAll(() => {
  const store = openStore(dataDir, { noSync: true });
  ({ owner } = store.createRealm({ subdomain: "", name: "Backed up", owner: { email: "o@b.dev", fullName: "Owner" } }));
  store.subscribe(owner.id, { channels: [{ name: "general" }] });
  store.close();
  writeFileSync(join(dataDir, "demo-login.json"), JSON.stringify({ subdomain: "", email: owner.email }));
});
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
});

interface Result {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function parley(...args: string[]): Result {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs a CLI command without blocking the event loop (the burst keeps going meanwhile). */
function parleyAsync(...args: string[]): Promise<Result> {
  const child = spawn(process.execPath, [CLI, ...args]);
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  return new Promise((r) => child.on("exit", (code) => r({ code, stdout, stderr })));
}

async function serve(dir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [CLI, "serve", "--data", dir, "--port", "0", "--json", "--no-sync", "--no-rate-limit"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  children.push(child);
  return new Promise((resolveUrl, reject) => {
    child.once("exit", (code) => reject(new Error(`serve exited with ${code}`)));
    createInterface({ input: child.stdout! }).once("line", (line) =>
      resolveUrl({ child, url: (JSON.parse(line) as { url: string }).url }),
    );
  });
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  child.kill("SIGTERM");
  await exited;
}

function auth(user: User): string {
  return `Basic ${Buffer.from(`${user.email}:${user.apiKey}`).toString("base64")}`;
}

/** Names and contents of every file under `dir`, to show that a refused command changed nothing. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile())
      out[join(entry.parentPath, entry.name)] = readFileSync(join(entry.parentPath, entry.name)).toString("base64");
  }
  return out;
}

describe("parley backup and restore", () => {
  it("backs up a running server during a burst of sends; the restore holds every message acknowledged before, verifies and serves", async () => {
    const { child, url } = await serve(dataDir);
    const acked: { id: number; content: string }[] = [];
    let sending = true;
    let sent = 0;
    const worker = async (w: number): Promise<void> => {
      while (sending) {
        const content = `burst ${w}-${sent++}`;
        const r = await fetch(`${url}/api/v1/messages`, {
          method: "POST",
          headers: { Authorization: auth(owner) },
          body: new URLSearchParams({ type: "stream", to: "general", topic: `w${w}`, content }),
        });
        const body = (await r.json()) as { result: string; id?: number };
        expect(body.result).toBe("success");
        acked.push({ id: body.id!, content });
      }
    };
    const workers = [0, 1, 2, 3].map(worker);
    while (acked.length < 80) await new Promise((r) => setTimeout(r, 5));

    const ackedBefore = [...acked];
    const backupDir = join(root, "backup");
    const backup = await parleyAsync("backup", "--data", dataDir, "--to", backupDir, "--json");
    const ackedByBackupEnd = acked.length;
    // Keep sending a little after the backup, then stop.
    await new Promise((r) => setTimeout(r, 50));
    sending = false;
    await Promise.all(workers);
    await stop(child);

    expect(backup.stderr).toBe("");
    expect(backup.code).toBe(0);
    // The sends went on while the backup ran.
    expect(ackedByBackupEnd).toBeGreaterThan(ackedBefore.length);
    const manifest = JSON.parse(readFileSync(join(backupDir, "manifest.json"), "utf8")) as {
      message_count: number;
      last_message_id: number;
      files: { path: string; bytes: number; sha256: string }[];
      compacted: boolean;
    };
    expect(manifest.last_message_id).toBeGreaterThanOrEqual(Math.max(...ackedBefore.map((m) => m.id)));
    expect(manifest.message_count).toBeGreaterThanOrEqual(ackedBefore.length);
    expect(manifest.compacted).toBe(true);
    // secrets.json: the camo key `parley start` generated, which the messages' image URLs are signed with.
    expect(manifest.files.map((f) => f.path).sort()).toEqual(["data.mdb", "demo-login.json", "secrets.json"]);
    for (const f of manifest.files) expect(f.sha256).toMatch(/^[0-9a-f]{64}$/);

    const restoredDir = join(root, "restored");
    const restore = parley("restore", "--from", backupDir, "--data", restoredDir, "--json");
    expect(restore.stderr).toBe("");
    expect(restore.code).toBe(0);
    const report = JSON.parse(restore.stdout) as { clean: boolean; message_count: number; last_message_id: number };
    expect(report).toMatchObject({
      clean: true,
      message_count: manifest.message_count,
      last_message_id: manifest.last_message_id,
    });

    const restored = openStore(restoredDir, { noSync: true });
    try {
      for (const { id, content } of ackedBefore)
        expect((internals(restored).tables.messages.get(id) as Message | undefined)?.content).toBe(content);
      const verify = restored.verify();
      expect(verify.differences).toEqual([]);
      expect(verify.problems).toEqual([]);
    } finally {
      restored.close();
    }
    expect(JSON.parse(readFileSync(join(restoredDir, "demo-login.json"), "utf8"))).toEqual({
      subdomain: "",
      email: owner.email,
    });
    expect(readFileSync(join(restoredDir, "secrets.json"), "utf8")).toBe(
      readFileSync(join(dataDir, "secrets.json"), "utf8"),
    );

    // The restored directory serves: the last message acknowledged before the backup.
    const again = await serve(restoredDir);
    const last = ackedBefore[ackedBefore.length - 1]!;
    const got = await fetch(`${again.url}/api/v1/messages/${last.id}`, { headers: { Authorization: auth(owner) } });
    expect(got.status).toBe(200);
    expect(((await got.json()) as { message: { content: string } }).message.content).toContain(last.content);
    await stop(again.child);
  }, 60_000);

  it("carries uploaded files, not partial uploads, into the backup and the restore", () => {
    const dir = join(root, "with-uploads");
    const store = openStore(dir, { noSync: true });
    store.createRealm({ subdomain: "", name: "Files", owner: { email: "f@b.dev", fullName: "Filer" } });
    store.close();
    mkdirSync(join(dir, "uploads", "1", "ab", "random"), { recursive: true });
    writeFileSync(join(dir, "uploads", "1", "ab", "random", "f.png"), "png bytes");
    mkdirSync(join(dir, "uploads", "1", "tmp"), { recursive: true });
    writeFileSync(join(dir, "uploads", "1", "tmp", "upload-partial"), "half a file");
    const backupDir = join(root, "with-uploads-backup");
    const backup = parley("backup", "--data", dir, "--to", backupDir, "--json");
    expect(backup.code, backup.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(backupDir, "manifest.json"), "utf8")) as {
      files: { path: string }[];
    };
    expect(manifest.files.map((f) => f.path).sort()).toEqual(["data.mdb", "uploads/1/ab/random/f.png"]);
    const restoredDir = join(root, "with-uploads-restored");
    expect(parley("restore", "--from", backupDir, "--data", restoredDir).code).toBe(0);
    expect(readFileSync(join(restoredDir, "uploads", "1", "ab", "random", "f.png"), "utf8")).toBe("png bytes");
    expect(existsSync(join(restoredDir, "uploads", "1", "tmp"))).toBe(false);
  });

  it("refuses bad arguments with exit code 2 and a clear message, changing nothing", () => {
    const full = join(root, "not-empty");
    mkdirSync(full, { recursive: true });
    writeFileSync(join(full, "keep.txt"), "mine");
    const before = { data: tree(dataDir), full: tree(full) };

    const cases: { args: string[]; message: RegExp }[] = [
      { args: ["backup", "--data", dataDir], message: /missing --to/ },
      { args: ["backup", "--data", dataDir, "--to", full], message: /is not empty/ },
      { args: ["backup", "--data", join(root, "nowhere"), "--to", join(root, "b1")], message: /holds no parley store/ },
      {
        args: ["backup", "--data", dataDir, "--to", join(dataDir, "inside")],
        message: /must be outside the data directory/,
      },
      { args: ["backup", "--data", dataDir, "--to", join(root, "b2"), "--frob"], message: /Unknown option '--frob'/ },
      { args: ["restore", "--data", join(root, "r1")], message: /missing --from/ },
      {
        args: ["restore", "--from", full, "--data", join(root, "r2")],
        message: /not a complete parley backup: it has no manifest.json/,
      },
      { args: ["restore", "--from", join(root, "nowhere"), "--data", join(root, "r3")], message: /does not exist/ },
    ];
    for (const { args, message } of cases) {
      const r = parley(...args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toMatch(/usage: parley (backup|restore)/);
    }
    for (const name of ["b1", "b2", "r1", "r2", "r3"]) expect(existsSync(join(root, name))).toBe(false);
    expect(existsSync(join(dataDir, "inside"))).toBe(false);
    expect({ data: tree(dataDir), full: tree(full) }).toEqual(before);
  });

  it("restore refuses a non-empty target (exit 2) and a damaged backup (exit 1), writing nothing", () => {
    const backupDir = join(root, "backup-2");
    expect(parley("backup", "--data", dataDir, "--to", backupDir, "--json").code).toBe(0);

    const occupied = join(root, "occupied");
    mkdirSync(occupied, { recursive: true });
    writeFileSync(join(occupied, "data.mdb"), "someone's data");
    const refused = parley("restore", "--from", backupDir, "--data", occupied);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--data .*occupied is not empty/);
    expect(readFileSync(join(occupied, "data.mdb"), "utf8")).toBe("someone's data");
    expect(readdirSync(occupied)).toEqual(["data.mdb"]);

    const damaged = join(root, "damaged");
    cpSync(backupDir, damaged, { recursive: true });
    const file = join(damaged, "data", "data.mdb");
    const bytes = readFileSync(file);
    bytes[bytes.length - 100] = bytes[bytes.length - 100]! ^ 0xff;
    writeFileSync(file, bytes);
    const target = join(root, "from-damaged");
    const r = parley("restore", "--from", damaged, "--data", target);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/is damaged: data\.mdb has SHA-256 [0-9a-f]{64}, the manifest says/);
    expect(existsSync(target)).toBe(false);
  });

  it("restore of a backup damaged before its checksums were taken: one clear error (a JSON line with --json), exit 1, nothing left", () => {
    const source = join(root, "to-damage");
    const store = openStore(source, { noSync: true });
    const { owner: o } = store.createRealm({
      subdomain: "",
      name: "Damaged",
      owner: { email: "o@d.dev", fullName: "Owner" },
    });
    store.subscribe(o.id, { channels: [{ name: "general" }] });
    for (const content of ["before the damaged one", "the damaged record", "after the damaged one"]) {
      store.sendMessage({ senderId: o.id, to: { type: "channel", channel: "general", topic: "t" }, content });
    }
    store.close();
    const backupDir = join(root, "backup-damaged-early");
    expect(parley("backup", "--data", source, "--to", backupDir, "--json").code).toBe(0);

    // A byte of the record's encoding (the content string's header) changes, and the
    // manifest is rewritten to match, as if the snapshot had been damaged before it
    // was checksummed: the checksums pass and only reading the store finds it.
    const mdb = join(backupDir, "data", "data.mdb");
    const bytes = readFileSync(mdb);
    const at = bytes.indexOf(Buffer.from("the damaged record"));
    expect(at).toBeGreaterThan(0);
    bytes[at - 1] = 0xc1;
    writeFileSync(mdb, bytes);
    const manifestFile = join(backupDir, "manifest.json");
    const manifest = JSON.parse(readFileSync(manifestFile, "utf8")) as { files: { path: string; sha256: string }[] };
    for (const f of manifest.files)
      if (f.path === "data.mdb") f.sha256 = createHash("sha256").update(bytes).digest("hex");
    writeFileSync(manifestFile, JSON.stringify(manifest));

    const target = join(root, "from-damaged-early");
    const human = parley("restore", "--from", backupDir, "--data", target);
    expect(human.code).toBe(1);
    expect(human.stderr).toMatch(
      /parley restore: the backup's data cannot be read: .+; it was damaged before its checksums were taken .*restore an older backup/,
    );
    expect(human.stderr).not.toContain("the damaged record");
    expect(existsSync(target)).toBe(false);

    mkdirSync(target);
    const json = parley("restore", "--from", backupDir, "--data", target, "--json");
    expect(json.code).toBe(1);
    const lines = json.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const report = JSON.parse(lines[0]!) as { clean: boolean; error: string };
    expect(report.clean).toBe(false);
    expect(report.error).toMatch(/^the backup's data cannot be read: .+restore an older backup/);
    expect(readdirSync(target)).toEqual([]);
  });
});
