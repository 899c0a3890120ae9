/**
 * @module bench/alert-word-send
 * `node dist/bench/alert-word-send.js [--users N] [--sends N] [--no-sync]`
 *
 * What alert words cost a send: two realms of N users (default 10,000), each with a
 * channel all of them are subscribed to; in one realm 1,000 users hold 10 words each
 * (10,000 distinct words in its one matcher), in the other none. Two contents per
 * realm: a 200-character sentence no word matches, and the same with one user's word
 * (one has_alert_word bit written). The four cases' sends are interleaved so that the
 * shared machine's drifting load falls on all alike. The matcher is built at the first
 * send after the words change, outside the timed sends (its time is reported apart).
 * Reports each case's median and p90 and the median's ratio to the realm without words.
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
const WORDY_USERS = Math.min(1000, userCount - 1);
const WORDS_EACH = 10;

const dir = mkdtempSync(join(tmpdir(), "parley-alert-word-send-"));
const store = openStore(dir, { noSync: values["no-sync"] });
try {
  // Two realms alike but for the words, their sends interleaved: on a shared machine the
  // load drifts over a run, and alternating gives both cases the same drift.
  const setUp = (name: string) => {
    const { realm, owner } = store.createRealm({
      subdomain: name,
      name,
      owner: { email: `owner@${name}.test`, fullName: "Owner" },
    });
    const ids: number[] = [];
    const bar = progressBar(`${name} users`, userCount);
    store.batch(() => {
      for (let i = 0; i < userCount; i++) {
        ids.push(store.createUser({ realmId: realm.id, email: `u${i}@${name}.test`, fullName: `User ${i}` }).id);
        if (i % 500 === 0) bar.update(i);
      }
    });
    bar.update(userCount);
    bar.stop();
    store.subscribe(owner.id, { channels: [{ name: "everyone" }], principals: [owner.id, ...ids] });
    return ids;
  };
  const plainIds = setUp("plain");
  const wordyIds = setUp("wordy");
  const plain =
    "The release train leaves at noon; please check the dashboards, the staging logs and the open reviews " +
    "before then, and say so in this topic if anything (tests, docs, translations) is still missing today.";
  const hit = `${plain} kw1-7 ping`;
  const send = (ids: readonly number[], i: number, content: string) =>
    store.sendMessage({
      senderId: ids[0]!,
      to: { type: "channel", channel: "everyone", topic: "t" },
      content: `${content} ${i}`,
    });
  store.batch(() => {
    for (let u = 0; u < WORDY_USERS; u++) {
      const words = Array.from({ length: WORDS_EACH }, (_, w) => (w === 7 ? `kw${u}-${w} ping` : `kw${u}-${w}`));
      store.addAlertWords(wordyIds[u + 1]!, words);
    }
  });
  for (let i = 0; i < 50; i++) send(plainIds, i, plain);
  const t0 = performance.now();
  send(wordyIds, 0, plain);
  const buildMs = performance.now() - t0;
  for (let i = 0; i < 50; i++) send(wordyIds, i, plain);

  const cases = [
    { label: "none", ids: plainIds, kind: "no word", content: plain },
    { label: "none", ids: plainIds, kind: "one user's word", content: hit },
    { label: `${WORDY_USERS} users x ${WORDS_EACH}`, ids: wordyIds, kind: "no word", content: plain },
    { label: `${WORDY_USERS} users x ${WORDS_EACH}`, ids: wordyIds, kind: "one user's word", content: hit },
  ];
  const times = cases.map((): number[] => []);
  const bar = progressBar("sends", sends);
  for (let i = 0; i < sends; i++) {
    cases.forEach((c, k) => {
      const start = performance.now();
      send(c.ids, i, c.content);
      times[k]!.push(performance.now() - start);
    });
    if (i % 20 === 0) bar.update(i);
  }
  bar.update(sends);
  bar.stop();
  const at = (list: number[], q: number) =>
    [...list].sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor(q * list.length))]!;

  console.log(`send to a ${userCount}-subscriber channel, ${sends} sends per case, the cases interleaved`);
  console.log(
    `load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
  console.log(`first send after the words changed (builds the matcher): ${buildMs.toFixed(1)} ms`);
  console.log("| alert words in the realm | content | median ms | p90 ms | median ratio |\n|---|---|---|---|---|");
  cases.forEach((c, k) => {
    const base = at(times[k % 2]!, 0.5);
    const median = at(times[k]!, 0.5);
    console.log(
      `| ${c.label} | ${c.kind} | ${median.toFixed(2)} | ${at(times[k]!, 0.9).toFixed(2)} | ` +
        `${(median / base).toFixed(2)}x |`,
    );
  });
} finally {
  store.close();
  rmSync(dir, { recursive: true, force: true });
}
