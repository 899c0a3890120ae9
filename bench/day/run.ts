/**
 * @module bench/day/run
 * `npm run bench:day [-- --clients 1000] [--seconds 120] [--compress 10] [--workers 1,auto]
 *   [--ramp-steps 8] [--step-seconds 20] [--step-factor 1.25] [--break-p99-ms 1000]
 *   [--scale 100k] [--data DIR] [--long]
 *   [--cpu-prof DIR]`
 *
 * A realistic day against `parley serve` (issue #31's benchmark). The generated 100k
 * organization (10,000 users) is served from a private copy; `--clients` of its users
 * each register an event queue they keep long-polling, and with time compressed
 * `--compress` times (one real minute of activity every 60/compress seconds) they read
 * varied narrows anchored at their own oldest unread message, mark what they read,
 * react, send typing notices around their messages, ping presence once a minute and
 * send at a steady rate (rates: workload.ts). Then the offered rate is stepped up until
 * errors, lost events, a throughput shortfall or p99 > --break-p99-ms show saturation.
 * Every message event must reach every queue of its audience exactly once (ledger in
 * workload.ts). `--ramp-steps 0` runs the day phase alone (a fixed rate, for CPU A/B
 * comparisons); `--cpu-prof DIR` has every server process write a V8 CPU profile there
 * (workers inherit the flag). Server CPU and RSS come from /proc over its whole process
 * tree, also per worker per answered request; the generator (this process) measures its
 * own CPU. One row per `--workers` value; a value other than 1 is passed as `parley
 * serve --workers V`, and reported missing while the server has no such option.
 * Writes bench/results/day-<date>-<clients>.md and .json.
 */
