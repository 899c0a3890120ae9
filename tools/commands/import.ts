/**
 * @module tools/commands/import
 * `parley import --data DIR --from EXPORT [--subdomain S]`: builds a parley realm
 * from a Zulip organization export (tools/import: the reader and the replay). The
 * whole export is read and checked before DIR is touched; the realm's subdomain is
 * the export's unless --subdomain is given, and must be free in DIR. Prints what was
 * imported and what could not be carried over, and writes that report with the
 * Zulip-to-parley ID mapping to DIR/imports/<subdomain>-<time>.json. Needs the server
 * stopped (it opens DIR as its one writer).
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ENVIRONMENT_FILE, type Store } from "../../src/engine/index.js";
import { output, parseOptions, requireString } from "../args.js";
import { openForCommand, parseOrUsage, USAGE_EXIT } from "../demo/cli.js";
import { replayExport } from "../import/replay.js";
import { openExport, readExport, type ZulipExport } from "../import/zulip-export.js";
import { progressBar } from "../progress.js";
import { resolveConfig } from "../../src/config/index.js";
import { externalImages } from "../external-images.js";

const USAGE = "parley import --data DIR --from EXPORT(.tar.gz or directory) [--subdomain S] [--json]";

export async function run(argv: string[]): Promise<number> {
  const options = parseOrUsage("import", USAGE, () => {
    const parsed = parseOptions(argv, { from: { type: "string" }, subdomain: { type: "string" } });
    if (parsed.positionals.length > 0) throw new Error(`unexpected argument '${parsed.positionals[0]}'`);
    const from = resolve(requireString(parsed, "from"));
    const opened = openExport(from);
    let data: ZulipExport;
    try {
      data = readExport(opened.root);
    } finally {
      opened.cleanup();
    }
    const subdomain = typeof parsed.values["subdomain"] === "string" ? parsed.values["subdomain"] : data.realm.string_id;
    return { parsed, from, data, subdomain, dir: resolve(parsed.values["data"] as string) };
  });
  if (!options) return USAGE_EXIT;
  const { parsed, from, data, subdomain, dir } = options;
  const quiet = parsed.values["json"] === true;

  const existed = existsSync(dir);
  let clock = Math.floor(Date.now() / 1000);
  // noSync: one fsync per replayed action would make large imports crawl; the file is
  // fsynced once at the end instead.
  // External images in imported messages are signed with the key the server will verify them with.
  const { renderer } = externalImages(resolveConfig(undefined, dir).config, dir);
  const store: Store = openForCommand(dir, "import", { noSync: true, now: () => clock, renderer });
  let result: ReturnType<typeof replayExport>;
  try {
    if (store.findRealmBySubdomain(subdomain)) {
      store.close();
      if (!existed) rmSync(dir, { recursive: true, force: true });
      console.error(`parley import: ${dir} already has a realm with subdomain '${subdomain}': pass --subdomain S to import under another\n\nusage: ${USAGE}`);
      return USAGE_EXIT;
    }
    const bar = quiet ? null : progressBar("import", data.messages.length);
    try {
      // One transaction: an import that fails part-way (no owner to create the realm
      // with, a storage error) leaves nothing behind. Refused rows do not fail it: the
      // engine's actions check before they write, and the replay skips and counts them.
      result = store.batch(() => replayExport(store, data, { subdomain, setClock: (t) => (clock = t), onProgress: (done) => bar?.update(done) }));
    } finally {
      bar?.stop();
    }
  } catch (error) {
    store.close();
    if (!existed) rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  store.close();
  const fd = openSync(join(dir, ENVIRONMENT_FILE), "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }

  const { report, ids } = result;
  const reportDir = join(dir, "imports");
  mkdirSync(reportDir, { recursive: true });
  const reportFile = join(reportDir, `${subdomain || "default"}-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  const idMap = (m: Map<number, number>) => Object.fromEntries([...m].map(([k, v]) => [String(k), v]));
  writeFileSync(reportFile, `${JSON.stringify({ from, ...report, ids: { users: idMap(ids.users), channels: idMap(ids.channels), messages: idMap(ids.messages), groups: idMap(ids.groups) } }, null, 2)}\n`);
  const lines = [
    `imported ${from} as realm ${report.realm.id} '${report.realm.subdomain}' (${report.realm.name}) into ${dir}`,
    ...Object.entries(report.imported).map(([k, v]) => `  ${v} ${k}`),
    Object.keys(report.notCarried).length > 0 ? "not carried over:" : "everything read was carried over",
    ...Object.entries(report.notCarried).map(([k, v]) => `  ${v.count} × ${k}${v.examples.length > 0 ? ` (e.g. ${v.examples.join("; ")})` : ""}`),
    ...(Object.keys(report.ignoredTables).length > 0 ? [`tables parley has no place for: ${Object.entries(report.ignoredTables).map(([t, n]) => `${t} (${n})`).join(", ")}`] : []),
    `report and ID mapping: ${reportFile}`,
  ];
  output(parsed, { ...report, report_file: reportFile }, lines.join("\n"));
  return 0;
}
