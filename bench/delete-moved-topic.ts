/**
 * @module bench/delete-moved-topic
 * `npm run build && node dist/bench/delete-moved-topic.js [--data bench/tmp/100k] [--rounds 3] [--profile DIR]`
 *
 * bench:worst's costliest deletion, in process: on a private copy of a bench:peer dataset,
 * after parley serve's write warm-up, the 10,000-subscriber channel's biggest topic is
 * moved to a private channel with protected history and back (change_all), resolved and
 * unresolved (`--rounds` times each, as bench:worst's PATCH rows and their undos), a fresh
 * message of the channel deleted as many times, and then the topic deleted
 * (Store.deleteTopic, until complete) while a setImmediate ticker times every turn of the
 * event loop in CPU and wall time. Prints each turn of 5 ms or more (CPU) and each
 * write's CPU time with the turn it fell in (b: a batch, p: a read purge, o: other), GC
 * pauses, and the figures: longest turn CPU, longest write CPU, the batches' writes' CPU
 * in all, loop held (bench/loop-probe). One topic a process: run it a few times
 * and compare minimums. --profile DIR writes a CPU profile of the deletion.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { loadavg } from "node:os";
import { join } from "node:path";
import { PerformanceObserver } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { openStore } from "../src/index.js";
import { warmUpWrites } from "../src/engine/index.js";
import { internals } from "../src/engine/internal.js";
import { key } from "../src/engine/index/keys.js";
import { renderMarkdown } from "../src/markdown/index.js";
import { readManifest } from "../tools/generate/manifest.js";
import { workingCopy } from "./dataset.js";
import { probeLoop } from "./loop-probe.js";

const { values } = parseArgs({
  options: {
    data: { type: "string", default: join("bench", "tmp", "100k") },
    rounds: { type: "string", default: "3" },
    profile: { type: "string" },
    "warm-up": { type: "string", default: "3" },
    /** First delete another moved-in topic of the channel (its second biggest): code and caches warm. */
    prime: { type: "boolean", default: false },
  },
  strict: true,
});
const log = (line: string) => process.stderr.write(line + "\n");
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ");