import { execSync, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { openStore } from "../../src/index.js";
import { Rng } from "../../tools/generate/prng.js";
import { WORDS } from "../../tools/generate/vocab.js";
import { chooseDataset, ensureDataset, workingCopy } from "../dataset.js";
import { basicAuth, pool } from "../events/clients.js";
import { DayHttp, type DayAnswer } from "./http.js";
import { cpuByProcess, startServer, treeUsage } from "../server-process.js";
import {
  ClientView,
  type Conversation,
  DeliveryLedger,
  KINDS,
  type Kind,
  Pacer,
  pacedRates,
  percentile,
  type ReadPlan,
  type RegisterState,
  seqOf,
  tagOf,
  type WireMessage,
} from "./workload.js";

const log = (line: string) => process.stderr.write(line + "\n");
const round1 = (x: number) => Math.round(x * 10) / 10;
const round2 = (x: number) => Math.round(x * 100) / 100;
const EMOJI = ["tada", "heart", "smile", "eyes", "rocket"];

interface Client {
  readonly index: number;
  readonly auth: string;
  readonly view: ClientView;
  /** GET /events of its queue up to `last_event_id=` (the queue never changes). */
  readonly pollPath: string;
  lastEventId: number;
  presenceUpdateId: number;
  /** A client does one thing at a time (besides its poll): an action due while it is busy is shed. */
  busy: boolean;
}

/** Per-kind timings and failures of the current phase. */
class Recorder {
  readonly latencies = new Map<Kind, number[]>(KINDS.map((k) => [k, []]));
  readonly errors = new Map<Kind, number>(KINDS.map((k) => [k, 0]));
  readonly readShapes = new Map<string, number>();
  shed = 0;
  lastError = "";
  pollErrors = 0;
  polls = 0;
  /** Poll answers that came through a worker other than the one the poll reached (X-Parley-Worker "a>b"). */
  pollsForwarded = 0;
  events = new Map<string, number>();
  note(kind: Kind, ms: number, answer: DayAnswer | Error): boolean {
    if (answer instanceof Error || answer.status !== 200) {
      this.errors.set(kind, this.errors.get(kind)! + 1);
      this.lastError = `${kind}: ${answer instanceof Error ? answer.message : `HTTP ${answer.status} ${answer.body.slice(0, 160)}`}`;
      return false;
    }
    this.latencies.get(kind)!.push(ms);
    return true;
  }
}

class Day {
  readonly http: DayHttp;
  readonly ledger = new DeliveryLedger();
  readonly rng = new Rng(31);
  rec = new Recorder();
  seq = 0;
  inFlight = 0;
  polling = true;
  /** Channel id → indices of the clients subscribed (a channel message's audience). */
  readonly members = new Map<number, Set<number>>();
  readonly byUser = new Map<number, number>();
  clients: Client[] = [];

  constructor(
    port: number,
    readonly words: readonly string[],
  ) {
    this.http = new DayHttp(port);
  }

  async call(
    kind: Kind,
    method: "GET" | "POST" | "DELETE",
    path: string,
    client: Client,
    body?: string,
  ): Promise<DayAnswer | null> {
    const t0 = performance.now();
    this.inFlight++;
    try {
      const answer = await this.http.request(method, path, client.auth, body);
      return this.rec.note(kind, performance.now() - t0, answer) ? answer : null;
    } catch (error) {
      this.rec.note(kind, performance.now() - t0, error instanceof Error ? error : new Error(String(error)));
      return null;
    } finally {
      this.inFlight--;
    }
  }

  async register(index: number, user: { id: number; email: string; apiKey: string }): Promise<Client> {
    const auth = basicAuth(user);
    const body = new URLSearchParams({
      event_types: JSON.stringify(["message", "reaction", "typing", "update_message_flags"]),
      fetch_event_types: JSON.stringify(["message", "update_message_flags", "subscription"]),
    }).toString();
    const answer = await this.http.request("POST", "/api/v1/register", auth, body);
    if (answer.status !== 200)
      throw new Error(`register ${user.email}: HTTP ${answer.status} ${answer.body.slice(0, 200)}`);
    const state = JSON.parse(answer.body) as RegisterState & { queue_id: string; last_event_id: number };
    const view = new ClientView(user.id);
    view.learnRegister(state);
    for (const channelId of view.channels) {
      const set = this.members.get(channelId) ?? new Set<number>();
      set.add(index);
      this.members.set(channelId, set);
    }
    this.byUser.set(user.id, index);
    return {
      index,
      auth,
      view,
      pollPath: `/api/v1/events?queue_id=${encodeURIComponent(state.queue_id)}&last_event_id=`,
      lastEventId: state.last_event_id,
      presenceUpdateId: -1,
      busy: false,
    };
  }

  poll(client: Client): void {
    if (!this.polling) return;
    this.http.request("GET", client.pollPath + client.lastEventId, client.auth).then(
      (answer) => {
        const at = performance.now();
        if (answer.status !== 200) {
          this.rec.pollErrors++;
          this.rec.lastError = `GET /events: HTTP ${answer.status} ${answer.body.slice(0, 160)}`;
          setTimeout(() => this.poll(client), 200);
          return;
        }
        this.rec.polls++;
        if (answer.worker.includes(">")) this.rec.pollsForwarded++;
        this.#events(client, answer.body, at);
        this.poll(client);
      },
      (error: unknown) => {
        if (!this.polling) return;
        this.rec.pollErrors++;
        this.rec.lastError = `GET /events: ${String(error)}`;
        setTimeout(() => this.poll(client), 200);
      },
    );
  }

  #events(client: Client, body: string, at: number): void {
    const parsed = JSON.parse(body) as {
      events?: { type: string; id: number; message?: WireMessage & { content?: unknown }; flags?: unknown }[];
    };
    for (const event of parsed.events ?? []) {
      if (event.id > client.lastEventId) client.lastEventId = event.id;
      this.rec.events.set(event.type, (this.rec.events.get(event.type) ?? 0) + 1);
      if (event.type !== "message" || !event.message) continue;
      const flags = Array.isArray(event.flags) ? (event.flags as string[]) : [];
      client.view.learnMessage(event.message, flags);
      const seq = seqOf(event.message.content);
      if (seq !== null) this.ledger.receive(seq, client.index, at);
    }
  }

  audience(sender: Client, to: Conversation): Set<number> {
    if (to.kind === "channel") return new Set(this.members.get(to.channelId) ?? []);
    const set = new Set<number>([sender.index]);
    for (const id of to.userIds) {
      const index = this.byUser.get(id);
      if (index !== undefined) set.add(index);
    }
    return set;
  }

  async read(client: Client): Promise<void> {
    const plan: ReadPlan = client.view.planRead(this.rng, this.words);
    this.rec.readShapes.set(plan.shape, (this.rec.readShapes.get(plan.shape) ?? 0) + 1);
    const query = new URLSearchParams({
      anchor: String(plan.anchor),
      num_before: String(plan.numBefore),
      num_after: String(plan.numAfter),
      narrow: JSON.stringify(plan.narrow),
      apply_markdown: "true",
    });
    const answer = await this.call("read", "GET", `/api/v1/messages?${query}`, client);
    if (!answer) return;
    const messages = (JSON.parse(answer.body) as { messages?: (WireMessage & { flags?: string[] })[] }).messages ?? [];
    const unread: number[] = [];
    for (const m of messages) {
      client.view.learnMessage(m, m.flags ?? []);
      if (!(m.flags ?? []).includes("read")) unread.push(m.id);
    }
    if (unread.length === 0) return;
    client.view.markedRead(unread);
    const body = new URLSearchParams({ messages: JSON.stringify(unread), op: "add", flag: "read" }).toString();
    await this.call("flags", "POST", "/api/v1/messages/flags", client, body);
  }

  async react(client: Client): Promise<void> {
    const seen = client.view.seen;
    const mine = [...client.view.reactions];
    if (mine.length > 0 && (seen.length === 0 || this.rng.chance(0.4))) {
      const key = mine[this.rng.int(mine.length)]!;
      client.view.reactions.delete(key);
      const [id, emoji] = key.split(":") as [string, string];
      await this.call("reaction", "DELETE", `/api/v1/messages/${id}/reactions?emoji_name=${emoji}`, client);
      return;
    }
    if (seen.length === 0) return;
    const id = seen[this.rng.int(seen.length)]!;
    const emoji = EMOJI[this.rng.int(EMOJI.length)]!;
    const key = `${id}:${emoji}`;
    if (client.view.reactions.has(key)) return;
    client.view.reactions.add(key);
    const body = new URLSearchParams({ emoji_name: emoji }).toString();
    await this.call("reaction", "POST", `/api/v1/messages/${id}/reactions`, client, body);
  }

  async presence(client: Client): Promise<void> {
    const body = new URLSearchParams({
      status: "active",
      new_user_input: "true",
      slim_presence: "true",
      last_update_id: String(client.presenceUpdateId),
    }).toString();
    const answer = await this.call("presence", "POST", "/api/v1/users/me/presence", client, body);
    if (!answer) return;
    const id = (JSON.parse(answer.body) as { presence_last_update_id?: unknown }).presence_last_update_id;
    if (typeof id === "number") client.presenceUpdateId = id;
  }

  async send(client: Client): Promise<void> {
    const fallback = this.clients[this.rng.int(this.clients.length)]!.view.userId;
    const to = client.view.planSend(this.rng, fallback);
    if (!to) return;
    const typing = (op: string) =>
      new URLSearchParams(
        to.kind === "channel"
          ? { op, type: "stream", stream_id: String(to.channelId), topic: to.topic }
          : { op, type: "direct", to: JSON.stringify(to.userIds) },
      ).toString();
    await this.call("typing", "POST", "/api/v1/typing", client, typing("start"));
    const seq = this.seq++;
    const words = Array.from({ length: 3 + this.rng.int(12) }, () => this.words[this.rng.int(this.words.length)]!);
    const body = new URLSearchParams(
      to.kind === "channel"
        ? { type: "stream", to: String(to.channelId), topic: to.topic, content: `${words.join(" ")} ${tagOf(seq)}` }
        : { type: "direct", to: JSON.stringify(to.userIds), content: `${words.join(" ")} ${tagOf(seq)}` },
    ).toString();
    const sentAt = performance.now();
    const answer = await this.call("send", "POST", "/api/v1/messages", client, body);
    // A failed send expects nothing; should it still deliver, its arrivals stay orphans and are reported.
    if (answer) this.ledger.expect(seq, sentAt, this.audience(client, to));
    await this.call("typing", "POST", "/api/v1/typing", client, typing("stop"));
  }
}

