/**
 * @module bench/mutations
 * `npm run build && node dist/bench/mutations.js [--scale 100k] [--data DIR] [--runs 3] [--only TEXT] [--no-sync]`
 *
 * How long issue #28's mutations hold the event loop on the generated dataset, with an
 * event queue (and a waiting long-poll) for every user of the realm, as a busy server
 * would have: editing a message's content in the 10,000-subscriber channel, moving a
 * 5,000-message topic of that channel to a 50-member public channel and to a private
 * one with protected history (change_all), resolving a 1,000-message topic, deleting a
 * 1,000-message topic (when the store has deleteTopic), and the first and a cached
 * GET /users/me/{id}/topics of the channel with the most topics.
 *
 * Each operation is set up untimed (its message or topic sent with no queues), then the
 * queues are registered and the operation timed: "call" is the synchronous engine call
 * (its write, the commit and delivery to every queue), "hold" the longest stretch the
 * loop did not turn (the call plus the waiting polls answered in its microtasks; for an
 * operation that yields, the largest gap of a 1 ms interval probe), CPU the process's
 * user+system time over the operation. The machine is shared: the load average is
 * printed with each row. Writes commit durably unless --no-sync.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { openStore } from "../src/index.js";
import { internals } from "../src/engine/internal.js";
import type { Store, User } from "../src/engine/index.js";
import { EventHub, type QueueOptions } from "../src/realtime/index.js";
import { chooseDataset, ensureDataset, workingCopy } from "./dataset.js";
import { progressBar } from "../tools/progress.js";

const { values } = parseArgs({
  options: {
    scale: { type: "string" },
    data: { type: "string" },
    runs: { type: "string", default: "3" },
    only: { type: "string" },
    "no-sync": { type: "boolean", default: false },
    "no-queues": { type: "boolean", default: false },
    /** minCopies,maxMs,maxCopies of the hub's delivery slices (default: the hub's). */
    slice: { type: "string" },
    /** Write a CPU profile of each timed operation (setup excluded) into this directory. */
    profile: { type: "string" },
  },
  strict: true,
});
const RUNS = Number(values.runs);
const log = (line: string) => process.stderr.write(line + "\n");

const QUEUE: QueueOptions = {
  eventTypes: null,
  allPublicStreams: false,
  narrow: [],
  applyMarkdown: true,
  clientGravatar: true,
  emptyTopicName: true,
  streamTypingNotifications: true,
  includeDeactivatedGroups: false,
  presenceFormat: "modern",
  // As the web app and the mobile app register (one delete_message event for many messages).
  bulkMessageDeletion: true,
  idleTimeoutSecs: 600,
};

interface Sample {
  readonly callMs: number;
  /** CPU time of the synchronous call (what it holds the loop on an idle core). */
  readonly callCpuMs: number;
  /** The longest turn in CPU time. */
  readonly holdCpuMs: number;
  /** Until every copy was pushed. */
  readonly doneMs: number;
  readonly holdMs: number;
  readonly cpuMs: number;
  readonly events: number;
  readonly load: number;
}

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * The largest gap between turns of the loop while `op` runs (a 1 ms interval probe), in
 * wall time and in the process's CPU time (what the gap would have been on an idle core).
 */
async function timed(
  op: () => unknown,
  busy: () => boolean,
): Promise<{ callMs: number; callCpuMs: number; holdMs: number; holdCpuMs: number; cpuMs: number; doneMs: number }> {
  let maxGap = 0;
  let maxGapCpu = 0;
  let last = performance.now();
  let lastCpu = cpuMs();
  const probe = setInterval(() => {
    const t = performance.now();
    const c = cpuMs();
    maxGap = Math.max(maxGap, t - last);
    maxGapCpu = Math.max(maxGapCpu, c - lastCpu);
    last = t;
    lastCpu = c;
  }, 1);
  await new Promise((resolve) => setTimeout(resolve, 5));
  maxGap = 0;
  maxGapCpu = 0;
  const c0 = cpuMs();
  const t0 = performance.now();
  let callMs = 0;
  const result = op();
  callMs = performance.now() - t0;
  const callCpuMs = cpuMs() - c0;
  if (result instanceof Promise) await result;
  // Past the microtasks (answered polls) and every slice of the delivery.
  do await new Promise((resolve) => setImmediate(resolve));
  while (busy());
  const doneMs = performance.now() - t0;
  const c1 = cpuMs();
  await new Promise((resolve) => setTimeout(resolve, 3));
  clearInterval(probe);
  return {
    callMs,
    callCpuMs,
    holdMs: Math.max(maxGap, callMs),
    holdCpuMs: Math.max(maxGapCpu, callCpuMs),
    cpuMs: c1 - c0,
    doneMs,
  };
}

