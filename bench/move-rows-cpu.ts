/**
 * @module bench/move-rows-cpu
 * `npm run build && node dist/bench/move-rows-cpu.js [--users 10000] [--messages 5000] [--runs 5] [--plan-only]`
 *
 * CPU time (user + system, process.cpuUsage) of the channel moves whose row planning
 * once cost per user: a fresh topic of the channel every user is in moved to a private
 * channel with protected history and 50 members (bench:peer's move row), and a topic
 * moved back out of the big channel after it had been moved into it (every member of the
 * big channel then had the moved messages withdrawn). Each figure is the minimum over
 * `runs` repetitions, which a shared machine's load inflates least. Synthetic data.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Session } from "node:inspector";
import { openStore } from "../src/index.js";
import { internals } from "../src/engine/internal.js";
import type { Store, User } from "../src/engine/index.js";
import { planChannelMoveRows, planChannelMoveRowsInSteps } from "../src/engine/actions/move-rows.js";
import { RoaringBitmap32, type Bitmap } from "../src/engine/index/bitmap-store.js";
import { key } from "../src/engine/index/keys.js";

const started = performance.now();
const log = (line: string) =>
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1)} s] ${line}\n`);
const { values } = parseArgs({
  options: {
    users: { type: "string", default: "10000" },
    messages: { type: "string", default: "5000" },
    runs: { type: "string", default: "5" },
    /** Writes a CPU profile of each fresh-topic move there (node:inspector), and times only those. */
    profile: { type: "string" },
    /** Times planChannelMoveRows alone (no write) and its longest step: fresh, moved back in and out, min of `runs`. */
    "plan-only": { type: "boolean", default: false },
  },
});
const USERS = Number(values.users);
const MESSAGES = Number(values.messages);
const RUNS = Number(values.runs);

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

function timed(fn: () => void): { cpu: number; wall: number } {
  const c0 = cpuMs();
  const t0 = performance.now();
  fn();
  return { cpu: cpuMs() - c0, wall: performance.now() - t0 };
}

/** Runs `fn` under the in-process profiler, writing the profile to `file` (the inspector answers synchronously). */
function profiled<T>(file: string, fn: () => T): T {
  const session = new Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.setSamplingInterval", { interval: 20 });
  session.post("Profiler.start");
  const out = fn();
  session.post("Profiler.stop", (error, result) => {
    if (!error) writeFileSync(file, JSON.stringify(result.profile));
  });
  session.disconnect();
  return out;
}

function channelId(store: Store, realmId: number, name: string): number {
  return internals(store).channelByName.get(`${realmId}:${name.toUpperCase()}`)!;
}