interface PhaseResult {
  readonly label: string;
  readonly compress: number;
  readonly seconds: number;
  readonly offered: number;
  readonly achieved: number;
  readonly byKind: Record<Kind, { rps: number; p50: number; p99: number; p999: number; errors: number }>;
  readonly readShapes: Record<string, number>;
  readonly sends: number;
  readonly delivery: {
    expected: number;
    received: number;
    lost: number;
    pairP50: number;
    pairP99: number;
    allP50: number;
    allP99: number;
    allMax: number;
  };
  readonly events: Record<string, number>;
  readonly polls: number;
  /** Poll answers forwarded between workers to their queue's owner (0 at 1 worker). */
  readonly pollsForwarded: number;
  readonly errors: number;
  readonly shed: number;
  readonly lastError: string;
  readonly serverCpuCores: number;
  /** Server CPU (every process) per answered request (polls not counted), and each process's share of it. */
  readonly serverCpuMsPerRequest: number;
  readonly cpuMsPerRequestByProcess: Record<string, number>;
  readonly serverRssMB: number;
  readonly serverProcesses: number;
  readonly generatorCpuCores: number;
  /** The generator's CPU per answered request (polls not counted), the figure its client code is judged by. */
  readonly generatorCpuMsPerRequest: number;
  readonly load: string;
  readonly broke: string | null;
  /** Seconds waited before the phase for earlier phases' deliveries (their backlog), when there was one. */
  readonly backlogWaitSecs?: number;
}

const BACKLOG_WAIT_MS = 240_000;

