/**
 * @module bench/aged-store
 * `node dist/bench/aged-store.js --data DIR [--large 10] [--short 50] [--no-compacted]`:
 * does a store slow down once it has written large values? (issues #7 item 4, #12).
 * On a private copy of DIR's store (never DIR itself), in process and without fsync:
 * the median of short sends to a small channel, then N ~10 KB plain-text sends, then
 * short sends again, N flag updates of 5,000 messages, short sends again, and sends
 * to the busiest channel (dense bitmap chunks); the same on a compacted copy (LMDB's mdb_env_copy with
 * compaction: no free pages). Prints LMDB's statistics around each phase: overflow
 * pages per table and the size of the free-page database.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { open } from "lmdb";
import { type Store } from "../src/engine/index.js";
import { openStore } from "../src/index.js";
import { internals } from "../src/engine/internal.js";
import { MAX_DBS, TABLE_NAMES, TABLE_SPECS } from "../src/engine/storage/tables.js";
import { readManifest } from "../tools/generate/manifest.js";
import { copyStoreFile } from "../src/engine/storage/copy-store-file.js";

interface DbStat {
  entryCount: number;
  overflowPages: number;
  treeLeafPageCount: number;
  treeBranchPageCount: number;
  free?: DbStat;
  lastPageNumber?: number;
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** ~`chars` characters of plain text (no Markdown syntax), different for every `seed`. */
export function plainText(chars: number, seed: number): string {
  const words = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
  ];
  let state = seed * 2654435761 + 1;
  const out: string[] = [];
  let length = 0;
  while (length < chars) {
    state = (state * 1103515245 + 12345) % 2147483648;
    const word = `${words[state % words.length]!}${state % 97}`;
    out.push(word);
    length += word.length + 1;
  }
  return out.join(" ").slice(0, chars);
}

/** Tables with overflow pages, and the free-page database's size. */
function lmdbStats(store: Store): string {
  const tables = internals(store).tables;
  const parts: string[] = [];
  let free: DbStat | undefined;
  for (const name of TABLE_NAMES) {
    const stat = (tables[name] as unknown as { getStats(): DbStat }).getStats();
    free = stat.free;
    if (stat.overflowPages > 0) parts.push(`${TABLE_SPECS[name].db}=${stat.overflowPages}`);
  }
  const f = free!;
  return `overflow pages: ${parts.join(" ") || "none"}; free DB: ${f.entryCount} entries, ${f.treeLeafPageCount} leaf + ${f.overflowPages} overflow pages`;
}

interface RunOptions {
  large: number;
  short: number;
  channelId: number;
  senderId: number;
  busyChannelId: number;
  flagUserId: number;
}

