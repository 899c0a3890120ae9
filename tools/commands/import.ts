/**
 * @module tools/commands/import
 * `parley import --data DIR --from EXPORT [--subdomain S]`: builds a parley realm
 * from a Zulip organization export (tools/import: the reader and the replay). The
 * whole export is read and checked before DIR is touched; the realm's subdomain is
 * the export's unless --subdomain is given, and must be free in DIR. Prints what was
 * imported and what could not be carried over, and writes that report with the
 * Zulip-to-parley ID mapping to DIR/imports/<subdomain>-<time>.json. Needs the server
 * stopped (it opens DIR as its one writer).
 *
 * The export is untrusted input: links, devices and paths outside it are refused, and
 * sizes and counts are bounded (tools/import/limits.ts); each bound has a flag to raise
 * it, which the refusal names.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ENVIRONMENT_FILE, type Store } from "../../src/engine/index.js";
import { intOption, output, parseOptions, requireString, type Parsed } from "../args.js";
import { openForCommand, parseOrUsage, USAGE_EXIT } from "../demo/cli.js";
import { DEFAULT_LIMITS, LIMIT_FLAGS, MAX_JSON_BYTES_CEILING, parseSize, type ExportLimits } from "../import/limits.js";
import { replayExport } from "../import/replay.js";
import { readUploadImages } from "../import/upload-images.js";
import { openExport, readExport, type ZulipExport } from "../import/zulip-export.js";
import { progressBar } from "../progress.js";
import { resolveConfig } from "../../src/config/index.js";
import { externalImages } from "../../src/server.js";

const USAGE =
  "parley import --data DIR --from EXPORT(.tar.gz or directory) [--subdomain S] [--json]\n" +
  "       [--max-json-size SIZE] [--max-file-size SIZE] [--max-total-size SIZE] [--max-entries N] [--max-ratio N]";

const LIMIT_OPTIONS = Object.fromEntries(
  Object.values(LIMIT_FLAGS).map((flag) => [flag.slice(2), { type: "string" as const }]),
);

function limitsFrom(parsed: Parsed): ExportLimits {
  const size = (key: "maxJsonBytes" | "maxFileBytes" | "maxTotalBytes"): number => {
    const value = parsed.values[LIMIT_FLAGS[key].slice(2)];
    const max = key === "maxJsonBytes" ? MAX_JSON_BYTES_CEILING : undefined;
    return typeof value === "string" ? parseSize(LIMIT_FLAGS[key], value, max) : DEFAULT_LIMITS[key];
  };
  return {
    maxJsonBytes: size("maxJsonBytes"),
    maxFileBytes: size("maxFileBytes"),
    maxTotalBytes: size("maxTotalBytes"),
    maxEntries: intOption(parsed, LIMIT_FLAGS.maxEntries.slice(2), DEFAULT_LIMITS.maxEntries, 1),
    maxRatio: intOption(parsed, LIMIT_FLAGS.maxRatio.slice(2), DEFAULT_LIMITS.maxRatio, 1),
  };
}

/**
 * The whole export, read and checked; unpacking a tarball shows progress unless quiet. The
 * unpacked files (uploads, emoji images) stay until `cleanup`: the replay copies them.
 */
async function loadExport(
  from: string,
  limits: ExportLimits,
  quiet: boolean,
): Promise<{ data: ZulipExport; cleanup: () => void }> {
  const isFile = statSync(from, { throwIfNoEntry: false })?.isFile() === true;
  const bar = quiet || !isFile ? null : progressBar("unpacking", statSync(from).size);
  let opened: Awaited<ReturnType<typeof openExport>>;
  try {
    opened = await openExport(from, limits, (read) => bar?.update(read));
  } finally {
    bar?.stop();
  }
  try {
    const data = readExport(opened.root, limits);
    await readUploadImages(data);
    return { data, cleanup: opened.cleanup };
  } catch (error) {
    opened.cleanup();
    throw error;
  }
}

