/**
 * @module bench/delete-topic
 * `node dist/bench/delete-topic.js [--users N] [--messages N] [--queues N] [--no-sync]`
 *
 * POST /streams/{id}/delete_topic's engine side on a realm of N users (default 10,000):
 * a 1,000-message topic deleted (Store.deleteTopic, 100 per transaction) in a channel
 * every user is subscribed to and has read, then in a 50-subscriber channel of the same
 * realm (where every other user's historical bitmap is probed), and single messages
 * deleted from the big channel; an EventHub with bulk_message_deletion queues receives
 * the events. Reports wall time, the writes it took with the longest one's wall and CPU
 * time (CPU time is what a write holds the loop on an idle machine; wall time on a
 * shared one includes waiting for a core), and the longest event-loop block (a 1 ms
 * setInterval probe's largest gap, and perf_hooks' loop-delay maximum). Target: no
 * block over 50 ms. Also a topic moved in from the small channel (its rows follow
 * actions/move-rows) and one resolved in place (topic registry rows). BENCH_WRITES=1
 * prints each case's writes' CPU ms in order.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openStore } from "../src/index.js";
import { internals } from "../src/engine/internal.js";
import { key } from "../src/engine/index/keys.js";
import { EventHub } from "../src/realtime/index.js";
import type { Store, User } from "../src/engine/index.js";
import { crowdedRealm } from "./crowded-realm.js";
import { probeLoop } from "./loop-probe.js";

/** A topic of `count` messages from rotating senders, read by every subscriber (as after a day of use). */
function fillTopic(store: Store, senders: readonly User[], channel: string, topic: string, count: number): number[] {
  const ids: number[] = [];
  store.batch(() => {
    for (let i = 0; i < count; i++)
      ids.push(
        store.sendMessage({
          senderId: senders[i % senders.length]!.id,
          to: { type: "channel", channel, topic },
          content: `message ${i} about ${topic}, with a few words to index`,
        }).id,
      );
  });
  return ids;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      users: { type: "string", default: "10000" },
      messages: { type: "string", default: "1000" },
      queues: { type: "string", default: "200" },
      "no-sync": { type: "boolean", default: false },
    },
    strict: true,
  });
  const userCount = Number(values.users);
  const count = Number(values.messages);
  const dir = mkdtempSync(join(tmpdir(), "parley-delete-topic-"));
  const store = openStore(dir, { noSync: values["no-sync"] });
  try {
    const { realm, owner, users } = crowdedRealm(store, "Deletions", userCount, "everyone");
    const ids = users.map((u) => u.id);
    store.subscribe(owner.id, { channels: [{ name: "small" }], principals: ids.slice(0, 50) });
    const state = internals(store);
    const channelId = (name: string) => state.channelByName.get(`${realm.id}:${name.toUpperCase()}`)!;
    const senders = users.slice(0, 20);
    console.error("filling topics");
    fillTopic(store, senders, "everyone", "chatter", 2000);
    const big = fillTopic(store, senders, "everyone", "doomed", count);
    fillTopic(store, senders.slice(0, 10), "small", "chatter", 200);
    const small = fillTopic(store, senders.slice(0, 10), "small", "doomed", count);
    const singles = fillTopic(store, senders, "everyone", "singles", 20);
    // A topic moved into the big channel from the small one (its messages' rows follow
    // actions/move-rows, and a deletion looks at every user), and one resolved in place
    // (its records name a topic registry row: actions/topic-registry).
    const movedIn = fillTopic(store, senders.slice(0, 10), "small", "moved in", count);
    const resolved = fillTopic(store, senders, "everyone", "to resolve", count);
    // Everyone has read everything, a few starred some: per-user bits to clear.
    state.write(() => {
      for (const id of ids) state.bitmaps.addRange(key.userFlag(id, "read"), 1, state.lastMessageId + 1);
      for (const id of ids.slice(0, 50)) state.bitmaps.addMany(key.userFlag(id, "starred"), [big[5]!, small[5]!]);
    });
    await store.updateMessageAsync(owner.id, movedIn[0]!, {
      channelId: channelId("everyone"),
      propagateMode: "change_all",
      sendNotificationToOldThread: false,
      sendNotificationToNewThread: false,
    });
    await store.updateMessageAsync(owner.id, resolved[0]!, {
      topic: "✔ to resolve",
      propagateMode: "change_all",
      sendNotificationToOldThread: false,
      sendNotificationToNewThread: false,
    });
    // Non-subscribers of the small channel with historical rows there.
    for (const user of users.slice(100, 110)) store.updateFlags(user.id, [small[7]!], "starred", "add");

    const hub = new EventHub(store);
    const queueCount = Math.min(Number(values.queues), users.length);
    for (const user of users.slice(0, queueCount))
      hub.register(user, {
        eventTypes: ["delete_message"],
        allPublicStreams: false,
        narrow: [],
        applyMarkdown: true,
        clientGravatar: true,
        emptyTopicName: true,
        streamTypingNotifications: false,
        includeDeactivatedGroups: false,
        presenceFormat: "modern",
        bulkMessageDeletion: true,
        idleTimeoutSecs: 600,
      });

    const results: Record<string, unknown>[] = [];
    // Every write's wall and CPU time (StoreState.write is what each action calls).
    const writes: { wall: number; cpu: number }[] = [];
    const write = state.write.bind(state);
    state.write = ((fn: Parameters<typeof write>[0]) => {
      const [wall, cpu] = [performance.now(), process.cpuUsage()];
      try {
        return write(fn);
      } finally {
        const used = process.cpuUsage(cpu);
        writes.push({ wall: performance.now() - wall, cpu: (used.user + used.system) / 1000 });
      }
    }) as typeof state.write;
    const writeFigures = () => {
      if (process.env["BENCH_WRITES"]) console.error(writes.map((w) => w.cpu.toFixed(0)).join(" "));
      const cpu = writes.map((w) => w.cpu).sort((a, b) => a - b);
      const out = {
        writes: writes.length,
        longest_write_ms: Number(Math.max(...writes.map((w) => w.wall)).toFixed(1)),
        longest_write_cpu_ms: Number(cpu[cpu.length - 1]!.toFixed(1)),
        median_write_cpu_ms: Number(cpu[cpu.length >> 1]!.toFixed(1)),
      };
      writes.length = 0;
      return out;
    };
    for (const [label, channel, topic, expected] of [
      ["1,000-message topic, 10,000-subscriber channel", "everyone", "doomed", big],
      ["1,000-message topic, 50-subscriber channel", "small", "doomed", small],
      ["1,000-message topic moved in from the 50-subscriber channel", "everyone", "moved in", movedIn],
      ["1,000-message topic resolved in place (topic registry row)", "everyone", "✔ to resolve", resolved],
    ] as const) {
      const probe = probeLoop();
      const started = performance.now();
      const result = await store.deleteTopic(owner.id, channelId(channel), topic);
      const ms = performance.now() - started;
      const loop = probe.stop();
      const left = expected.filter((id) => state.messageRecord(id) !== undefined).length;
      results.push({
        case: label,
        complete: result.complete,
        left,
        total_ms: Math.round(ms),
        ...writeFigures(),
        ...loop,
      });
    }
    const probe = probeLoop();
    const singleTimes: number[] = [];
    for (const id of singles) {
      const started = performance.now();
      await store.deleteMessage(owner.id, id);
      singleTimes.push(performance.now() - started);
    }
    const loop = probe.stop();
    singleTimes.sort((a, b) => a - b);
    results.push({
      case: "single message, 10,000-subscriber channel",
      median_ms: Number(singleTimes[singleTimes.length >> 1]!.toFixed(2)),
      max_ms: Number(singleTimes[singleTimes.length - 1]!.toFixed(2)),
      ...writeFigures(),
      ...loop,
    });
    const report = store.verify();
    results.push({ verify: report.differences.length === 0 && report.problems.length === 0 ? "clean" : report });
    hub.close();
    results.push({ load_average_1m: Number(loadavg()[0]!.toFixed(1)), durable: !values["no-sync"] });
    for (const line of results) console.log(JSON.stringify(line));
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