const dir = mkdtempSync(join(tmpdir(), "parley-move-rows-"));
const store = openStore(dir, { noSync: true });
try {
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
  log(`${USERS} users`);
  const ids = users.map((u) => u.id);
  store.subscribe(owner.id, { channels: [{ name: "big" }], principals: ids });
  store.subscribe(owner.id, {
    channels: [{ name: "closet" }],
    principals: ids.slice(0, 50),
    newChannel: { inviteOnly: true, historyPublicToSubscribers: false },
  });
  const big = channelId(store, realm.id, "big");
  const closet = channelId(store, realm.id, "closet");
  const topic = (name: string) => {
    let first = 0;
    store.batch(() => {
      for (let i = 0; i < MESSAGES; i++) {
        const id = store.sendMessage({
          senderId: users[(i * 7) % 100]!.id,
          to: { type: "channel", channel: "big", topic: name },
          content: `message ${i} of ${name}`,
        }).id;
        if (i === 0) first = id;
      }
    });
    return first;
  };
  const move = (messageId: number, channel: number) =>
    timed(() =>
      store.updateMessage(owner.id, messageId, {
        channelId: channel,
        propagateMode: "change_all",
        sendNotificationToOldThread: false,
        sendNotificationToNewThread: true,
      }),
    );
  log(`${USERS} users, ${MESSAGES} messages a topic`);
  const fresh: number[] = [];
  const backIn: number[] = [];
  const backOut: number[] = [];
  log("subscribed");
  if (values["plan-only"]) {
    const state = internals(store);
    const plan = (topicName: string, from: number, to: number, movedBefore: boolean) => {
      const moved = state.bitmaps.get(key.channelTopic(from, topicName));
      const sentBy = new Map<number, Bitmap>();
      for (const u of users.slice(0, 100)) {
        const sent = RoaringBitmap32.and(state.bitmaps.get(key.sender(u.id)), moved);
        if (!sent.isEmpty) sentBy.set(u.id, sent);
      }
      const [a, b] = [state.channels.get(from)!, state.channels.get(to)!];
      const cpu: number[] = [];
      const longestStep: number[] = [];
      const longestStepWall: number[] = [];
      const once = () => planChannelMoveRows(state, a, b, moved, sentBy, moved.minimum(), movedBefore);
      for (let i = 0; i < RUNS; i++) {
        cpu.push(timed(once).cpu);
        // As a staged move runs it: a turn per step (MOVE_ROWS_STEP users of the two channels).
        const steps = planChannelMoveRowsInSteps(state, a, b, moved, sentBy, moved.minimum(), movedBefore);
        let [longest, longestWall] = [0, 0];
        for (let done = false; !done;) {
          const step = timed(() => (done = steps.next().done === true));
          [longest, longestWall] = [Math.max(longest, step.cpu), Math.max(longestWall, step.wall)];
        }
        longestStep.push(longest);
        longestStepWall.push(longestWall);
      }
      if (profileDir !== undefined) profiled(join(profileDir, `plan-${topicName}-${to}.cpuprofile`), once);
      const min = (xs: number[]) => Math.min(...xs).toFixed(1);
      return `${min(cpu)} ms CPU (ranges ${cpu.map((x) => x.toFixed(0)).join(" ")}), longest step ${min(longestStep)} ms CPU (${longestStep.map((x) => x.toFixed(0)).join(" ")}), wall ${longestStepWall.map((x) => x.toFixed(0)).join(" ")}`;
    };
    const profileDir = values.profile;
    topic("fresh");
    const back = topic("back");
    move(back, closet);
    const backIn = plan("back", closet, big, true);
    move(back, big);
    console.log(`load average ${loadavg()[0]!.toFixed(1)}, planChannelMoveRows min of ${RUNS}:`);
    console.log(`  fresh topic, big -> private: ${plan("fresh", big, closet, false)}`);
    console.log(`  moved back in, private -> big: ${backIn}`);
    console.log(`  moved back out, big -> private: ${plan("back", big, closet, true)}`);
    process.exit(0);
  }
  const profileDir = values.profile;
  const there = profileDir === undefined ? topic("there and back") : 0;
  log("first topic sent");
  if (profileDir === undefined) move(there, closet);
  for (let run = 0; run < RUNS; run++) {
    const id = topic(`fresh ${run}`);
    if (profileDir !== undefined) {
      fresh.push(profiled(join(profileDir, `fresh-${run}.cpuprofile`), () => move(id, closet)).cpu);
      log(`  run ${run + 1}: fresh ${fresh.at(-1)!.toFixed(0)} ms CPU (profiled)`);
      continue;
    }
    fresh.push(move(id, closet).cpu);
    backIn.push(move(there, big).cpu);
    backOut.push(move(there, closet).cpu);
    log(
      `  run ${run + 1}: fresh ${fresh.at(-1)!.toFixed(0)} ms, back in ${backIn.at(-1)!.toFixed(0)} ms, out again ${backOut.at(-1)!.toFixed(0)} ms CPU`,
    );
  }
  log("verify");
  const report = store.verify();
  if (report.differences.length > 0 || report.problems.length > 0) throw new Error("verify is not clean");
  const min = (xs: number[]) => Math.min(...xs).toFixed(0);
  console.log(`users ${USERS}, messages ${MESSAGES}, runs ${RUNS}, load average ${loadavg()[0]!.toFixed(1)}`);
  console.log(`fresh topic, big -> private (50): min ${min(fresh)} ms CPU`);
  if (backIn.length > 0) {
    console.log(`private -> big (moved back in): min ${min(backIn)} ms CPU`);
    console.log(`big -> private again (moved back out): min ${min(backOut)} ms CPU`);
  }
} finally {
  store.close();
  rmSync(dir, { recursive: true, force: true });
}