/** Waits (at most BACKLOG_WAIT_MS) until every delivery of the sends so far arrived; the seconds waited. */
async function waitForBacklog(day: Day): Promise<number> {
  const start = performance.now();
  let lastLog = start;
  while (!day.ledger.complete(0, day.seq) && performance.now() - start < BACKLOG_WAIT_MS) {
    await new Promise((r) => setTimeout(r, 100));
    if (performance.now() - lastLog > 10_000) {
      lastLog = performance.now();
      const { expected, received } = day.ledger.summary(0, day.seq);
      log(`    waiting for the backlog: ${expected - received} deliveries still due`);
    }
  }
  return round1((performance.now() - start) / 1000);
}

async function runPhase(
  day: Day,
  server: ChildProcess,
  label: string,
  compress: number,
  seconds: number,
  breakP99: number,
): Promise<PhaseResult> {
  day.rec = new Recorder();
  const firstSeq = day.seq;
  const rates = pacedRates(day.clients.length, compress);
  const offered = rates.read + rates.presence + rates.reaction + rates.send * 3;
  log(`  ${label}: time ×${compress}, offering ~${Math.round(offered)} req/s (+ flags after reads) for ${seconds} s…`);
  const start = performance.now();
  const pacers = {
    read: new Pacer(rates.read, start),
    presence: new Pacer(rates.presence, start),
    reaction: new Pacer(rates.reaction, start),
    send: new Pacer(rates.send, start),
  };
  const cpu0 = treeUsage(server.pid!).cpuSeconds;
  const byProcess0 = cpuByProcess(server.pid!);
  const gen0 = process.cpuUsage();
  let presenceNext = 0;
  const pick = () => day.clients[day.rng.int(day.clients.length)]!;
  const end = start + seconds * 1000;
  let lastLog = start;
  while (performance.now() < end) {
    await new Promise((r) => setTimeout(r, 20));
    const now = performance.now();
    const act = (client: Client, action: (c: Client) => Promise<void>) => {
      if (client.busy) {
        day.rec.shed++;
        return;
      }
      client.busy = true;
      void action(client).finally(() => (client.busy = false));
    };
    for (let i = pacers.read.due(now); i > 0; i--) act(pick(), (c) => day.read(c));
    for (let i = pacers.reaction.due(now); i > 0; i--) act(pick(), (c) => day.react(c));
    for (let i = pacers.send.due(now); i > 0; i--) act(pick(), (c) => day.send(c));
    for (let i = pacers.presence.due(now); i > 0; i--)
      act(day.clients[presenceNext++ % day.clients.length]!, (c) => day.presence(c));
    if (now - lastLog >= 5000) {
      lastLog = now;
      const done = KINDS.reduce((s, k) => s + day.rec.latencies.get(k)!.length, 0);
      const errs = KINDS.reduce((s, k) => s + day.rec.errors.get(k)!, 0) + day.rec.pollErrors;
      log(
        `    ${Math.round((now - start) / 1000)}/${seconds} s: ${done} requests answered, ${day.inFlight} in flight, ${day.rec.shed} actions shed (client busy), ${day.seq - firstSeq} sent, errors ${errs}`,
      );
    }
  }
  const sendWindow = (performance.now() - start) / 1000;
  // Drain: requests still in flight, then the deliveries of this phase's sends.
  const drainEnd = performance.now() + 30_000;
  while (day.inFlight > 0 && performance.now() < drainEnd) await new Promise((r) => setTimeout(r, 50));
  const lastSeq = day.seq;
  while (!day.ledger.complete(firstSeq, lastSeq) && performance.now() < drainEnd)
    await new Promise((r) => setTimeout(r, 50));
  const wall = (performance.now() - start) / 1000;
  const usage = treeUsage(server.pid!);
  const byProcess = cpuByProcess(server.pid!);
  const gen = process.cpuUsage(gen0);
  const rec = day.rec;
  const byKind = Object.fromEntries(
    KINDS.map((k) => {
      const sorted = [...rec.latencies.get(k)!].sort((a, b) => a - b);
      return [
        k,
        {
          rps: round1(sorted.length / sendWindow),
          p50: round1(percentile(sorted, 0.5)),
          p99: round1(percentile(sorted, 0.99)),
          p999: round1(percentile(sorted, 0.999)),
          errors: rec.errors.get(k)!,
        },
      ];
    }),
  ) as PhaseResult["byKind"];
  const d = day.ledger.summary(firstSeq, lastSeq);
  const pairs = d.pairs.sort((a, b) => a - b);
  const all = d.allQueues.sort((a, b) => a - b);
  const errors = KINDS.reduce((s, k) => s + rec.errors.get(k)!, 0) + rec.pollErrors;
  const achieved = KINDS.reduce((s, k) => s + byKind[k].rps, 0);
  // Flags follow from reads (only when an answer held unread messages), so they are not part of what was offered.
  const achievedOffered = achieved - byKind.flags.rps;
  const lost = d.expected - d.received;
  const answered = KINDS.reduce((s, k) => s + rec.latencies.get(k)!.length, 0);
  const msPerRequest = (seconds: number) => round2((seconds * 1000) / Math.max(1, answered));
  const cpuMsPerRequestByProcess = Object.fromEntries(
    [...byProcess].map(([name, s]) => [name, msPerRequest(s - (byProcess0.get(name) ?? 0))]),
  );
  const allRequests = KINDS.flatMap((k) => rec.latencies.get(k)!).sort((a, b) => a - b);
  const p99 = percentile(allRequests, 0.99);
  // A chat server that answers its requests but hands messages out seconds late is not keeping up either.
  const deliveryP99 = percentile(all, 0.99);
  const broke =
    errors > 0
      ? `${errors} errors`
      : lost > 0
        ? `${lost} deliveries missing 30 s after the phase`
        : achievedOffered < 0.9 * offered
          ? `answered ${Math.round(achievedOffered)} of ${Math.round(offered)} req/s offered`
          : p99 > breakP99
            ? `p99 of all requests ${Math.round(p99)} ms > ${breakP99} ms`
            : deliveryP99 > breakP99
              ? `delivery to all queues p99 ${Math.round(deliveryP99)} ms > ${breakP99} ms`
              : null;
  const result: PhaseResult = {
    label,
    compress,
    seconds,
    offered: round1(offered),
    achieved: round1(achieved),
    byKind,
    readShapes: Object.fromEntries(rec.readShapes),
    sends: lastSeq - firstSeq,
    delivery: {
      expected: d.expected,
      received: d.received,
      lost,
      pairP50: round1(percentile(pairs, 0.5)),
      pairP99: round1(percentile(pairs, 0.99)),
      allP50: round1(percentile(all, 0.5)),
      allP99: round1(percentile(all, 0.99)),
      allMax: round1(all[all.length - 1] ?? NaN),
    },
    events: Object.fromEntries(rec.events),
    polls: rec.polls,
    pollsForwarded: rec.pollsForwarded,
    errors,
    shed: rec.shed,
    lastError: rec.lastError,
    serverCpuCores: Math.round(((usage.cpuSeconds - cpu0) / wall) * 100) / 100,
    serverCpuMsPerRequest: msPerRequest(usage.cpuSeconds - cpu0),
    cpuMsPerRequestByProcess,
    serverRssMB: usage.rssMB,
    serverProcesses: usage.processes,
    generatorCpuCores: Math.round(((gen.user + gen.system) / 1e6 / wall) * 100) / 100,
    generatorCpuMsPerRequest: msPerRequest((gen.user + gen.system) / 1e6),
    load: loadavg()
      .map((x) => x.toFixed(1))
      .join(" "),
    broke,
  };
  log(
    `    → ${result.achieved} req/s answered (+ ${round1(result.polls / result.seconds)} poll answers/s, ${result.pollsForwarded} of ${result.polls} forwarded to their queue's worker), delivery ${d.received}/${d.expected} (all queues p99 ${result.delivery.allP99} ms), server ${result.serverCpuCores} cores ${result.serverRssMB} MB, ${result.serverCpuMsPerRequest} ms CPU a request (${Object.entries(
      result.cpuMsPerRequestByProcess,
    )
      .map(([n, ms]) => `${n} ${ms}`)
      .join(
        ", ",
      )}), generator ${result.generatorCpuCores} cores (${result.generatorCpuMsPerRequest} ms a request), load ${result.load}${broke ? `; broke: ${broke}` : ""}${result.lastError ? ` (last error: ${result.lastError})` : ""}`,
  );
  return result;
}

