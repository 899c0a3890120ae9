/**
 * @module bench/muted-send
 * `node dist/bench/muted-send.js [--users N] [--sends N] [--no-sync]`
 *
 * What muting costs a send: a channel every one of N users (default 10,000) is
 * subscribed to, one sender, and 0, 10, 100 and 1,000 of the users muting that sender.
 * A muted sender's message is stored read for each muter (Zulip's muted_sender_user_ids),
 * so a send writes one read-bitmap chunk per muter; recipients who mute nobody cost
 * nothing (the sender's muters are one map lookup). Reports each case's median and p90
 * send time over --sends sends (default 300) and the load average. The muters' read
 * bitmaps hold only this run's messages, so each chunk is small and rewritten whole:
 * the worst case (users who have read a long history get a small delta entry instead).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openStore } from "../src/index.js";
import { progressBar } from "../tools/progress.js";

const { values } = parseArgs({
  options: {
    users: { type: "string", default: "10000" },
    sends: { type: "string", default: "300" },
    "no-sync": { type: "boolean", default: false },
  },
});
const userCount = Number(values.users);
const sends = Number(values.sends);

const dir = mkdtempSync(join(tmpdir(), "parley-muted-send-"));
const store = openStore(dir, { noSync: values["no-sync"] });
try {
  const { realm, owner } = store.createRealm({
    subdomain: "",
    name: "Bench",
    owner: { email: "owner@bench.test", fullName: "Owner" },
  });
  const ids: number[] = [];
  const bar = progressBar("users", userCount);
  store.batch(() => {
    for (let i = 0; i < userCount; i++) {
      ids.push(store.createUser({ realmId: realm.id, email: `u${i}@bench.test`, fullName: `User ${i}` }).id);
      if (i % 500 === 0) bar.update(i);
    }
  });
  bar.update(userCount);
  bar.stop();
  store.subscribe(owner.id, { channels: [{ name: "everyone" }], principals: [owner.id, ...ids] });
  const sender = ids[0]!;
  const send = (i: number) =>
    store.sendMessage({
      senderId: sender,
      to: { type: "channel", channel: "everyone", topic: "t" },
      content: `m ${i}`,
    });
  for (let i = 0; i < 50; i++) send(i);
  let muting = 0;
  const rows: string[] = [];
  for (const muters of [0, 10, 100, 1000].filter((n) => n < userCount)) {
    for (; muting < muters; muting++) store.muteUser(ids[muting + 1]!, sender);
    const times: number[] = [];
    for (let i = 0; i < sends; i++) {
      const t0 = performance.now();
      send(i);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(2);
    rows.push(`| ${muters} | ${at(0.5)} | ${at(0.9)} |`);
  }
  console.log(`send to a ${userCount}-subscriber channel, ${sends} sends per case`);
  console.log(
    `load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
  console.log("| muters of the sender | median ms | p90 ms |\n|---|---|---|");
  for (const row of rows) console.log(row);
} finally {
  store.close();
  rmSync(dir, { recursive: true, force: true });
}
