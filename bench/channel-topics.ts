/**
 * @module bench/channel-topics
 * `node dist/bench/channel-topics.js [--topics N] [--per-topic K]`
 *
 * GET /users/me/{stream_id}/topics on a channel of N topics (default 100,000) of K
 * messages each (default 2), sent round-robin so that every topic spans the history:
 * - cold: the first listing after opening the store (bitmap cache empty): one key scan
 *   of the channel's topic bitmaps, one chunk and one message meta per topic (median of
 *   three fresh opens); and the same built a page per turn (channelTopicsAsync, the
 *   HTTP route's): in all, and its longest turn of the event loop;
 * - warm: the list again, unchanged (the cache's sorted list);
 * - after a send, and after moving a topic's newest message to another topic;
 * - a protected-history channel of the same shape, for a subscriber who joined half way;
 * - the per-message alternative the index replaces: every message meta of the channel,
 *   grouped by folded topic (what deriving the list from the messages would cost);
 * - JSON.stringify of the answer's wire form, and the heap the cached list holds.
 * Prints one JSON line.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openStore } from "../src/index.js";
import { internals } from "../src/engine/internal.js";
import { rewriteMessages } from "../src/engine/actions/message-rewrite.js";
import { getMessageRecord } from "../src/engine/storage/message-records.js";
import { foldTopic, key } from "../src/engine/index/keys.js";
import type { Store } from "../src/engine/index.js";
import { progressBar } from "../tools/progress.js";

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function time(fn: () => unknown): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/**
 * How long `op` takes in all, and the longest the event loop did not turn meanwhile (a
 * 1 ms probe), in wall time and in the process's CPU time (on a shared machine the wall
 * gap includes waiting for a core).
 */
async function longestTurn(
  op: () => Promise<unknown>,
): Promise<{ totalMs: number; longestTurnMs: number; longestTurnCpuMs: number }> {
  let longest = 0;
  let longestCpu = 0;
  let last = performance.now();
  let lastCpu = cpuMs();
  const probe = setInterval(() => {
    const now = performance.now();
    const cpu = cpuMs();
    longest = Math.max(longest, now - last);
    longestCpu = Math.max(longestCpu, cpu - lastCpu);
    last = now;
    lastCpu = cpu;
  }, 1);
  const t0 = performance.now();
  last = t0;
  lastCpu = cpuMs();
  await op();
  const totalMs = performance.now() - t0;
  longest = Math.max(longest, performance.now() - last);
  longestCpu = Math.max(longestCpu, cpuMs() - lastCpu);
  clearInterval(probe);
  return { totalMs, longestTurnMs: longest, longestTurnCpuMs: longestCpu };
}