async function main(): Promise<void> {
  const manifest = readManifest(values.data);
  const work = workingCopy(values.data);
  log(`load ${load()}`);
  const store = openStore(work.dir);
  const warm = await warmUpWrites({ renderer: renderMarkdown, rounds: Number(values["warm-up"]) });
  log(`write warm-up: ${warm.rounds} rounds, ${warm.ms.toFixed(0)} ms`);
  const owner = manifest.ownerId;
  const general = manifest.generalChannelId;
  const created = store.subscribe(owner, {
    channels: [{ name: "bench private move target" }],
    newChannel: { inviteOnly: true, historyPublicToSubscribers: false },
  });
  const privateTarget = created.createdChannelIds[0]!;
  const newest = store.getMessageWindow(owner, {
    narrow: [
      { operator: "channel", operand: general },
      { operator: "topic", operand: manifest.bigTopic },
    ],
    anchor: "newest",
    numBefore: 1,
    numAfter: 0,
  }).ids[0]!;
  const topicSize = store.getMessageWindow(owner, {
    narrow: [
      { operator: "channel", operand: general },
      { operator: "topic", operand: manifest.bigTopic },
    ],
    anchor: "newest",
    numBefore: 5000,
    numAfter: 0,
  }).ids.length;
  log(`topic '${manifest.bigTopic}': ${topicSize} messages`);
  const rounds = Number(values.rounds);
  for (let i = 0; i < rounds; i++) {
    await store.updateMessageAsync(owner, newest, { channelId: privateTarget, propagateMode: "change_all" });
    await store.updateMessageAsync(owner, newest, { channelId: general, propagateMode: "change_all" });
  }
  for (let i = 0; i < rounds; i++) {
    await store.updateMessageAsync(owner, newest, { topic: `✔ ${manifest.bigTopic}`, propagateMode: "change_all" });
    await store.updateMessageAsync(owner, newest, { topic: manifest.bigTopic, propagateMode: "change_all" });
  }
  for (let i = 0; i < rounds; i++) {
    const doomed = store.sendMessage({
      senderId: owner,
      to: { type: "channel", channel: general, topic: "bench edits" },
      content: "a message to edit",
    }).id;
    await store.deleteMessage(owner, doomed);
  }
  if (values.prime) {
    const bitmaps = internals(store).bitmaps;
    const sized = store
      .channelTopics(owner, general)
      .filter((t) => t.name !== manifest.bigTopic)
      .map((t) => ({ name: t.name, size: bitmaps.get(key.channelTopic(general, t.name)).size }))
      .sort((a, b) => b.size - a.size);
    const other = sized[0]!;
    const last = bitmaps.get(key.channelTopic(general, other.name)).maximum();
    await store.updateMessageAsync(owner, last, { channelId: privateTarget, propagateMode: "change_all" });
    await store.updateMessageAsync(owner, last, { channelId: general, propagateMode: "change_all" });
    const c = cpuMs();
    while (!(await store.deleteTopic(owner, general, other.name)).complete);
    log(`primed: deleted moved-in topic '${other.name}' (${other.size} messages), ${(cpuMs() - c).toFixed(0)} ms cpu`);
  }
  // bench:worst sends a refused input or two before the deletion: whatever the moves left pending runs meanwhile.
  await new Promise((resolve) => setTimeout(resolve, 100));
  log(`load ${load()}`);

  const state = internals(store);
  const write = state.write.bind(state);
  const writes: { cpu: number; turn: number; kind: string }[] = [];
  // What each write is (from its caller): the batches' and the read purge's costs differ.
  const kindOf = (stack: string): string =>
    stack.includes("continueReadPurge") ? "p" : stack.includes("deleteTopicBatch") ? "b" : "o";
  let turn = 0;
  state.write = (fn) => {
    const before = cpuMs();
    const stack = new Error().stack ?? "";
    try {
      return write(fn);
    } finally {
      writes.push({ cpu: cpuMs() - before, turn, kind: kindOf(stack) });
    }
  };
  const gcs: string[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (e.duration > 2) gcs.push(`gc ${e.duration.toFixed(1)} ms in turn ${turn}`);
  });
  observer.observe({ entryTypes: ["gc"] });
  const turns: { cpu: number; wall: number; writes: string[] }[] = [];
  let running = true;
  let lastCpu = cpuMs();
  let lastWall = performance.now();
  const tick = () => {
    const [c, w] = [cpuMs(), performance.now()];
    turns.push({
      cpu: c - lastCpu,
      wall: w - lastWall,
      writes: writes.filter((x) => x.turn === turn).map((x) => `${x.kind}${x.cpu.toFixed(1)}`),
    });
    [lastCpu, lastWall] = [c, w];
    turn++;
    if (running) setImmediate(tick);
  };
  const profiler = values.profile === undefined ? null : new Session();
  if (profiler) {
    profiler.connect();
    profiler.post("Profiler.enable");
    profiler.post("Profiler.setSamplingInterval", { interval: 250 });
    profiler.post("Profiler.start");
  }
  const probe = probeLoop();
  setImmediate(tick);
  const c0 = cpuMs();
  const t0 = performance.now();
  let calls = 0;
  for (let complete = false; !complete; calls++)
    complete = (await store.deleteTopic(owner, general, manifest.bigTopic)).complete;
  const t1 = performance.now();
  const c1 = cpuMs();
  running = false;
  tick();
  const loop = probe.stop();
  observer.disconnect();
  if (profiler)
    await new Promise<void>((resolve) =>
      profiler.post("Profiler.stop", (error, result) => {
        if (!error) {
          mkdirSync(values.profile!, { recursive: true });
          writeFileSync(join(values.profile!, `delete-moved-topic.cpuprofile`), JSON.stringify(result.profile));
        }
        profiler.disconnect();
        resolve();
      }),
    );
  turns.forEach((t, i) => {
    if (t.cpu >= 5 || t.writes.length > 0)
      log(`  turn ${i}: cpu ${t.cpu.toFixed(1)} wall ${t.wall.toFixed(1)} writes [${t.writes.join(", ")}]`);
  });
  for (const g of gcs) log(`  ${g}`);
  const longestTurn = Math.max(...turns.map((t) => t.cpu));
  const longestWrite = Math.max(...writes.map((w) => w.cpu));
  const batches = writes.filter((w) => w.kind === "b").map((w) => w.cpu);
  log(
    `deleteTopic (moved-in, ${topicSize} messages, ${calls} calls): cpu ${(c1 - c0).toFixed(1)} ms, wall ${(t1 - t0).toFixed(1)} ms, ` +
      `${writes.length} writes, longest turn cpu ${longestTurn.toFixed(1)} ms (wall ${Math.max(...turns.map((t) => t.wall)).toFixed(1)}), ` +
      `longest write cpu ${longestWrite.toFixed(1)} ms, batch writes cpu ${batches.reduce((a, b) => a + b, 0).toFixed(1)} ms (${batches.length}), loop held ${Math.max(loop.longestBlockMs, loop.loopDelayMaxMs).toFixed(1)} ms; ` +
      `top turns cpu ${turns
        .map((t) => t.cpu)
        .sort((a, b) => b - a)
        .slice(0, 6)
        .map((c) => c.toFixed(1))
        .join(" ")}`,
  );
  log(`load ${load()}`);
  store.close();
  work.cleanup();
}

await main();
