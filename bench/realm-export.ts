/**
 * @module bench/realm-export
 * `node dist/bench/realm-export.js --data DIR [--type 1|2]`
 *
 * An organization data export (what POST /export/realm starts) of the first realm of a
 * generated data directory (`parley generate`; the run adds an export record to it),
 * through the same RealmExports the server runs: wall time, the tarball's size, the
 * message and flag-row counts (read back with the importer's reader), and the longest
 * event-loop block while it ran (a 1 ms setInterval probe's largest gap, and
 * perf_hooks' loop-delay maximum), which is what the slicing bounds. With --type 2 every
 * active person is made to consent first.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openStore } from "../src/index.js";
import { RealmExports } from "../src/exports/realm-exports.js";
import { UploadFiles } from "../src/uploads/files.js";
import { REALM_EXPORT_STATUS, ROLE, type RealmExportType } from "../src/engine/index.js";
import { openExport, readExport } from "../tools/import/zulip-export.js";
import { DEFAULT_LIMITS } from "../tools/import/limits.js";
import { probeLoop } from "./loop-probe.js";

const { values } = parseArgs({ options: { data: { type: "string" }, type: { type: "string", default: "1" } } });
if (values.data === undefined) {
  console.error("usage: node dist/bench/realm-export.js --data DIR [--type 1|2]");
  process.exit(2);
}
const type = Number(values.type) as RealmExportType;
const store = openStore(values.data, { noSync: true });
const realm = store.listRealms()[0]!;
const users = store.realmUsers(realm.id);
const owner = users.find((u) => u.role === ROLE.OWNER && u.isActive)!;
if (type === 2)
  for (const u of users)
    if (u.isActive && !u.isBot) store.updateSettings(u.id, { settings: { allow_private_data_export: true } });
const root = mkdtempSync(join(tmpdir(), "parley-export-bench-"));
const exports = new RealmExports(store, {
  root,
  uploads: new UploadFiles(join(values.data, "uploads")),
  logError: (message, error) => console.error(message, error),
});

const probe = probeLoop();
const started = performance.now();
const row = store.requestRealmExport(owner.id, type, { supportAddress: "admin@bench", maxMessages: Infinity });
exports.start(row, "http://bench");
await exports.idle();
const seconds = (performance.now() - started) / 1000;
const loop = probe.stop();
const done = store.realmExports(owner.id).find((e) => e.id === row.id)!;
if (done.status !== REALM_EXPORT_STATUS.SUCCEEDED) throw new Error(`export ended with status ${done.status}`);
const opened = await openExport(exports.fileOf(done.exportPath!)!, DEFAULT_LIMITS);
const data = readExport(opened.root, DEFAULT_LIMITS);
opened.cleanup();
console.log(
  JSON.stringify(
    {
      type,
      users: users.length,
      storeMessages: store.countMessages(),
      exportedMessages: data.messages.length,
      flagRows: data.userMessages.length,
      seconds: Number(seconds.toFixed(1)),
      tarballMiB: Number(((done.sizeBytes ?? 0) / 1024 / 1024).toFixed(1)),
      longestBlockMs: loop.longestBlockMs,
      loopDelayMaxMs: loop.loopDelayMaxMs,
      loadAverage: loadavg()[0]!.toFixed(2),
    },
    null,
    2,
  ),
);
store.close();
rmSync(root, { recursive: true, force: true });
