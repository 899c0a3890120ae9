/**
 * @module tools/commands/backup
 * `parley backup --data DIR --to DEST [--no-compact]`: an online backup, safe while
 * `parley serve` runs on DIR. It never opens DIR as a store (the server holds the
 * one-writer lock): the engine copies the LMDB environment as of one read
 * transaction (see src/engine/storage/snapshot.ts), compacted unless --no-compact, and
 * the configuration files and uploads are copied beside it. Then the copy is opened
 * (it is a store of its own) for the manifest's message count and last message ID,
 * every file is checksummed, and DEST/manifest.json is written last. Layout and
 * manifest: tools/backup/manifest.ts.
 *
 * DEST must be missing or empty; a failed backup removes what it wrote.
 */
import { cpSync, existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { ENVIRONMENT_FILE, LOCK_FILE, snapshotEnvironment } from "../../src/engine/index.js";
import { SAVED_QUEUES_FILE } from "../../src/realtime/index.js";
import { output, parseOptions, requireString } from "../args.js";
import {
  BACKUP_DATA_DIR,
  BACKUP_FORMAT,
  BACKUP_VERSION,
  CONFIG_FILES,
  fileBytes,
  isMissingOrEmptyDir,
  listFiles,
  MANIFEST_FILE,
  sha256File,
  UPLOADS_DIR,
  writeFileDurably,
  type Manifest,
  type ManifestFile,
} from "../backup/manifest.js";
import { openForCommand, parseOrUsage, USAGE_EXIT } from "../demo/cli.js";
import { progressBar, type Progress } from "../progress.js";

const USAGE = "parley backup --data DIR --to DEST [--no-compact] [--json]";

/** Whether `inner` is `outer` or inside it. */
function within(inner: string, outer: string): boolean {
  const rel = relative(outer, inner);
  return rel === "" || (!rel.startsWith("..") && !rel.startsWith(sep) && rel !== "..");
}

/** Why files in the data directory other than the environment and configuration are left out. */
function leftOut(dir: string): string[] {
  const known: Record<string, string> = {
    "lock.mdb": "LMDB's reader table, rebuilt when the store opens",
    [LOCK_FILE]: "the running server's one-writer lock",
    [SAVED_QUEUES_FILE]: "event queues saved at the last graceful shutdown (clients register again)",
    external_content: "cached external images (fetched again when viewed)",
  };
  const carried = new Set<string>([ENVIRONMENT_FILE, UPLOADS_DIR, ...CONFIG_FILES]);
  return readdirSync(dir)
    .filter((name) => !carried.has(name))
    .map((name) => `${name}: ${known[name] ?? "not part of parley's data directory"}`);
}

export async function run(argv: string[]): Promise<number> {
  const options = parseOrUsage("backup", USAGE, () => {
    const parsed = parseOptions(argv, { to: { type: "string" }, "no-compact": { type: "boolean" } });
    if (parsed.positionals.length > 0) throw new Error(`unexpected argument '${parsed.positionals[0]}'`);
    const dir = resolve(parsed.values["data"] as string);
    const dest = resolve(requireString(parsed, "to"));
    if (!existsSync(join(dir, ENVIRONMENT_FILE)))
      throw new Error(
        `${dir} holds no parley store (no ${ENVIRONMENT_FILE}): pass --data DIR with the server's data directory`,
      );
    if (within(dest, dir) || within(dir, dest))
      throw new Error(`--to ${dest} must be outside the data directory ${dir} (and not contain it)`);
    if (!isMissingOrEmptyDir(dest))
      throw new Error(
        `--to ${dest} is not empty: a backup goes to a new or empty directory, so nothing is overwritten`,
      );
    return { parsed, dir, dest, compact: parsed.values["no-compact"] !== true };
  });
  if (!options) return USAGE_EXIT;
  const { parsed, dir, dest, compact } = options;
  const quiet = parsed.values["json"] === true;
  const started = Date.now();
  const createdDest = !existsSync(dest);
  const dataOut = join(dest, BACKUP_DATA_DIR);
  let bar: Progress | null = null;
  try {
    // 1. The store, as of one commit.
    let snapshotBar: Progress | null = null;
    await snapshotEnvironment(dir, dataOut, {
      compact,
      onProgress: quiet
        ? undefined
        : (bytes, estimate) => {
            snapshotBar ??= progressBar("snapshot", estimate);
            snapshotBar.update(bytes);
          },
    });
    // The compacted copy is smaller than the estimate (the source's used extent): end at 100%.
    (snapshotBar as Progress | null)?.update(Number.MAX_SAFE_INTEGER);
    (snapshotBar as Progress | null)?.stop();

    // 2. Configuration and uploads (files written outside LMDB: copied as they are now).
    for (const name of CONFIG_FILES) {
      if (existsSync(join(dir, name))) cpSync(join(dir, name), join(dataOut, name));
    }
    const uploads = join(dir, UPLOADS_DIR);
    // Partial uploads (each realm's tmp/) are not files anyone has; the restore need not carry them.
    const notPartial = (source: string) => relative(uploads, source).split(sep)[1] !== "tmp";
    if (existsSync(uploads) && statSync(uploads).isDirectory())
      cpSync(uploads, join(dataOut, UPLOADS_DIR), { recursive: true, filter: notPartial });

    // 3. What the snapshot holds, read from the copy itself.
    const store = openForCommand(dataOut, "backup (reading its snapshot)");
    let facts: { messageCount: number; lastMessageId: number; realms: number };
    try {
      facts = {
        messageCount: store.countMessages(),
        lastMessageId: store.lastMessageId,
        realms: store.listRealms().length,
      };
    } finally {
      store.close();
    }
    rmSync(join(dataOut, "lock.mdb"), { force: true });

    // 4. Checksums of what was written.
    const paths = listFiles(dataOut);
    const total = paths.reduce((sum, p) => sum + fileBytes(join(dataOut, p)), 0);
    bar = quiet ? null : progressBar("checksums", total);
    let done = 0;
    const files: ManifestFile[] = [];
    for (const path of paths) {
      const sha256 = await sha256File(join(dataOut, path), (n) => bar?.update((done += n)));
      files.push({ path, bytes: fileBytes(join(dataOut, path)), sha256 });
    }
    bar?.stop();
    bar = null;

    const manifest: Manifest = {
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      created_at: new Date(started).toISOString(),
      source: dir,
      compacted: compact,
      message_count: facts.messageCount,
      last_message_id: facts.lastMessageId,
      realms: facts.realms,
      total_bytes: total,
      duration_ms: Date.now() - started,
      files,
      not_included: leftOut(dir),
    };
    writeFileDurably(join(dest, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    const hasUploads = files.some((f) => f.path.startsWith(`${UPLOADS_DIR}/`));
    output(
      parsed,
      { backup: dest, ...manifest },
      [
        `backed up ${dir} to ${dest} in ${manifest.duration_ms} ms`,
        `${facts.messageCount} messages (last ID ${facts.lastMessageId}), ${facts.realms} realm(s), ${files.length} file(s), ${total} bytes${compact ? " (compacted)" : ""}`,
        hasUploads
          ? `uploads: ${files.filter((f) => f.path.startsWith(`${UPLOADS_DIR}/`)).length} file(s)`
          : "uploads: none",
        `manifest: ${join(dest, MANIFEST_FILE)}`,
      ].join("\n"),
    );
    return 0;
  } catch (error) {
    bar?.stop();
    // Leave no half backup that looks like one: remove what this run wrote.
    if (createdDest) rmSync(dest, { recursive: true, force: true });
    else for (const name of readdirSync(dest)) rmSync(join(dest, name), { recursive: true, force: true });
    throw error;
  }
}