interface Row {
  readonly workers: string;
  readonly missing: string | null;
  readonly setup?: { registerSecs: number; clients: number; channels: number };
  readonly phases: readonly PhaseResult[];
  readonly saturation?: PhaseResult | null;
  /** Every send of the row, counted after the final wait. */
  readonly whole?: { sends: number; expected: number; received: number };
  readonly duplicates?: number;
  readonly unexpected?: number;
  readonly orphans?: number;
}

interface Options {
  readonly clients: number;
  readonly seconds: number;
  readonly compress: number;
  readonly rampSteps: number;
  readonly stepSeconds: number;
  /** Each ramp step multiplies (or divides) the rate by this. */
  readonly stepFactor: number;
  readonly breakP99: number;
  /** --cpu-prof DIR: every server process (workers inherit the flag) writes a V8 CPU profile there at its exit. */
  readonly cpuProfDir?: string;
}

async function runRow(dataDir: string, workers: string, serveArgs: readonly string[], o: Options): Promise<Row> {
  log(`\n== workers: ${workers} ==`);
  const work = workingCopy(dataDir);
  const store = openStore(work.dir);
  const realmId = store.getUser(JSON.parse(readFileSync(join(dataDir, "dataset.json"), "utf8")).ownerId).realmId;
  const humans = store
    .realmUsers(realmId)
    .filter((u) => u.isActive && !u.isBot)
    .slice(0, o.clients)
    .map((u) => ({ id: u.id, email: u.email, apiKey: u.apiKey }));
  store.close();
  if (humans.length < o.clients) throw new Error(`the dataset has only ${humans.length} active human users`);
  const nodeArgs = o.cpuProfDir ? ["--cpu-prof", "--cpu-prof-dir", o.cpuProfDir] : [];
  const { child, port } = await startServer(work.dir, nodeArgs, serveArgs);
  const stop = () => {
    if (child.exitCode === null) child.kill("SIGTERM");
  };
  process.once("exit", stop);
  const interrupted = () => {
    stop();
    work.cleanup();
    process.exit(130);
  };
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  let opened: Day | null = null;
  try {
    log(`  server on port ${port} (${treeUsage(child.pid!).processes} processes); registering ${o.clients} queues…`);
    const day = new Day(port, [...WORDS.slice(0, 300)]);
    opened = day;
    const r0 = performance.now();
    day.clients = await pool(
      humans,
      16,
      (u, i) => day.register(i, u),
      (n) => log(`    ${n}/${o.clients} registered`),
    );
    const registerSecs = round1((performance.now() - r0) / 1000);
    log(`  ${o.clients} queues in ${registerSecs} s; first presence ping of each (a full presence fetch)…`);
    for (const c of day.clients) day.poll(c);
    await pool(day.clients, 16, (c) => day.presence(c));
    const phases: PhaseResult[] = [];
    phases.push(await runPhase(day, child, "day", o.compress, o.seconds, o.breakP99));
    // Up a step factor from the day's rate while steps hold; if the day phase broke, down by it until one holds.
    let saturation: PhaseResult | null = phases[0]!.broke ? null : phases[0]!;
    const up = saturation !== null;
    let compress = o.compress;
    for (let step = 0; step < o.rampSteps; step++) {
      compress = up ? compress * o.stepFactor : compress / o.stepFactor;
      // A step that starts behind an earlier step's backlog measures that backlog, not its own rate.
      const waited = await waitForBacklog(day);
      const ran = await runPhase(day, child, `ramp ${step + 1}`, round2(compress), o.stepSeconds, o.breakP99);
      const p = waited > 0 ? { ...ran, backlogWaitSecs: waited } : ran;
      phases.push(p);
      if (up && p.broke) break;
      if (!p.broke) saturation = p;
      if (!up && !p.broke) break;
    }
    // A phase's summary is taken after at most 30 s of drain; deliveries later than that are late, not lost.
    // The whole run's tally waits up to 60 s more for them.
    log(`  final tally: waiting up to 60 s for late deliveries…`);
    const tallyEnd = performance.now() + 60_000;
    while (!day.ledger.complete(0, day.seq) && performance.now() < tallyEnd)
      await new Promise((r) => setTimeout(r, 100));
    const whole = day.ledger.summary(0, day.seq);
    day.polling = false;
    return {
      whole: { sends: day.seq, expected: whole.expected, received: whole.received },
      workers,
      missing: null,
      setup: { registerSecs, clients: o.clients, channels: day.members.size },
      phases,
      saturation,
      duplicates: day.ledger.duplicates,
      unexpected: day.ledger.unexpected,
      orphans: day.ledger.orphans,
    };
  } finally {
    process.off("SIGINT", interrupted);
    process.off("SIGTERM", interrupted);
    stop();
    await new Promise((r) => (child.exitCode === null ? child.once("exit", r) : r(null)));
    if (opened) {
      opened.polling = false;
      opened.http.close();
    }
    work.cleanup();
  }
}