export async function run(argv: string[]): Promise<number> {
  const options = parseOrUsage("import", USAGE, () => {
    const parsed = parseOptions(argv, { from: { type: "string" }, subdomain: { type: "string" }, ...LIMIT_OPTIONS });
    if (parsed.positionals.length > 0) throw new Error(`unexpected argument '${parsed.positionals[0]}'`);
    const from = resolve(requireString(parsed, "from"));
    return { parsed, from, limits: limitsFrom(parsed), dir: resolve(parsed.values["data"] as string) };
  });
  if (!options) return USAGE_EXIT;
  const { parsed, from, limits, dir } = options;
  const quiet = parsed.values["json"] === true;
  let data: ZulipExport;
  let cleanup: () => void;
  try {
    ({ data, cleanup } = await loadExport(from, limits, quiet));
  } catch (error) {
    // What is wrong with --from is for the operator to fix, as with a bad flag.
    console.error(`parley import: ${error instanceof Error ? error.message : String(error)}\n\nusage: ${USAGE}`);
    return USAGE_EXIT;
  }
  const subdomain = typeof parsed.values["subdomain"] === "string" ? parsed.values["subdomain"] : data.realm.string_id;

  let done: Imported | null;
  try {
    done = importInto(dir, from, data, subdomain, quiet);
  } finally {
    cleanup();
  }
  if (done === null) {
    console.error(
      `parley import: ${dir} already has a realm with subdomain '${subdomain}': pass --subdomain S to import under another\n\nusage: ${USAGE}`,
    );
    return USAGE_EXIT;
  }
  output(parsed, { ...done.report, report_file: done.reportFile }, done.lines.join("\n"));
  return 0;
}

interface Imported {
  readonly report: ReturnType<typeof replayExport>["report"];
  /** Export ID -> parley ID. */
  readonly ids: ReturnType<typeof replayExport>["ids"];
  readonly reportFile: string;
  /** What the import says to a person. */
  readonly lines: readonly string[];
}

/**
 * `parley realm move`'s import: the export at `from` (checked with the default limits) into `dir` as `subdomain`;
 * null when `dir` has that subdomain already.
 */
export async function importRealmExport(dir: string, from: string, subdomain: string): Promise<Imported | null> {
  const { data, cleanup } = await loadExport(from, DEFAULT_LIMITS, true);
  try {
    return importInto(resolve(dir), from, data, subdomain, true);
  } finally {
    cleanup();
  }
}

function importInto(dir: string, from: string, data: ZulipExport, subdomain: string, quiet: boolean): Imported | null {
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
      return null;
    }
    const bar = quiet ? null : progressBar("import", data.messages.length);
    try {
      // One transaction: an import that fails part-way (no owner to create the realm
      // with, a storage error) leaves nothing behind. Refused rows do not fail it: the
      // engine's actions check before they write, and the replay skips and counts them.
      result = store.batch(() =>
        replayExport(store, data, {
          subdomain,
          dataDir: dir,
          setClock: (t) => (clock = t),
          onProgress: (done) => bar?.update(done),
        }),
      );
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
  const reportFile = join(
    reportDir,
    `${subdomain || "default"}-${new Date().toISOString().replace(/[:.]/g, "-")}.json`,
  );
  const idMap = (m: Map<number, number>) => Object.fromEntries([...m].map(([k, v]) => [String(k), v]));
  writeFileSync(
    reportFile,
    `${JSON.stringify({ from, ...report, ids: { users: idMap(ids.users), channels: idMap(ids.channels), messages: idMap(ids.messages), groups: idMap(ids.groups) } }, null, 2)}\n`,
  );
  const lines = [
    `imported ${from} as realm ${report.realm.id} '${report.realm.subdomain}' (${report.realm.name}) into ${dir}`,
    ...Object.entries(report.imported).map(([k, v]) => `  ${v} ${k}`),
    Object.keys(report.notCarried).length > 0 ? "not carried over:" : "everything read was carried over",
    ...Object.entries(report.notCarried).map(
      ([k, v]) => `  ${v.count} × ${k}${v.examples.length > 0 ? ` (e.g. ${v.examples.join("; ")})` : ""}`,
    ),
    ...(Object.keys(report.ignoredTables).length > 0
      ? [
          `tables parley has no place for: ${Object.entries(report.ignoredTables)
            .map(([t, n]) => `${t} (${n})`)
            .join(", ")}`,
        ]
      : []),
    `report and ID mapping: ${reportFile}`,
  ];
  return { report, ids, reportFile, lines };
}
