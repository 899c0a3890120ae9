/**
 * @module bench/move-topic
 * `npm run build && node dist/bench/move-topic.js [--users 10000] [--messages 5000] [--runs 3] [--staged]`
 * `[--stage-from N]`
 *
 * How long the largest moves hold the event loop in the engine (the PATCH path without
 * HTTP): a `change_all` of a 5,000-message topic from a channel every user is in to a
 * public channel half of them are in, then on to a private channel with protected
 * history (1,000 members), a rename inside it, resolving a 1,000-message topic with
 * its notice, and a second 5,000-message topic from the channel of all straight to a
 * private channel with protected history and 50 members (nearly every user loses it).
 * Each move is timed in two parts, the checks before the write (prepareMove) and the
 * write (writeMove, its notices, the commit); then one member's unread summary, which
 * rebuilds the sets the move invalidated. Synthetic data, built in one batch per run;
 * figures go to stdout and bench/results/move-topic.json (move-topic-staged.json).
 *
 * With --staged each move goes through Store.updateMessageAsync, as PATCH does: a large
 * move is staged over several turns of the event loop before its one write
 * (actions/move-staging). "prepare" is then the whole request, staging included, and
 * "longest block" the longest the event loop was held meanwhile (bench/loop-probe).
 * --stage-from sets MOVE_STAGING.minMessages (a huge one: the same request path in one write, for A/B).
 * Without it, the longest block is prepare and write together (one synchronous call).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import { probeLoop } from "./loop-probe.js";
import { openStore } from "../src/index.js";
import { internals } from "../src/engine/internal.js";
import { prepareMove, writeMove, type MoveRequest } from "../src/engine/actions/move-messages.js";
import { getMessageRecord } from "../src/engine/storage/message-records.js";
import { MOVE_STAGING } from "../src/engine/actions/move-staging.js";
import type { Store, User } from "../src/engine/index.js";

const log = (line: string) => process.stderr.write(line + "\n");

const { values } = parseArgs({
  options: {
    users: { type: "string", default: "10000" },
    messages: { type: "string", default: "5000" },
    runs: { type: "string", default: "3" },
    out: { type: "string", default: "bench/results" },
    staged: { type: "boolean", default: false },
    "stage-from": { type: "string" },
  },
});
const USERS = Number(values.users);
const MESSAGES = Number(values.messages);
const RUNS = Number(values.runs);
const STAGED = values.staged;
if (values["stage-from"] !== undefined) MOVE_STAGING.minMessages = Number(values["stage-from"]);

interface Timing {
  readonly move: string;
  readonly messages: number;
  readonly prepareMs: number;
  readonly writeMs: number;
  /** CPU time of the write (user + system): what the move costs when the machine is shared. */
  readonly writeCpuMs: number;
  /** The longest the event loop was held by the move. */
  readonly longestBlockMs: number;
  /** CPU time of the whole move (prepare and write, staging included). */
  readonly totalCpuMs: number;
  readonly unreadAfterMs: number;
}

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

function channelId(store: Store, realmId: number, name: string): number {
  return internals(store).channelByName.get(`${realmId}:${name.toUpperCase()}`)!;
}