function run(label: string, dir: string, options: RunOptions): void {
  const store = openStore(dir, { noSync: true });
  const sends = (channel: number, topic: string, content: (i: number) => string) => {
    const samples: number[] = [];
    for (let i = 0; i < options.short; i++) {
      const t0 = performance.now();
      store.sendMessage({
        senderId: options.senderId,
        to: { type: "channel", channel, topic },
        content: content(i),
        client: "bench",
      });
      samples.push(performance.now() - t0);
    }
    return median(samples);
  };
  const short = (topic: string) => sends(options.channelId, topic, (i) => `short ${i}`);
  console.log(`${label}: ${lmdbStats(store)}`);
  // The biggest channel, with the generator's commonest words: these sends rewrite dense (8 KB) bitmap chunks.
  const busy = sends(
    options.busyChannelId,
    "aged-store busy",
    (i) => `build account agenda alert backup branch bug ${i}`,
  );
  const before = short("aged-store short");
  const large: number[] = [];
  for (let i = 0; i < options.large; i++) {
    const t0 = performance.now();
    store.sendMessage({
      senderId: options.senderId,
      to: { type: "channel", channel: options.channelId, topic: "aged-store large" },
      content: plainText(10_000, i + 1),
      client: "bench",
    });
    large.push(performance.now() - t0);
  }
  const after = short("aged-store short");
  const again = short("aged-store short");
  console.log(`${label}: ${lmdbStats(store)}`);
  // Bulk flag updates (a client marking a narrow as read: up to 5,000 messages each) write a large change-log entry.
  const flagged = store.getMessageWindow(options.flagUserId, {
    narrow: [],
    anchor: "newest",
    numBefore: 5000,
    numAfter: 0,
  }).ids;
  const flags: number[] = [];
  for (let i = 0; i < options.large; i++) {
    const t0 = performance.now();
    store.updateFlags(options.flagUserId, flagged, "starred", i % 2 === 0 ? "add" : "remove");
    flags.push(performance.now() - t0);
  }
  const afterFlags = short("aged-store short");
  const busyAfter = sends(
    options.busyChannelId,
    "aged-store busy",
    (i) => `build account agenda alert backup branch bug ${i}`,
  );
  console.log(`${label}: ${lmdbStats(store)}`);
  const ms = (t: number) => `${t.toFixed(2)} ms`;
  console.log(
    `${label}: busy send (channel ${options.busyChannelId}, common words) median ${ms(busy)} first (cold), ${ms(busyAfter)} at the end`,
  );
  console.log(
    `${label}: short send median ${ms(before)} before, ${ms(after)} after ${options.large} large sends, ${ms(again)} ${options.short} sends later, ${ms(afterFlags)} after ${options.large} ${flagged.length}-message flag updates`,
  );
  console.log(
    `${label}: 10 KB sends median ${ms(median(large))} (${large.map((t) => t.toFixed(1)).join(" ")}); flag updates median ${ms(median(flags))}`,
  );
  store.close();
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      data: { type: "string" },
      large: { type: "string" },
      short: { type: "string" },
      "no-compacted": { type: "boolean" },
    },
    strict: true,
  });
  if (!values.data) throw new Error("--data DIR is required (a generated dataset: DIR/data.mdb and DIR/dataset.json)");
  const manifest = readManifest(values.data);
  mkdirSync(join("bench", "tmp"), { recursive: true });
  // No dot in the names: lmdb-js treats a path with an extension as a file.
  const scratch = mkdtempSync(join("bench", "tmp", "aged-store-"));
  const cleanup = () => rmSync(scratch, { recursive: true, force: true });
  process.once("exit", cleanup);
  const aged = join(scratch, "aged");
  mkdirSync(aged);
  copyStoreFile(join(values.data, "data.mdb"), join(aged, "data.mdb"));
  const compacted = join(scratch, "compacted");
  if (!values["no-compacted"]) {
    mkdirSync(compacted);
    const env = open({ path: aged, readOnly: true, noSubdir: false, maxDbs: MAX_DBS, compression: false });
    await env.backup(compacted, true);
    await env.close();
  }
  // A small channel the sender can post to: the one with the fewest subscribers among those it is subscribed to.
  const probe = openStore(aged, { noSync: true });
  const senderId = manifest.subjects.sender;
  const subscribed = [...(internals(probe).subsByUser.get(senderId)?.values() ?? [])]
    .filter((s) => s.active)
    .map((s) => s.channelId);
  const channelId = subscribed.sort((a, b) => probe.subscriberCount(a) - probe.subscriberCount(b))[0];
  if (channelId === undefined) throw new Error(`sender ${senderId} has no subscription`);
  console.log(`channel ${channelId} (${probe.subscriberCount(channelId)} subscribers), sender ${senderId}`);
  probe.close();
  const options: RunOptions = {
    large: Number(values.large ?? 10),
    short: Number(values.short ?? 50),
    channelId,
    senderId,
    busyChannelId: manifest.generalChannelId,
    flagUserId: manifest.subjects.main,
  };
  run("aged", aged, options);
  if (!values["no-compacted"]) run("compacted", compacted, options);
  cleanup();
}

main().catch((error: unknown) => {
  console.error(`aged-store: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