function fill(store: Store, senderId: number, channel: string, topics: number, perTopic: number): void {
  const total = topics * perTopic;
  const progress = progressBar(`sending ${total} messages to ${channel}`, total);
  const batch = 20_000;
  for (let from = 0; from < total; from += batch) {
    store.batch(() => {
      for (let i = from; i < Math.min(total, from + batch); i++) {
        const topic = `topic ${i % topics}`;
        store.sendMessage({ senderId, to: { type: "channel", channel, topic }, content: `m${i}` });
      }
    });
    progress.update(Math.min(total, from + batch));
  }
  progress.stop();
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      topics: { type: "string", default: "100000" },
      "per-topic": { type: "string", default: "2" },
    },
    strict: true,
  });
  const topics = Number(values.topics);
  const perTopic = Number(values["per-topic"]);
  const dir = mkdtempSync(join(tmpdir(), "parley-topics-"));
  let store = openStore(dir, { noSync: true });
  try {
    const { realm, owner } = store.createRealm({
      subdomain: "",
      name: "Topics",
      owner: { email: "owner@bench.dev", fullName: "Owner" },
    });
    const member = store.createUser({ realmId: realm.id, email: "m@bench.dev", fullName: "Member" });
    store.subscribe(owner.id, { channels: [{ name: "big" }], principals: [owner.id, member.id] });
    store.subscribe(owner.id, {
      channels: [{ name: "protected" }],
      principals: [owner.id],
      newChannel: { inviteOnly: true, historyPublicToSubscribers: false },
    });
    fill(store, owner.id, "big", topics, perTopic);
    fill(store, owner.id, "protected", topics / 2, perTopic);
    store.subscribe(owner.id, { channels: [{ name: "protected" }], principals: [member.id] });
    fill(store, owner.id, "protected", topics / 2, perTopic);

    const big = internals(store).channelByName.get(`${realm.id}:BIG`)!;
    const prot = internals(store).channelByName.get(`${realm.id}:PROTECTED`)!;
    // Cold: a fresh open each time (empty bitmap cache and topic lists), median of three.
    const colds: number[] = [];
    let listed = 0;
    let heap = 0;
    for (let i = 0; i < 3; i++) {
      store.close();
      store = openStore(dir, { noSync: true });
      global.gc?.();
      const heapBefore = process.memoryUsage().heapUsed;
      colds.push(time(() => (listed = store.channelTopics(member.id, big).length)));
      global.gc?.();
      heap = process.memoryUsage().heapUsed - heapBefore;
    }
    const cold = median(colds);
    // The server's path: the same cold list built a page per turn; its longest turn.
    const paged: { totalMs: number; longestTurnMs: number; longestTurnCpuMs: number }[] = [];
    for (let i = 0; i < 3; i++) {
      store.close();
      store = openStore(dir, { noSync: true });
      paged.push(await longestTurn(() => store.channelTopicsAsync(member.id, big)));
    }
    const state = internals(store);
    const warm = median(Array.from({ length: 9 }, () => time(() => store.channelTopics(member.id, big))));

    const afterSend: number[] = [];
    for (let i = 0; i < 9; i++) {
      store.sendMessage({
        senderId: owner.id,
        to: { type: "channel", channel: "big", topic: `topic ${i}` },
        content: "x",
      });
      afterSend.push(time(() => store.channelTopics(member.id, big)));
    }
    const afterMove: number[] = [];
    for (let i = 0; i < 9; i++) {
      const newest = store.channelTopics(member.id, big)[0]!.maxId;
      state.write((ctx) => {
        const before = getMessageRecord(state.tables, newest)!;
        rewriteMessages(state, ctx, [{ before, after: { ...before, topic: `moved ${i}` } }]);
      });
      afterMove.push(time(() => store.channelTopics(member.id, big)));
    }

    let protectedListed = 0;
    const protectedCold = time(() => (protectedListed = store.channelTopics(member.id, prot).length));
    const protectedWarm = median(Array.from({ length: 5 }, () => time(() => store.channelTopics(member.id, prot))));

    // The alternative: every message's meta, grouped by folded topic.
    const perMessage = time(() => {
      const newest = new Map<string, number>();
      for (const id of state.bitmaps.get(key.channel(big))) {
        const meta = state.metaOf(id)!;
        newest.set(foldTopic(meta[1]), id);
      }
      return newest.size;
    });

    const answer = store.channelTopics(member.id, big);
    const json = time(() => JSON.stringify({ topics: answer.map((x) => ({ name: x.name, max_id: x.maxId })) }));

    console.log(
      JSON.stringify({
        topics,
        per_topic: perTopic,
        listed,
        cold_ms: Number(cold.toFixed(1)),
        cold_paged_total_ms: Number(median(paged.map((p) => p.totalMs)).toFixed(1)),
        cold_paged_longest_turn_ms: Number(median(paged.map((p) => p.longestTurnMs)).toFixed(1)),
        cold_paged_longest_turn_cpu_ms: Number(median(paged.map((p) => p.longestTurnCpuMs)).toFixed(1)),
        warm_ms: Number(warm.toFixed(2)),
        after_send_ms: Number(median(afterSend).toFixed(2)),
        after_move_ms: Number(median(afterMove).toFixed(2)),
        protected_listed: protectedListed,
        protected_cold_ms: Number(protectedCold.toFixed(1)),
        protected_warm_ms: Number(protectedWarm.toFixed(1)),
        per_message_metas_ms: Number(perMessage.toFixed(1)),
        json_ms: Number(json.toFixed(1)),
        cache_heap_mb: Number((heap / 1e6).toFixed(1)),
        load_average: Number(loadavg()[0]!.toFixed(1)),
      }),
    );
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
