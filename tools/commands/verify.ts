/**
 * @module tools/commands/verify
 * `parley verify --data DIR`: rebuilds every derivable index from the message records
 * and compares it with disk. Exit 0 when clean, 1 when any difference is found.
 * Refuses while a server has the directory open: the server's in-memory state is not
 * shared, so a check beside it would race its writes.
 */
import { existsSync } from "node:fs";
import { output, parseOptions } from "../args.js";
import { progressBar } from "../progress.js";
import { openForCommand } from "../demo/cli.js";

export async function run(argv: string[]): Promise<number> {
  const parsed = parseOptions(argv, {});
  const dir = parsed.values["data"] as string;
  if (!existsSync(dir)) throw new Error(`no data directory at ${dir}: pass --data DIR`);
  const store = openForCommand(dir, "verify");
  try {
    const bar = parsed.values["json"] ? null : progressBar("verify", store.lastMessageId);
    const report = store.verify((done) => bar?.update(done));
    bar?.stop();
    const clean = report.differences.length === 0 && report.problems.length === 0;
    const lines = [
      `${report.messages} messages, ${report.keysChecked} indexes checked: ${clean ? "clean" : "DIFFERENCES FOUND"}`,
      ...report.differences.map(
        (d) =>
          `  ${d.key}: ${d.missingCount} missing (e.g. ${d.missing.join(",")}), ${d.extraCount} extra (e.g. ${d.extra.join(",")})`,
      ),
      ...report.problems.map((p) => `  ${p}`),
    ];
    output(parsed, { clean, ...report }, lines.join("\n"));
    return clean ? 0 : 1;
  } finally {
    store.close();
  }
}