/** A realm: USERS users in "big", half in "half", 1,000 in the protected "vault"; the topics to move. */
function build(store: Store): {
  owner: User;
  users: User[];
  moveTopicId: number;
  resolveTopicId: number;
  closetTopicId: number;
} {
  const { realm, owner } = store.createRealm({
    subdomain: "",
    name: "Bench",
    owner: { email: "owner@bench.dev", fullName: "Owner" },
  });
  const users: User[] = [owner];
  store.batch(() => {
    for (let i = 1; i < USERS; i++)
      users.push(store.createUser({ realmId: realm.id, email: `u${i}@bench.dev`, fullName: `User ${i}` }));
  });
  log(`  ${USERS} users`);
  const ids = users.map((u) => u.id);
  store.subscribe(owner.id, { channels: [{ name: "big" }], principals: ids });
  store.subscribe(owner.id, { channels: [{ name: "half" }], principals: ids.filter((_, i) => i % 2 === 0) });
  store.subscribe(owner.id, {
    channels: [{ name: "vault" }],
    principals: ids.filter((_, i) => i % 10 === 0),
    newChannel: { inviteOnly: true, historyPublicToSubscribers: false },
  });
  store.subscribe(owner.id, {
    channels: [{ name: "closet" }],
    principals: ids.slice(0, 50),
    newChannel: { inviteOnly: true, historyPublicToSubscribers: false },
  });
  log("  subscriptions");
  let moveTopicId = 0;
  let resolveTopicId = 0;
  let closetTopicId = 0;
  store.batch(() => {
    for (let i = 0; i < MESSAGES; i++) {
      const sender = users[(i * 7) % 100]!;
      const send = (topic: string, content: string) =>
        store.sendMessage({ senderId: sender.id, to: { type: "channel", channel: "big", topic }, content }).id;
      const id = send("the big topic", `message ${i} about the plan, see @**User ${i % 50}**`);
      if (i === 0) moveTopicId = id;
      const c = send("to the closet", `closet ${i}`);
      if (i === 0) closetTopicId = c;
      send(`other ${i % 20}`, `noise ${i}`);
      if (i < 1000) {
        const r = send("to resolve", `resolve me ${i}`);
        if (i === 0) resolveTopicId = r;
      }
    }
  });
  log(`  ${MESSAGES} messages in each topic to move, ${MESSAGES} others, 1000 in the topic to resolve`);
  // A few readers' flags: some read up to a point, some starred.
  for (let i = 0; i < 200; i++) store.updateFlags(users[i * 3]!.id, [moveTopicId + i * 2], "starred", "add");
  return { owner, users, moveTopicId, resolveTopicId, closetTopicId };
}

function fullRequest(request: Partial<MoveRequest>): MoveRequest {
  return {
    propagateMode: "change_all",
    sendNotificationToOldThread: true,
    sendNotificationToNewThread: true,
    ...request,
  };
}

function timeSyncMove(
  store: Store,
  actor: User,
  messageId: number,
  request: Partial<MoveRequest>,
  reader: User,
): Timing {
  const state = internals(store);
  const message = getMessageRecord(state.tables, messageId)!;
  const full = fullRequest(request);
  const c0 = cpuMs();
  const t0 = performance.now();
  const prepared = prepareMove(state, actor, message, full, state.now());
  const t1 = performance.now();
  if (!prepared) throw new Error("nothing to move");
  const c1 = cpuMs();
  state.write((ctx) => {
    const result = writeMove(state, ctx, prepared, message, { userId: actor.id, timestamp: state.now() });
    result.writeNotices();
  });
  const t2 = performance.now();
  const c2 = cpuMs();
  store.unreadSummary(reader.id);
  const t3 = performance.now();
  return {
    move: "",
    messages: prepared.messageIds.length,
    prepareMs: t1 - t0,
    writeMs: t2 - t1,
    writeCpuMs: c2 - c1,
    longestBlockMs: t2 - t0,
    totalCpuMs: c2 - c0,
    unreadAfterMs: t3 - t2,
  };
}

/** The move as PATCH makes it (Store.updateMessageAsync): staged when large, then one write. */
async function timeStagedMove(
  store: Store,
  actor: User,
  messageId: number,
  request: Partial<MoveRequest>,
  reader: User,
): Promise<Timing> {
  const full = fullRequest(request);
  // Let the loop probe's timer start before the move.
  await new Promise<void>((resolve) => setTimeout(resolve, 5));
  // The CPU time of the move's write (staging runs between writes).
  const state = internals(store);
  const write = state.write.bind(state);
  let writeCpu = 0;
  state.write = (fn) => {
    const before = cpuMs();
    try {
      return write(fn);
    } finally {
      writeCpu = Math.max(writeCpu, cpuMs() - before);
    }
  };
  const probe = probeLoop();
  const c0 = cpuMs();
  const t0 = performance.now();
  const result = await store.updateMessageAsync(actor.id, messageId, {
    ...(full.topic !== undefined ? { topic: full.topic } : {}),
    ...(full.channelId !== undefined ? { channelId: full.channelId } : {}),
    propagateMode: full.propagateMode,
    sendNotificationToOldThread: full.sendNotificationToOldThread,
    sendNotificationToNewThread: full.sendNotificationToNewThread,
  });
  const t1 = performance.now();
  const c1 = cpuMs();
  await new Promise<void>((resolve) => setTimeout(resolve, 5));
  const loop = probe.stop();
  state.write = write;
  store.unreadSummary(reader.id);
  const t2 = performance.now();
  return {
    move: "",
    messages: result.messageIds.length,
    prepareMs: t1 - t0,
    writeMs: 0,
    writeCpuMs: writeCpu,
    longestBlockMs: loop.longestBlockMs,
    totalCpuMs: c1 - c0,
    unreadAfterMs: t2 - t1,
  };
}

