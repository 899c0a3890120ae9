/**
 * @module bench/breakdown
 * `node dist/bench/breakdown.js [--scale 1m] [--data DIR]`: where the engine's time goes
 * in the workloads that miss their targets (bench/results/SUMMARY.md quotes it):
 * universe materialisation, channel∧realm, record decoding, and a send with and
 * without fsync. Works on a private copy of the dataset's store.
 */
import { parseArgs } from "node:util";
import { openStore } from "../src/index.js";
import { RoaringBitmap32 } from "../src/engine/index/bitmap-store.js";
import { key } from "../src/engine/index/keys.js";
import { ReceivedSets } from "../src/engine/received.js";
import { chooseDataset, ensureDataset, workingCopy } from "./dataset.js";
import { summarize } from "./harness.js";
import { internals } from "../src/engine/internal.js";

function time(name: string, fn: () => unknown, n = 200): void {
  for (let i = 0; i < 5; i++) fn();
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    fn();
    samples.push(performance.now() - t0);
  }
  console.log(`${name.padEnd(64)} ${(summarize(samples).medianMs * 1000).toFixed(1)} µs`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { scale: { type: "string" }, data: { type: "string" } }, strict: true });
  const choice = chooseDataset(values.scale, values.data, "100k");
  const m = await ensureDataset(choice, false, (line) => console.error(line));
  const work = workingCopy(choice.dir);
  const s = m.subjects;
  const channelNarrow = [{ operator: "channel", operand: m.generalChannelId }];
  for (const noSync of [false, true]) {
    const store = openStore(work.dir, { noSync });
    if (!noSync) {
      const received = new ReceivedSets(internals(store));
      time(`personal(main): orMany over ${received.personal(s.main).size} IDs`, () => received.personal(s.main));
      const channel = internals(store).bitmaps.get(key.channel(m.generalChannelId));
      const realm = internals(store).bitmaps.get(key.realm(m.realmId));
      time(`and(channel ${channel.size}, realm ${realm.size})`, () => RoaringBitmap32.and(channel, realm));
      time("getMessageWindow channel newest 100", () =>
        store.getMessageWindow(s.main, { narrow: channelNarrow, anchor: "newest", numBefore: 100, numAfter: 0 }),
      );
      time("getMessageWindow is:starred newest 100", () =>
        store.getMessageWindow(s.main, {
          narrow: [{ operator: "is", operand: "starred" }],
          anchor: "newest",
          numBefore: 100,
          numAfter: 0,
        }),
      );
      const ids = store.getMessageWindow(s.main, {
        narrow: channelNarrow,
        anchor: "newest",
        numBefore: 1000,
        numAfter: 0,
      }).ids;
      time("1000 record loads (LMDB get + msgpack decode)", () => ids.forEach((id) => store.findMessageRecord(id)), 50);
    }
    time(
      `sendMessage to the big channel (noSync=${noSync})`,
      () =>
        store.sendMessage({
          senderId: s.main,
          to: { type: "channel", channel: m.generalChannelId, topic: "breakdown" },
          content: "hello",
          client: "website",
        }),
      50,
    );
    store.close();
  }
  work.cleanup();
}

main().catch((error: unknown) => {
  console.error(`breakdown: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
