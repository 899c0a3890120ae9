/**
 * @module tools/commands/restore
 * `parley restore --from DEST --data NEWDIR`: restores a backup made by `parley
 * backup` into a new (missing or empty) directory. Before writing anything it checks
 * every file of the manifest (size and SHA-256) and refuses a damaged backup; then it
 * copies the files (fsynced), opens the result and runs verify, and checks the
 * message count and last message ID against the manifest. Exit 0 when all of that is
 * clean, 1 when the backup is damaged or the restored store does not verify (the
 * directory is then left for inspection), 2 for bad arguments (nothing written).
 */
import { copyFileSync, existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { output, parseOptions, requireString } from "../args.js";
import { BACKUP_DATA_DIR, isMissingOrEmptyDir, readManifest, sha256File, syncFile, type Manifest } from "../backup/manifest.js";
import { openForCommand, parseOrUsage, USAGE_EXIT } from "../demo/cli.js";
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
    if (!isMissingOrEmptyDir(dir)) throw new Error(`--data ${dir} is not empty: restore writes only to a new or empty directory, so no data is overwritten`);
    return { parsed, from, manifest, dir };
  });
  if (!options) return USAGE_EXIT;
  const { parsed, from, manifest, dir } = options;
  const quiet = parsed.values["json"] === true;
  const dataIn = join(from, BACKUP_DATA_DIR);

  const damage = await checkBackup(dataIn, manifest, quiet);
  if (damage !== null) {
    console.error(`parley restore: the backup in ${from} is damaged: ${damage}; nothing was written to ${dir}`);
    return 1;
  }

  const copyBar = quiet ? null : progressBar("restoring", manifest.total_bytes);
  let copied = 0;
  mkdirSync(dir, { recursive: true });
  for (const file of manifest.files) {
    const target = join(dir, file.path);
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(join(dataIn, file.path), target);
    syncFile(target);
    copyBar?.update((copied += file.bytes));
  }
  copyBar?.stop();

  const store = openForCommand(dir, "restore");
  try {
    const verifyBar = quiet ? null : progressBar("verify", store.lastMessageId);
    const report = store.verify((done) => verifyBar?.update(done));
    verifyBar?.stop();
    const messageCount = store.countMessages();
    const problems = [
      ...report.differences.map((d) => `index ${d.key}: ${d.missingCount} missing, ${d.extraCount} extra`),
      ...report.problems,
      ...(messageCount !== manifest.message_count ? [`${messageCount} messages, the manifest says ${manifest.message_count}`] : []),
      ...(store.lastMessageId !== manifest.last_message_id ? [`last message ID ${store.lastMessageId}, the manifest says ${manifest.last_message_id}`] : []),
    ];
    const clean = problems.length === 0;
    output(
      parsed,
      { clean, data: dir, from, message_count: messageCount, last_message_id: store.lastMessageId, files: manifest.files.length, bytes: manifest.total_bytes, problems },
      clean
        ? `restored ${from} (taken ${manifest.created_at}) into ${dir}: ${messageCount} messages, last ID ${store.lastMessageId}, ${manifest.files.length} file(s); verify clean`
        : [`restored ${from} into ${dir}, but it does NOT verify (the directory is left for inspection):`, ...problems.map((p) => `  ${p}`)].join("\n"),
    );
    return clean ? 0 : 1;
  } finally {
    store.close();
  }
}