/** An event queue with a waiting poll for each user; returns a function that drops them. */
function withQueues(store: Store, users: readonly User[]): { delivered(): number; busy(): boolean; close(): void } {
  if (values["no-queues"]) return { delivered: () => 0, busy: () => false, close() {} };
  const [minCopies, maxMs, maxCopies] = (values.slice ?? "").split(",").map(Number);
  const hub = new EventHub(store, {
    gcIntervalSecs: 3600,
    ...(values.slice !== undefined
      ? { deliverySlice: { minCopies: minCopies!, maxMs: maxMs!, maxCopies: maxCopies! } }
      : {}),
  });
  // One controller per poll, as the HTTP layer has one per request.
  const polls: AbortController[] = [];
  for (const user of users) {
    const queue = hub.register(user, QUEUE);
    const abort = new AbortController();
    polls.push(abort);
    void hub.poll(user, { queueId: queue.id, lastEventId: undefined, dontBlock: false }, abort.signal);
  }
  return {
    delivered: () => hub.stats.eventsDelivered,
    busy: () => hub.pendingCopies > 0,
    close() {
      for (const abort of polls) abort.abort();
      hub.close();
    },
  };
}

async function main(): Promise<void> {
  const choice = chooseDataset(values.scale, values.data, "100k");
  const manifest = await ensureDataset(choice, false, log);
  const copy = workingCopy(choice.dir);
  const store = openStore(copy.dir, { noSync: values["no-sync"] });
  const state = internals(store);
  try {
    store.warmUp();
    const realmId = manifest.realmId;
    const general = manifest.generalChannelId;
    const generalName = store.getChannel(general)!.name;
    const owner = store.getUser(manifest.ownerId);
    const editor = store.getUser(manifest.subjects.main);
    const users = store.realmUsers(realmId).filter((u) => u.isActive && !u.isBot);
    const members = users.filter((u) => state.subscribers.get(general)?.has(u.id) === true);
    log(`${users.length} users, ${members.length} in ${generalName}; queues: ${values["no-queues"] ? "none" : "all"}`);

    // Targets of the moves: 50 members of the big channel each (the owner, who moves, among them).
    const fifty = [owner.id, ...members.slice(0, 49).map((u) => u.id)];
    store.subscribe(owner.id, { channels: [{ name: "bench public target" }], principals: fifty });
    store.subscribe(owner.id, {
      channels: [{ name: "bench private target" }],
      principals: fifty,
      newChannel: { inviteOnly: true, historyPublicToSubscribers: false },
    });
    const channelId = (name: string) => state.channelByName.get(`${realmId}:${name.toUpperCase()}`)!;
    const publicTarget = channelId("bench public target");
    const privateTarget = channelId("bench private target");

    /** A topic of `count` messages in the big channel from rotating senders; its first ID. */
    const fillTopic = (topic: string, count: number): number => {
      let first = 0;
      store.batch(() => {
        for (let i = 0; i < count; i++) {
          const id = store.sendMessage({
            senderId: members[i % 20]!.id,
            to: { type: "channel", channel: generalName, topic },
            content: `Message ${i} of ${topic} about the plan, with a few words to index.`,
          }).id;
          if (i === 0) first = id;
        }
      });
      return first;
    };

    // Notification Bot is created by the realm's first notice (a one-off of a few events
    // to every queue): before the measured operations.
    const warm = fillTopic("bench warm-up", 2);
    store.updateMessage(owner.id, warm, { topic: "✔ bench warm-up", propagateMode: "change_all" });

    type Op = { name: string; setup: (run: number) => () => unknown };
    const ops: Op[] = [
      {
        name: "send a message, 10k-subscriber channel (for comparison)",
        setup: (run) => () =>
          store.sendMessage({
            senderId: editor.id,
            to: { type: "channel", channel: generalName, topic: "bench sends" },
            content: `Send ${run}`,
          }),
      },
      {
        name: "edit content, 10k-subscriber channel",
        setup: (run) => {
          const to = { type: "channel" as const, channel: generalName, topic: "bench edits" };
          const id = store.sendMessage({ senderId: editor.id, to, content: `Edit target ${run}` }).id;
          return () => store.updateMessage(editor.id, id, { content: `Edit target ${run}, edited **now**` });
        },
      },
      {
        name: "move 5000-message topic to a public channel (change_all)",
        setup: (run) => {
          const first = fillTopic(`bench move public ${run}`, 5000);
          return () =>
            store.updateMessage(owner.id, first, {
              channelId: publicTarget,
              propagateMode: "change_all",
              sendNotificationToOldThread: true,
            });
        },
      },
      {
        name: "move 5000-message topic to a private channel (change_all)",
        setup: (run) => {
          const first = fillTopic(`bench move private ${run}`, 5000);
          return () =>
            store.updateMessage(owner.id, first, {
              channelId: privateTarget,
              propagateMode: "change_all",
              sendNotificationToOldThread: true,
            });
        },
      },
      {
        // bench:worst's undo of its private move: the topic comes back to the channel of all.
        name: "move a 5000-message topic back from the private channel (change_all)",
        setup: (run) => {
          const first = fillTopic(`bench move back ${run}`, 5000);
          store.updateMessage(owner.id, first, { channelId: privateTarget, propagateMode: "change_all" });
          return () => store.updateMessage(owner.id, first, { channelId: general, propagateMode: "change_all" });
        },
      },
      {
        name: "move a 5000-message topic to the private channel after a round trip (change_all)",
        setup: (run) => {
          const first = fillTopic(`bench move again ${run}`, 5000);
          store.updateMessage(owner.id, first, { channelId: privateTarget, propagateMode: "change_all" });
          store.updateMessage(owner.id, first, { channelId: general, propagateMode: "change_all" });
          return () => store.updateMessage(owner.id, first, { channelId: privateTarget, propagateMode: "change_all" });
        },
      },
      {
        name: "resolve 1000-message topic",
        setup: (run) => {
          const topic = `bench resolve ${run}`;
          const first = fillTopic(topic, 1000);
          return () => store.updateMessage(owner.id, first, { topic: `✔ ${topic}`, propagateMode: "change_all" });
        },
      },
    ];
    const withDelete = store as Store & {
      deleteTopic?: (userId: number, channelId: number, topic: string) => Promise<unknown>;
    };
    if (typeof withDelete.deleteTopic === "function") {
      const deleteTopic = withDelete.deleteTopic.bind(store);
      ops.push(
        {
          name: "delete 1000-message topic",
          setup: (run) => {
            const topic = `bench delete ${run}`;
            fillTopic(topic, 1000);
            return () => deleteTopic(owner.id, general, topic);
          },
        },
        {
          // bench:worst deletes the topic its moves took to the private channel and back.
          name: "delete 1000-message topic moved to the private channel and back",
          setup: (run) => {
            const topic = `bench delete moved ${run}`;
            const first = fillTopic(topic, 1000);
            store.updateMessage(owner.id, first, { channelId: privateTarget, propagateMode: "change_all" });
            store.updateMessage(owner.id, first, { channelId: general, propagateMode: "change_all" });
            return () => deleteTopic(owner.id, general, topic);
          },
        },
      );
    } else log("(no Store.deleteTopic in this build: delete_topic skipped)");
    const busiest = busiestTopicChannel(store, manifest.channelIds);
    ops.push(
      {
        name: `first topic list of the busiest channel (${busiest.topics} topics)`,
        setup: () => {
          state.bitmaps.clearCache();
          return () => store.channelTopics(owner.id, busiest.id);
        },
      },
      {
        name: `cached topic list of the busiest channel`,
        setup: () => {
          store.channelTopics(owner.id, busiest.id);
          return () => store.channelTopics(owner.id, busiest.id);
        },
      },
    );

    const only = values.only?.toLowerCase();
    const rows: { name: string; samples: Sample[] }[] = [];
    for (const op of ops) {
      if (only !== undefined && !op.name.toLowerCase().includes(only)) continue;
      const samples: Sample[] = [];
      const progress = progressBar(op.name, RUNS);
      for (let run = 0; run < RUNS; run++) {
        const go = op.setup(run);
        const queues = op.name.includes("topic list") ? null : withQueues(store, users);
        const profiler = values.profile === undefined ? null : await startProfile();
        const t = await timed(go, () => queues?.busy() ?? false);
        if (profiler) await profiler.stop(join(values.profile!, `${op.name.replace(/\W+/g, "-")}-${run}.cpuprofile`));
        samples.push({ ...t, events: queues?.delivered() ?? 0, load: loadavg()[0]! });
        queues?.close();
        progress.update(run + 1);
      }
      progress.stop();
      rows.push({ name: op.name, samples });
      log(`  ${op.name}: hold ${samples.map((s) => s.holdMs.toFixed(0)).join(", ")} ms`);
    }

    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const f = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
    console.log(
      `${choice.label}, ${users.length} users, queues ${values["no-queues"] ? "none" : "one per user"}, ` +
        `${values["no-sync"] ? "no sync" : "durable commits"}, ${RUNS} runs`,
    );
    console.log(
      "| operation | call ms median (max) | call CPU ms median | loop hold ms median (max) | " +
        "longest turn CPU ms median (max) | delivered after ms median | CPU ms median | events | load avg |",
    );
    console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (const { name, samples } of rows) {
      const calls = samples.map((s) => s.callMs);
      const holds = samples.map((s) => s.holdMs);
      console.log(
        `| ${name} | ${f(med(calls))} (${f(Math.max(...calls))}) | ${f(med(samples.map((s) => s.callCpuMs)))} | ` +
          `${f(med(holds))} (${f(Math.max(...holds))}) | ` +
          `${f(med(samples.map((s) => s.holdCpuMs)))} (${f(Math.max(...samples.map((s) => s.holdCpuMs)))}) | ` +
          `${f(med(samples.map((s) => s.doneMs)))} | ` +
          `${f(med(samples.map((s) => s.cpuMs)))} | ${samples[0]!.events} | ` +
          `${samples.map((s) => s.load.toFixed(1)).join("/")} |`,
      );
    }
  } finally {
    store.close();
    copy.cleanup();
  }
}

/** A CPU profile (node:inspector) from now until stop(), written as a .cpuprofile file. */
async function startProfile(): Promise<{ stop(file: string): Promise<void> }> {
  const session = new Session();
  session.connect();
  const post = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
    );
  await post("Profiler.enable");
  await post("Profiler.setSamplingInterval", { interval: 200 });
  await post("Profiler.start");
  return {
    async stop(file) {
      const { profile } = (await post("Profiler.stop")) as { profile: unknown };
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

/** The channel with the most topics (by its topic bitmaps' keys). */
function busiestTopicChannel(store: Store, channelIds: readonly number[]): { id: number; topics: number } {
  const state = internals(store);
  let best = { id: channelIds[0]!, topics: 0 };
  for (const id of channelIds) {
    const topics = state.bitmaps.maximaWithPrefix(`ct:${id}:`).length;
    if (topics > best.topics) best = { id, topics };
  }
  return best;
}

await main();
