/**
 * @module tools/commands/restore
 * `parley restore --from DEST --data NEWDIR`: restores a backup made by `parley
 * backup` into a new (missing or empty) directory. Before writing anything it checks
 * every file of the manifest (size and SHA-256) and refuses a damaged backup; then it
 * copies the files (fsynced), opens the result and runs verify (in a child process:
 * tools/backup/restored-check.ts), and checks the message count and last message ID
 * against the manifest. Exit 0 when all of that is clean, 1 when the backup is
 * damaged (nothing written), its data cannot be read although its checksums match
 * (what was copied is removed) or the restored store does not verify (the directory
 * is then left for inspection), 2 for bad arguments (nothing written). With --json a
 * refusal is one JSON line with `error`.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { copyStoreFile, ENVIRONMENT_FILE } from "../../src/engine/index.js";
import { output, parseOptions, requireString } from "../args.js";
import {
  BACKUP_DATA_DIR,
  isMissingOrEmptyDir,
  readManifest,
  sha256File,
  syncFile,
  type Manifest,
} from "../backup/manifest.js";
import { checkRestoredStore } from "../backup/restored-check.js";
import { parseOrUsage, USAGE_EXIT } from "../demo/cli.js";
import { progressBar } from "../progress.js";

const USAGE = "parley restore --from BACKUP --data NEWDIR [--json]";

/** Every listed file present with its size and checksum, or the first problem found. */
async function checkBackup(dataIn: string, manifest: Manifest, quiet: boolean): Promise<string | null> {
  const bar = quiet ? null : progressBar("checking backup", manifest.total_bytes);
  let done = 0;
  try {
    for (const file of manifest.files) {
      const path = join(dataIn, file.path);
      if (!existsSync(path)) return `${file.path} is missing`;
      const bytes = statSync(path).size;
      if (bytes !== file.bytes) return `${file.path} has ${bytes} bytes, the manifest says ${file.bytes}`;
      const sha256 = await sha256File(path, (n) => bar?.update((done += n)));
      if (sha256 !== file.sha256) return `${file.path} has SHA-256 ${sha256}, the manifest says ${file.sha256}`;
    }
    return null;
  } finally {
    bar?.stop();
  }
}

export async function run(argv: string[]): Promise<number> {
  const options = parseOrUsage("restore", USAGE, () => {
    const parsed = parseOptions(argv, { from: { type: "string" } });
    if (parsed.positionals.length > 0) throw new Error(`unexpected argument '${parsed.positionals[0]}'`);
    const from = resolve(requireString(parsed, "from"));
    if (!existsSync(from)) throw new Error(`--from ${from} does not exist`);
    const manifest = readManifest(from);
    const dir = resolve(parsed.values["data"] as string);
    if (!isMissingOrEmptyDir(dir))
      throw new Error(
        `--data ${dir} is not empty: restore writes only to a new or empty directory, so no data is overwritten`,
      );
    return { parsed, from, manifest, dir };
  });
  if (!options) return USAGE_EXIT;
  const { parsed, from, manifest, dir } = options;
  const quiet = parsed.values["json"] === true;
  const dataIn = join(from, BACKUP_DATA_DIR);

  const refuse = (problem: string): number => {
    if (quiet) console.log(JSON.stringify({ clean: false, data: dir, from, error: problem }));
    else console.error(`parley restore: ${problem}`);
    return 1;
  };

  const damage = await checkBackup(dataIn, manifest, quiet);
  if (damage !== null) return refuse(`the backup in ${from} is damaged: ${damage}; nothing was written to ${dir}`);

  const createdDir = !existsSync(dir);
  const copyBar = quiet ? null : progressBar("restoring", manifest.total_bytes);
  let copied = 0;
  try {
    mkdirSync(dir, { recursive: true });
    for (const file of manifest.files) {
      const target = join(dir, file.path);
      mkdirSync(dirname(target), { recursive: true });
      // The store as LMDB would have written it (copyStoreFile): a plain copy's large folios make every commit
      // of the restored server flush 2 MB where it changed 4 KiB, until the kernel drops them from its cache.
      if (file.path === ENVIRONMENT_FILE) copyStoreFile(join(dataIn, file.path), target);
      else copyFileSync(join(dataIn, file.path), target);
      syncFile(target);
      copyBar?.update((copied += file.bytes));
    }
  } finally {
    copyBar?.stop();
  }

  const checked = await checkRestoredStore(dir, quiet);
  if (!checked.ok) {
    // The copy is byte for byte the backup, which stays where it is: nothing to inspect
    // here that is not there, and the operator needs the directory empty to try again.
    if (createdDir) rmSync(dir, { recursive: true, force: true });
    else for (const name of readdirSync(dir)) rmSync(join(dir, name), { recursive: true, force: true });
    return refuse(
      `the backup's data cannot be read: ${checked.reason}; it was damaged before its checksums were taken ` +
        `(they match), so this backup cannot be restored: restore an older backup. Nothing was left in ${dir}`,
    );
  }
  const { messageCount, lastMessageId } = checked.store;
  const problems = [
    ...checked.store.problems,
    ...(messageCount !== manifest.message_count
      ? [`${messageCount} messages, the manifest says ${manifest.message_count}`]
      : []),
    ...(lastMessageId !== manifest.last_message_id
      ? [`last message ID ${lastMessageId}, the manifest says ${manifest.last_message_id}`]
      : []),
  ];
  const clean = problems.length === 0;
  output(
    parsed,
    {
      clean,
      data: dir,
      from,
      message_count: messageCount,
      last_message_id: lastMessageId,
      files: manifest.files.length,
      bytes: manifest.total_bytes,
      problems,
    },
    clean
      ? `restored ${from} (taken ${manifest.created_at}) into ${dir}: ${messageCount} messages, last ID ${lastMessageId}, ${manifest.files.length} file(s); verify clean`
      : [
          `restored ${from} into ${dir}, but it does NOT verify (the directory is left for inspection):`,
          ...problems.map((p) => `  ${p}`),
        ].join("\n"),
  );
  return clean ? 0 : 1;
}