async function run(): Promise<Timing[]> {
  const dir = mkdtempSync(join(tmpdir(), "parley-move-bench-"));
  const store = openStore(dir, { noSync: process.env["BENCH_SYNC"] !== "1" });
  try {
    log("building");
    const { owner, users, moveTopicId, resolveTopicId, closetTopicId } = build(store);
    const realmId = owner.realmId;
    const reader = users[10]!; // in all three channels
    store.unreadSummary(reader.id);
    const out: Timing[] = [];
    const named = (move: string, t: Timing) => out.push({ ...t, move });
    const timeMove = STAGED ? timeStagedMove : timeSyncMove;
    named(
      "public → public (10k → 5k members)",
      await timeMove(store, owner, moveTopicId, { channelId: channelId(store, realmId, "half") }, reader),
    );
    named(
      "public → protected (5k → 1k members)",
      await timeMove(store, owner, moveTopicId, { channelId: channelId(store, realmId, "vault") }, reader),
    );
    named("rename in the protected channel", await timeMove(store, owner, moveTopicId, { topic: "renamed" }, reader));
    named(
      "resolve a 1,000-message topic",
      await timeMove(store, owner, resolveTopicId, { topic: "✔ to resolve" }, reader),
    );
    named(
      "public → protected (10k → 50 members)",
      await timeMove(store, owner, closetTopicId, { channelId: channelId(store, realmId, "closet") }, reader),
    );
    const report = store.verify();
    if (report.differences.length > 0 || report.problems.length > 0) throw new Error("verify is not clean");
    return out;
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const runs: Timing[][] = [];
for (let i = 0; i < RUNS; i++) {
  log(`run ${i + 1}/${RUNS}`);
  runs.push(await run());
}
const rows = runs[0]!.map((first, i) => {
  const all = runs.map((r) => r[i]!);
  const median = (pick: (t: Timing) => number) => {
    const sorted = all.map(pick).sort((a, b) => a - b);
    return Math.round(sorted[Math.floor(sorted.length / 2)]! * 10) / 10;
  };
  // On a shared machine the least of the runs says most about the code.
  const least = (pick: (t: Timing) => number) => Math.round(Math.min(...all.map(pick)) * 10) / 10;
  return {
    move: first.move,
    messages: first.messages,
    prepareMs: median((t) => t.prepareMs),
    writeMs: median((t) => t.writeMs),
    writeCpuMs: median((t) => t.writeCpuMs),
    longestBlockMs: median((t) => t.longestBlockMs),
    totalCpuMs: median((t) => t.totalCpuMs),
    unreadAfterMs: median((t) => t.unreadAfterMs),
    leastWriteCpuMs: least((t) => t.writeCpuMs),
    leastTotalCpuMs: least((t) => t.totalCpuMs),
  };
});
const path = STAGED
  ? `updateMessageAsync, staged from ${MOVE_STAGING.minMessages} messages`
  : "one write (prepareMove, writeMove)";
console.log(`users ${USERS}, runs ${RUNS} (medians), ${path}, load average ${loadavg()[0]!.toFixed(1)}`);
console.log(
  "| move | messages | prepare ms | write ms (wall) | write ms (CPU) | longest block ms | total CPU ms " +
    "| unread after ms | least write CPU ms | least total CPU ms |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|");
for (const r of rows)
  console.log(
    `| ${r.move} | ${r.messages} | ${r.prepareMs} | ${r.writeMs} | ${r.writeCpuMs} | ${r.longestBlockMs} | ` +
      `${r.totalCpuMs} | ${r.unreadAfterMs} | ${r.leastWriteCpuMs} | ${r.leastTotalCpuMs} |`,
  );
mkdirSync(values.out, { recursive: true });
writeFileSync(
  join(values.out, STAGED ? "move-topic-staged.json" : "move-topic.json"),
  JSON.stringify({ users: USERS, runs: RUNS, staged: STAGED, loadAverage: loadavg()[0], rows }, null, 2) + "\n",
);