/** `parley serve --workers` exists once the CLI's usage text names it. */
function serverHasWorkers(): boolean {
  return readFileSync(join("dist", "tools", "parley.js"), "utf8").includes("--workers");
}

function report(rows: readonly Row[], o: Options, dataset: string): string {
  const ms = (x: number) => (Number.isFinite(x) ? String(x) : "–");
  const lines = [
    `# A day of chat against parley serve (issue #31), ${new Date().toISOString().slice(0, 10)}`,
    "",
    `Machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${Math.round(totalmem() / 1024 ** 3)} GB, Node ${process.version}. The cores are shared with the load generator and with other engineers' work: the load average is printed with every phase and the figures move with it.`,
    "",
    `Dataset: ${dataset}. ${o.clients} active clients (the first active human users), each with an event queue (message, reaction, typing, update_message_flags) it keeps long-polling; before measuring, each pings presence once with no last_update_id (a client's start: the full presence list), later pings are incremental. Time compressed ×${o.compress} in the day phase: per client and real minute 2 narrow reads (channel 30%, topic 25%, DM 15%, search 15%, combined feed 15%; anchored at the client's own oldest unread message in that narrow, else newest), marking the unread messages of each answer read, 0.2 reactions (add, or remove one of its own), 1 presence ping, and 0.1 messages (70% to a channel topic it knows, else a DM) with typing start/stop around each. A client does one thing at a time besides its poll (a read and its marking read, or typing, sending and typing stop, are one action): an action that falls due while the client is still waiting is shed and counted, so an overloaded server shows as a shortfall, not as an ever-growing pile of requests. Day phase ${o.seconds} s, then steps of ${o.stepSeconds} s: up ×${o.stepFactor} a step while they hold, or, if the day phase broke, down ÷${o.stepFactor} a step until one holds (at most ${o.rampSteps} steps). A step breaks on any error, any delivery still missing 30 s after it, < 90% of the offered rate answered, p99 of all requests > ${o.breakP99} ms, or p99 of message delivery to all queues > ${o.breakP99} ms; the saturation rate is the highest phase that held. Before each step the bench waits (up to ${BACKLOG_WAIT_MS / 1000} s, shown by the phase) until every earlier delivery arrived, so that no step starts behind an earlier one's backlog.`,
    "",
    "Delivery: for every message sent, each queue of its audience (the clients subscribed to the channel, or the DM's participants including the sender) must get its event exactly once. Pair latency = poll answer carrying the event − send issued; all-queues latency = the last of its queues' arrivals − send issued. The generator is this one Node process (all clients share one pool of kept-alive connections, undici, one request at a time on each: a poll's connection is not the one its queue was registered on); its CPU is measured (process.cpuUsage) and shown per phase; it shares the 2 cores with the server, so at saturation part of what limits the rate is the generator.",
    "",
  ];
  for (const row of rows) {
    lines.push(`## Workers: ${row.workers}`, "");
    if (row.missing) {
      lines.push(`**Row missing**: ${row.missing}`, "");
      continue;
    }
    lines.push(
      `Registered ${row.setup!.clients} queues in ${row.setup!.registerSecs} s (clients subscribed to ${row.setup!.channels} channels). Over the whole run, after a final wait of up to 60 s: ${row.whole!.sends} messages sent, ${row.whole!.received}/${row.whole!.expected} deliveries, **${row.whole!.expected - row.whole!.received} lost**, duplicate events ${row.duplicates}, events at a queue outside the audience ${row.unexpected}, events of a send that failed ${row.orphans}.`,
      "",
      "| phase | time × | load avg | offered req/s | answered req/s (incl. flags) | actions shed | errors | sends | deliveries got/expected | missing 30 s after the phase | delivery pair p50/p99 ms | all queues p50/p99/max ms | server CPU cores | server RSS MB (procs) | generator CPU cores | broke |",
      "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
      ...row.phases.map(
        (p) =>
          `| ${p.label}${p.backlogWaitSecs ? ` (after ${p.backlogWaitSecs} s of backlog)` : ""} | ${p.compress} | ${p.load} | ${p.offered} | ${p.achieved} | ${p.shed} | ${p.errors} | ${p.sends} | ${p.delivery.received}/${p.delivery.expected} | ${p.delivery.lost} | ${ms(p.delivery.pairP50)} / ${ms(p.delivery.pairP99)} | ${ms(p.delivery.allP50)} / ${ms(p.delivery.allP99)} / ${ms(p.delivery.allMax)} | ${p.serverCpuCores} | ${p.serverRssMB} (${p.serverProcesses}) | ${p.generatorCpuCores} (${p.generatorCpuMsPerRequest} ms a request) | ${p.broke ?? ""} |`,
      ),
      "",
      "By kind (day phase, then the saturation step):",
      "",
      "| phase | kind | req/s | p50 ms | p99 ms | p99.9 ms | errors |",
      "|---|---|---:|---:|---:|---:|---:|",
    );
    const shown = [row.phases[0]!, ...(row.saturation && row.saturation !== row.phases[0] ? [row.saturation] : [])];
    for (const p of shown)
      for (const k of KINDS) {
        const s = p.byKind[k];
        lines.push(`| ${p.label} | ${k} | ${s.rps} | ${ms(s.p50)} | ${ms(s.p99)} | ${ms(s.p999)} | ${s.errors} |`);
      }
    const first = row.phases[0]!;
    lines.push(
      "",
      `Reads by narrow (day phase): ${Object.entries(first.readShapes)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")}. Events received (day phase): ${Object.entries(first.events)
        .map(([k, v]) => `${k} ${v}`)
        .join(
          ", ",
        )}; ${first.polls} poll answers (${first.pollsForwarded} forwarded from the worker the poll reached to its queue's).${first.lastError ? ` Last error: ${first.lastError}` : ""}`,
      "",
      row.saturation
        ? `Saturation at ${row.workers} worker(s): the highest phase that held was ×${row.saturation.compress}, ${row.saturation.achieved} req/s answered (${row.saturation.byKind.read.rps} reads/s); delivery to all queues p99 there ${ms(row.saturation.delivery.allP99)} ms (target ≤ 100 ms at the 1-worker saturation rate).`
        : "Saturation: no ramp step held (the first step already broke), so no saturation rate is given for this row.",
      "",
    );
  }
  return lines.join("\n");
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      clients: { type: "string" },
      seconds: { type: "string" },
      compress: { type: "string" },
      workers: { type: "string" },
      "ramp-steps": { type: "string" },
      "step-seconds": { type: "string" },
      "step-factor": { type: "string" },
      "break-p99-ms": { type: "string" },
      scale: { type: "string" },
      data: { type: "string" },
      out: { type: "string" },
      long: { type: "boolean" },
      "cpu-prof": { type: "string" },
    },
    strict: true,
  });
  const o: Options = {
    clients: Number(values.clients ?? 1000),
    seconds: Number(values.seconds ?? (values.long ? 900 : 120)),
    compress: Number(values.compress ?? 10),
    rampSteps: Number(values["ramp-steps"] ?? (values.long ? 10 : 8)),
    stepSeconds: Number(values["step-seconds"] ?? (values.long ? 60 : 20)),
    stepFactor: Number(values["step-factor"] ?? 1.25),
    breakP99: Number(values["break-p99-ms"] ?? 1000),
    ...(values["cpu-prof"] ? { cpuProfDir: resolve(values["cpu-prof"]) } : {}),
  };
  for (const [name, value] of Object.entries(o))
    if (typeof value !== "number") continue;
    else if (!Number.isFinite(value) || value < 0 || (value === 0 && name !== "rampSteps"))
      throw new Error(`--${name} must be a positive number (--ramp-steps may be 0: the day phase alone)`);
  if (o.stepFactor <= 1)
    throw new Error(`--step-factor must be above 1 (it multiplies the rate a step), not ${o.stepFactor}`);
  const workersList = (values.workers ?? "1,auto").split(",").map((w) => w.trim());
  for (const w of workersList)
    if (w !== "auto" && !/^\d+$/.test(w))
      throw new Error(`--workers takes numbers or auto (comma-separated), not ${w}`);
  const ulimit = Number(execSync("ulimit -n", { shell: "/bin/sh" }).toString().trim());
  if (ulimit < o.clients * 3 + 100)
    log(`warning: ulimit -n ${ulimit} is low for ${o.clients} clients (each holds a poll and a request socket)`);
  const choice = chooseDataset(values.scale, values.data, "100k");
  const manifest = await ensureDataset(choice, false, log);
  const dataset = `${manifest.scale.messages.toLocaleString("en")} messages, ${manifest.scale.users.toLocaleString("en")} users, ${manifest.scale.channels} channels (bench/dataset.ts)`;
  const hasWorkers = serverHasWorkers();
  log(`parley serve ${hasWorkers ? "has" : "has no"} --workers option`);
  const rows: Row[] = [];
  for (const w of workersList) {
    if (!hasWorkers && w !== "1") {
      rows.push({
        workers: w,
        missing: `\`parley serve --workers\` does not exist on this build yet, so this configuration was not run (no figure is estimated for it).`,
        phases: [],
      });
      continue;
    }
    rows.push(await runRow(choice.dir, w, hasWorkers ? ["--workers", w] : [], o));
  }
  const md = report(rows, o, dataset);
  const outDir = values.out ?? join("bench", "results");
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `day-${new Date().toISOString().slice(0, 10)}-${o.clients}.md`);
  writeFileSync(file, md);
  writeFileSync(file.replace(/\.md$/, ".json"), JSON.stringify({ options: o, rows }, null, 2) + "\n");
  process.stdout.write(md + "\n");
  log(`written ${file}`);
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
    // Keep-alive sockets and timers of the generator would hold the process open.
    setTimeout(() => process.exit(code), 100).unref();
  },
  (error: unknown) => {
    console.error(`bench:day: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
