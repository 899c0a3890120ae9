/**
 * @module bench/send-profile
 * `node dist/bench/send-profile.js --data DIR [--sends N] [--sync]`: sends N short messages
 * to the dataset's all-users channel on a private copy of the store (noSync unless --sync)
 * and prints the median and p90 per send. Run under `--cpu-prof` to see where a send's
 * time goes; the peer run's "send" rows time the same call.
 */
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openStore } from "../src/index.js";
import { readManifest } from "../tools/generate/manifest.js";

const { values } = parseArgs({
  options: { data: { type: "string" }, sends: { type: "string" }, sync: { type: "boolean" } },
});
if (!values.data) throw new Error("usage: send-profile --data DIR [--sends 2000] [--sync]");
const manifest = readManifest(values.data);
const dir = mkdtempSync(join(tmpdir(), "parley-send-"));
try {
  for (const f of ["data.mdb", "dataset.json"]) cpSync(join(values.data, f), join(dir, f));
  const store = openStore(dir, { noSync: !values.sync });
  const sends = Number(values.sends ?? 2000);
  const times: number[] = [];
  for (let i = 0; i < sends; i++) {
    const t = process.hrtime.bigint();
    store.sendMessage({
      senderId: manifest.subjects.main,
      to: { type: "channel", channel: manifest.generalChannelId, topic: "bench sends" },
      content: `Benchmark message with a ${manifest.commonWord} word.`,
      client: "website",
    });
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  // The peer run times 20 sends after 2 warm-up ones on a freshly opened store: show that window too.
  const early = times.slice(2, 22).sort((a, b) => a - b);
  if (early.length > 0)
    console.log(`sends 3-22 after open: median ${early[Math.floor((early.length - 1) / 2)]!.toFixed(3)} ms`);
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.floor(q * (times.length - 1))]!.toFixed(3);
  console.log(
    `${sends} sends ${values.sync ? "durable" : "without fsync"}: median ${at(0.5)} ms, p90 ${at(0.9)} ms, min ${at(0)} ms`,
  );
  store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
