/**
 * @module tools/generate/generate
 * Builds a realistic realm through the engine (store.batch per message batch) and,
 * optionally, the same dataset as PostgreSQL COPY files in Zulip's schema.
 *
 * One deterministic pass: the plan (plan.ts) fixes users, channels, idleness and read
 * watermarks; the message loop draws every message from a seeded PRNG, sends it to the
 * engine (IDs are 1..N in order) and writes the peer's rows for the same message. Joins
 * and leaves happen between batches, through the engine's subscribe/unsubscribe.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type Store } from "../../src/engine/index.js";
import { openStore } from "../../src/index.js";
import { progressBar, type Progress } from "../progress.js";
import { ContentMaker, channelName, fullName, topicName } from "./content.js";
import { IndexedSet } from "./indexed-set.js";
import { writeManifest, type Manifest, type SubjectIds } from "./manifest.js";
import { CopyWriter, FLAG, RECIPIENT } from "./pg-copy.js";
import { planRealm, scaleFor, type GenerateOptions, type RealmPlan } from "./plan.js";
import { markReadUpTo } from "./read-state.js";
import { Rng, Zipf } from "./prng.js";
import { COMMON_WORD, RARE_WORD } from "./vocab.js";
import { internals } from "../../src/engine/internal.js";
import { getMessageRecord } from "../../src/engine/storage/message-records.js";
import { SCHEMA_VERSION } from "../../src/engine/storage/tables.js";

export interface GenerateRun extends GenerateOptions {
  /** Also write COPY files for the PostgreSQL peer into this directory. */
  readonly pgDir?: string | null;
  /** Receives every (user, message, flags) row of the engine's model (no soft deactivation): a test oracle. */
  readonly rowSink?: (userId: number, messageId: number, flags: number) => void;
  readonly quiet?: boolean;
  /**
   * Called after each message batch with the number of messages sent so far (bench/gen-scaling.ts logs rate and
   * memory).
   */
  readonly onProgress?: (messagesDone: number, store: Store) => void;
  /** Messages per LMDB transaction (rounded to whole batches); the output does not depend on it. */
  readonly messagesPerCommit?: number;
  /** Bitmap cache budget in bytes (GENERATOR_CACHE_BYTES when absent). */
  readonly bitmapCacheBytes?: number;
}

type RowSink = (userId: number, messageId: number, flags: number) => void;

/** Messages per LMDB transaction during the message pass (whole batches). */
const MESSAGES_PER_COMMIT = 16_000;

/**
 * The generator's bitmap cache budget: four times the server's. A 10M store's bitmaps
 * outgrow the server's 512 MB at ~3.5M messages; from there every transaction evicted
 * and reloaded bitmaps it was about to touch again (10% of the 10M wall time, 15% of its
 * CPU: bench/results/gen-scaling.md). A bulk load on a bench machine can afford a bigger
 * bound (the estimate reaches ~1.2 GB at 10M).
 */
const GENERATOR_CACHE_BYTES = 2048 * 1024 * 1024;

const T0 = 1_577_836_800; // 2020-01-01T00:00:00Z: dateSent is synthetic and increasing.

export async function generateDataset(dir: string, run: GenerateRun): Promise<Manifest> {
  if (existsSync(join(dir, "data.mdb")) || existsSync(join(dir, "dataset.json"))) {
    throw new Error(`${dir} already holds a store: remove it or pass another --data`);
  }
  const started = Date.now();
  const scale = scaleFor(run);
  const root = new Rng(scale.seed);
  const plan = planRealm(scale, root.fork(1));
  const rng = root.fork(2);
  const churnRng = root.fork(3);
  const keyRng = root.fork(4);
  let clock = T0;
  const store = openStore(dir, {
    noSync: true,
    now: () => clock,
    bitmapCacheBytes: run.bitmapCacheBytes ?? GENERATOR_CACHE_BYTES,
  });
  const pg = run.pgDir ? new CopyWriter(run.pgDir) : null;
  const bar: Progress | null = run.quiet ? null : progressBar("generate", scale.messages);
  try {
    const apiKey = () =>
      Array.from(
        { length: 32 },
        () => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"[keyRng.int(62)],
      ).join("");
    const { realm, owner } = store.createRealm({
      subdomain: "",
      name: "Bench",
      owner: { email: "user0@example.com", fullName: fullName(0), apiKey: apiKey() },
    });
    const uid: number[] = [owner.id];
    for (let from = 1; from < scale.users; from += 2000) {
      store.batch(() => {
        for (let i = from; i < Math.min(scale.users, from + 2000); i++) {
          uid.push(
            store.createUser({
              realmId: realm.id,
              email: `user${i}@example.com`,
              fullName: fullName(i),
              apiKey: apiKey(),
            }).id,
          );
        }
      });
    }
    const channelIds: number[] = [];
    const names: string[] = [];
    for (let from = 0; from < scale.channels; from += 20) {
      store.batch(() => {
        for (let j = from; j < Math.min(scale.channels, from + 20); j++) {
          const name = channelName(j);
          const result = store.subscribe(owner.id, {
            channels: [{ name }],
            principals: plan.members[j]!.map((i) => uid[i]!),
          });
          channelIds.push(result.createdChannelIds[0]!);
          names.push(name);
        }
      });
    }

    const world = new World(plan, channelIds);
    const maker = new MessageMaker(plan, world, rng);
    const emit = new RowEmitter(plan, world, uid, pg, run.rowSink ?? null);
    let churnEvents = 0;
    // Several batches share one LMDB transaction: each transaction rewrites the newest
    // chunk of every bitmap its messages touched and copies the B-tree pages on their
    // paths, and with hundreds of thousands of topic and conversation bitmaps those
    // are mostly different pages per key, so the per-transaction cost grew with the
    // store. Batches (the unit of churn and idleness) are unchanged, so is the output.
    const perCommit =
      Math.max(1, Math.floor((run.messagesPerCommit ?? MESSAGES_PER_COMMIT) / scale.batchSize)) * scale.batchSize;
    for (let commitStart = 0; commitStart < scale.messages; commitStart += perCommit) {
      const commitEnd = Math.min(scale.messages, commitStart + perCommit);
      store.batch(() => {
        for (let start = commitStart; start < commitEnd; start += scale.batchSize) {
          world.advanceIdle(start);
          const end = Math.min(scale.messages, start + scale.batchSize);
          if (start > 0)
            churnEvents += churn(
              store,
              owner.id,
              plan,
              world,
              uid,
              names,
              churnRng,
              Math.max(1, Math.round(scale.batchSize / 250)),
            );
          const starred = new Map<number, number[]>();
          for (let i = start; i < end; i++) {
            clock += 1 + rng.int(39);
            const spec = maker.next(i);
            const to =
              spec.channel !== null
                ? { type: "channel" as const, channel: channelIds[spec.channel]!, topic: spec.topic }
                : {
                    type: "direct" as const,
                    users: spec.participants.filter((p) => p !== spec.sender).map((p) => uid[p]!),
                  };
            const { id } = store.sendMessage({
              senderId: uid[spec.sender]!,
              to,
              content: spec.content,
              client: "website",
              readBySender: true,
              dateSent: clock,
              // History, as an import replays it: its emails went out long ago. Left on, every
              // generated user is away, so each mention and direct message joined a batch that
              // nothing sends here, and each join rewrote the whole batch: quadratic, the 1M
              // dataset went from ~65 s to over 30 min.
              missedMessageEmails: false,
            });
            if (id !== i + 1)
              throw new Error(`engine assigned message ID ${id} to message ${i + 1}: the store was not empty`);
            for (const u of spec.starredBy) {
              const list = starred.get(u);
              if (list) list.push(id);
              else starred.set(u, [id]);
            }
            emit.message(store, spec, id, clock);
          }
          for (const [u, ids] of starred) store.updateFlags(uid[u]!, ids, "starred", "add");
        }
      });
      bar?.update(commitEnd);
      run.onProgress?.(commitEnd, store);
      // Let timers run: cli-progress redraws (and signals arrive) between transactions.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    bar?.stop();

    // Read state: everyone caught up to their watermark (see read-state.ts for why ranges).
    for (let from = 0; from < scale.users; from += 1000) {
      store.batch(() => {
        for (let i = from; i < Math.min(scale.users, from + 1000); i++) markReadUpTo(store, uid[i]!, plan.readUpTo[i]!);
      });
    }

    // Main mutes two topics of one of its channels (first_unread and unread skip them).
    const mainChannel = world.channelsOf(plan.subjects.main).find((j) => j !== 0 && world.topicCount(j) >= 3) ?? 0;
    const mutedTopics =
      world.topicCount(mainChannel) >= 3
        ? [1, 2].map((k) => ({
            userId: uid[plan.subjects.main]!,
            channelId: channelIds[mainChannel]!,
            topic: topicName(k),
          }))
        : [];
    store.batch(() => {
      for (const m of mutedTopics) store.setTopicPolicy(m.userId, m.channelId, m.topic, 1);
    });

    if (pg) writePeerTables(pg, plan, world, uid, channelIds, names, realm.id, mutedTopics, clock, emit.huddles);
    pg?.close();

    const s = plan.subjects;
    const subjects: SubjectIds = {
      sender: uid[s.sender]!,
      main: uid[s.main]!,
      backlog: uid[s.backlog]!,
      hundred: uid[s.hundred]!,
      dmPartner: uid[s.dmPartner]!,
    };
    const subjectEmails = {
      sender: `user${s.sender}@example.com`,
      main: `user${s.main}@example.com`,
      backlog: `user${s.backlog}@example.com`,
      hundred: `user${s.hundred}@example.com`,
      dmPartner: `user${s.dmPartner}@example.com`,
    };
    const manifest: Manifest = {
      version: 1,
      storeSchema: SCHEMA_VERSION,
      scale,
      realmId: realm.id,
      ownerId: owner.id,
      ownerEmail: "user0@example.com",
      subjects,
      subjectEmails,
      channelIds,
      channelNames: names,
      generalChannelId: channelIds[0]!,
      bigTopic: topicName(world.busiestTopic(0)),
      commonWord: COMMON_WORD,
      rareWord: RARE_WORD,
      rareCount: maker.rareCount,
      lastMessageId: scale.messages,
      subscriptions: world.subscriptionCount(),
      churnEvents,
      mutedTopics,
      usermessageRows: emit.peerRows,
      usermessageRowsWithoutSoftDeactivation: emit.fullRows,
      pgDir: run.pgDir ?? null,
      seconds: (Date.now() - started) / 1000,
    };
    writeManifest(dir, manifest);
    return manifest;
  } finally {
    bar?.stop();
    store.close();
  }
}

/** Who is subscribed (and awake) where, as the history unfolds. */
export class World {
  readonly members: IndexedSet[];
  /** Members who are not soft-deactivated at the current message. */
  readonly awake: IndexedSet[];
  /** Every (user, channel) that ever had a subscription; value: active now. */
  readonly everSubscribed = new Map<string, boolean>();
  readonly #userChannels: Set<number>[];
  readonly #plan: RealmPlan;
  readonly #idleAt = new Map<number, number[]>();
  readonly #topicCounts: number[];
  readonly #topicUse: Map<number, number>[];

  readonly #channelIds: readonly number[];

  constructor(plan: RealmPlan, channelIds: readonly number[]) {
    this.#plan = plan;
    this.#channelIds = channelIds;
    const c = channelIds.length;
    this.#userChannels = Array.from({ length: plan.scale.users }, () => new Set<number>());
    this.members = plan.members.map((list, j) => {
      for (const u of list) {
        this.#userChannels[u]!.add(j);
        this.everSubscribed.set(`${u}:${j}`, true);
      }
      return new IndexedSet(list);
    });
    this.awake = plan.members.map((list) => new IndexedSet(list.filter((u) => plan.idleFrom[u]! > 0)));
    plan.idleFrom.forEach((at, u) => {
      if (at > 0 && Number.isFinite(at)) {
        const list = this.#idleAt.get(at);
        if (list) list.push(u);
        else this.#idleAt.set(at, [u]);
      }
    });
    this.#topicCounts = new Array<number>(c).fill(0);
    this.#topicUse = Array.from({ length: c }, () => new Map<number, number>());
  }

  channelId(j: number): number {
    return this.#channelIds[j]!;
  }

  isAwake(u: number, index: number): boolean {
    return this.#plan.idleFrom[u]! > index;
  }

  /** Soft-deactivates the users whose idle point is `index` (a batch boundary). */
  advanceIdle(index: number): void {
    for (const u of this.#idleAt.get(index) ?? []) for (const j of this.#userChannels[u]!) this.awake[j]!.delete(u);
  }

  join(u: number, j: number, index: number): void {
    this.members[j]!.add(u);
    if (this.isAwake(u, index)) this.awake[j]!.add(u);
    this.#userChannels[u]!.add(j);
    this.everSubscribed.set(`${u}:${j}`, true);
  }

  leave(u: number, j: number): void {
    this.members[j]!.delete(u);
    this.awake[j]!.delete(u);
    this.#userChannels[u]!.delete(j);
    this.everSubscribed.set(`${u}:${j}`, false);
  }

  channelsOf(u: number): number[] {
    return [...this.#userChannels[u]!].sort((a, b) => a - b);
  }

  /** Picks a topic: a new one sometimes (long tail), else skewed towards the oldest. */
  topic(j: number, rng: Rng): number {
    const count = this.#topicCounts[j]!;
    const k = count === 0 || rng.chance(0.08) ? this.#topicCounts[j]!++ : Math.floor(count * Math.pow(rng.next(), 2.5));
    const use = this.#topicUse[j]!;
    use.set(k, (use.get(k) ?? 0) + 1);
    return k;
  }

  topicCount(j: number): number {
    return this.#topicCounts[j]!;
  }

  busiestTopic(j: number): number {
    let best = 0;
    let bestCount = -1;
    for (const [k, n] of this.#topicUse[j]!) if (n > bestCount) [best, bestCount] = [k, n];
    return best;
  }

  subscriptionCount(): number {
    return this.everSubscribed.size;
  }
}

export interface MessageSpec {
  readonly index: number;
  readonly sender: number;
  /** Channel index, or null for a direct message. */
  readonly channel: number | null;
  readonly topic: string;
  readonly topicIndex: number;
  /** Direct-message participants (user indices, sender included). */
  readonly participants: readonly number[];
  readonly mentioned: readonly number[];
  readonly starredBy: readonly number[];
  readonly content: string;
}

class MessageMaker {
  readonly #plan: RealmPlan;
  readonly #world: World;
  readonly #rng: Rng;
  readonly #content: ContentMaker;
  readonly #activeZipf: Zipf;
  readonly #trafficCdf: Float64Array;
  rareCount = 0;

  constructor(plan: RealmPlan, world: World, rng: Rng) {
    this.#plan = plan;
    this.#world = world;
    this.#rng = rng;
    this.#content = new ContentMaker(rng);
    this.#activeZipf = new Zipf(plan.active.length, 1.0);
    this.#trafficCdf = new Float64Array(plan.traffic.length);
    let total = 0;
    plan.traffic.forEach((w, j) => {
      total += w;
      this.#trafficCdf[j] = total;
    });
  }

  next(index: number): MessageSpec {
    const { scale, subjects } = this.#plan;
    const rng = this.#rng;
    const r = rng.next();
    const rare = rng.chance(0.0001) || index === Math.floor(scale.messages / 2);
    if (rare) this.rareCount++;
    if (r >= scale.generalShare && r < scale.generalShare + scale.dmShare) return this.#direct(index, rare);
    const j = r < scale.generalShare ? 0 : this.#trafficChannel();
    const sender = this.#sender(j);
    const topicIndex = this.#world.topic(j, rng);
    const members = this.#world.members[j]!;
    const mentioned = new Set<number>();
    if (rng.chance(0.03)) {
      const m = members.pick(rng);
      if (m !== undefined && m !== sender) mentioned.add(m);
    }
    if (members.has(subjects.main) && sender !== subjects.main && rng.chance(0.005)) mentioned.add(subjects.main);
    const starredBy: number[] = [];
    if (members.has(subjects.main) && rng.chance(0.01)) starredBy.push(subjects.main);
    if (members.has(subjects.backlog) && rng.chance(0.002)) starredBy.push(subjects.backlog);
    const content = this.#content.message([...mentioned].map(fullName), rare);
    return {
      index,
      sender,
      channel: j,
      topic: topicName(topicIndex),
      topicIndex,
      participants: [],
      mentioned: [...mentioned],
      starredBy,
      content,
    };
  }

  #trafficChannel(): number {
    const u = this.#rng.next() * this.#trafficCdf[this.#trafficCdf.length - 1]!;
    let lo = 1;
    let hi = this.#trafficCdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#trafficCdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  #activeByRank(): number {
    return this.#plan.active[this.#activeZipf.sample(this.#rng)]!;
  }

  /** Mostly awake members; prolific users (Zipf over active users) when they belong. */
  #sender(j: number): number {
    const rng = this.#rng;
    const members = this.#world.members[j]!;
    if (rng.chance(0.5)) {
      for (let tries = 0; tries < 8; tries++) {
        const u = this.#activeByRank();
        if (members.has(u)) return u;
      }
    }
    return this.#world.awake[j]!.pick(rng) ?? members.pick(rng) ?? this.#plan.subjects.sender;
  }

  #direct(index: number, rare: boolean): MessageSpec {
    const rng = this.#rng;
    const { subjects, scale } = this.#plan;
    let participants: number[];
    let sender: number;
    if (rng.chance(0.1)) {
      sender = rng.chance(0.5) ? subjects.main : subjects.dmPartner;
      participants = [subjects.main, subjects.dmPartner];
    } else {
      sender = this.#activeByRank();
      const others = new Set<number>();
      const size = rng.chance(0.7) ? 1 : 2 + rng.int(3);
      while (others.size < size) {
        const u = rng.chance(0.6) ? rng.pick(this.#plan.active) : rng.int(scale.users);
        if (u !== sender) others.add(u);
      }
      participants = [sender, ...others];
    }
    const starredBy = participants.includes(subjects.main) && rng.chance(0.01) ? [subjects.main] : [];
    const content = this.#content.message([], rare);
    return { index, sender, channel: null, topic: "", topicIndex: -1, participants, mentioned: [], starredBy, content };
  }
}

/** Turns each sent message into peer rows (and oracle rows), mirroring Zulip's send path. */
class RowEmitter {
  peerRows = 0;
  fullRows = 0;
  readonly #plan: RealmPlan;
  readonly #world: World;
  readonly #uid: readonly number[];
  readonly #pg: CopyWriter | null;
  readonly #sink: RowSink | null;
  readonly huddles = new Map<string, { seq: number; members: number[] }>();

  constructor(plan: RealmPlan, world: World, uid: readonly number[], pg: CopyWriter | null, sink: RowSink | null) {
    this.#plan = plan;
    this.#world = world;
    this.#uid = uid;
    this.#pg = pg;
    this.#sink = sink;
  }

  message(store: Store, spec: MessageSpec, id: number, dateSent: number): void {
    const { readUpTo } = this.#plan;
    const flagsFor = (u: number, base: number) =>
      base |
      (u === spec.sender || id <= readUpTo[u]! ? FLAG.read : 0) |
      (spec.starredBy.includes(u) ? FLAG.starred : 0) |
      (spec.mentioned.includes(u) ? FLAG.mentioned : 0);
    let recipientId: number;
    if (spec.channel !== null) {
      const j = spec.channel;
      recipientId = RECIPIENT.stream(this.#world.channelId(j));
      const members = this.#world.members[j]!;
      this.fullRows += members.size + (members.has(spec.sender) ? 0 : 1);
      if (this.#sink) {
        for (const u of members.values()) this.#sink(this.#uid[u]!, id, flagsFor(u, 0));
        if (!members.has(spec.sender)) this.#sink(this.#uid[spec.sender]!, id, flagsFor(spec.sender, 0));
      }
      // Zulip: awake subscribers, plus idle ones with non-zero flags (mentions), plus the sender.
      const rows = new Set<number>(this.#world.awake[j]!.values());
      for (const u of spec.mentioned) rows.add(u);
      rows.add(spec.sender);
      this.peerRows += rows.size;
      if (this.#pg) {
        recipientId = RECIPIENT.stream(this.#world.channelId(j));
        for (const u of rows) this.#userMessage(u, id, flagsFor(u, 0));
      }
    } else {
      this.fullRows += spec.participants.length;
      this.peerRows += spec.participants.length;
      for (const u of spec.participants) {
        const flags = flagsFor(u, FLAG.isPrivate);
        this.#sink?.(this.#uid[u]!, id, flags);
        if (this.#pg) this.#userMessage(u, id, flags);
      }
      if (spec.participants.length === 2) {
        recipientId = RECIPIENT.personal(this.#uid[spec.participants.find((p) => p !== spec.sender)!]!);
      } else {
        const members = spec.participants.map((p) => this.#uid[p]!).sort((a, b) => a - b);
        const k = members.join(",");
        let huddle = this.huddles.get(k);
        if (!huddle) this.huddles.set(k, (huddle = { seq: this.huddles.size + 1, members }));
        recipientId = RECIPIENT.huddle(huddle.seq);
      }
    }
    if (this.#pg) {
      const record = getMessageRecord(internals(store).tables, id)!;
      this.#pg.row("zerver_message", [
        id,
        this.#uid[spec.sender]!,
        recipientId,
        record.realmId,
        1,
        spec.topic,
        spec.content,
        record.renderedContent,
        1,
        new Date(dateSent * 1000).toISOString(),
        1,
        null,
        null,
        record.hasAttachment,
        record.hasImage,
        record.hasLink,
        spec.channel !== null,
      ]);
    }
  }

  #rowId = 0;
  #userMessage(u: number, messageId: number, flags: number): void {
    this.#pg!.rawLine("zerver_usermessage", `${++this.#rowId}\t${this.#uid[u]!}\t${messageId}\t${flags}`);
  }
}

/** Joins and leaves between batches (never the all-users channel, never the 100-subscription subject). */
function churn(
  store: Store,
  ownerId: number,
  plan: RealmPlan,
  world: World,
  uid: readonly number[],
  names: readonly string[],
  rng: Rng,
  events: number,
): number {
  // 0-based index of the next message: decides whether a joining user is awake.
  const nextIndex = internals(store).lastMessageId;
  let done = 0;
  for (let e = 0; e < events; e++) {
    const j = 1 + rng.int(plan.scale.channels - 1);
    const u = rng.int(plan.scale.users);
    if (u === plan.subjects.hundred || u === 0) continue;
    if (world.members[j]!.has(u)) {
      if (world.members[j]!.size <= 3) continue;
      store.unsubscribe(ownerId, [names[j]!], [uid[u]!]);
      world.leave(u, j);
    } else {
      store.subscribe(ownerId, { channels: [{ name: names[j]! }], principals: [uid[u]!] });
      world.join(u, j, nextIndex);
    }
    done++;
  }
  return done;
}

/** The small tables: users, recipients, streams, subscriptions, muted topics. */
function writePeerTables(
  pg: CopyWriter,
  plan: RealmPlan,
  world: World,
  uid: readonly number[],
  channelIds: readonly number[],
  names: readonly string[],
  realmId: number,
  mutedTopics: Manifest["mutedTopics"],
  now: number,
  huddles: ReadonlyMap<string, { seq: number; members: number[] }>,
): void {
  const { users } = plan.scale;
  for (let i = 0; i < users; i++) {
    const idle = plan.idleFrom[i]! < plan.scale.messages;
    // last_active_message_id: what soft deactivation recorded (the last message they had a row for).
    pg.row("zerver_userprofile", [
      uid[i]!,
      `user${i}@example.com`,
      fullName(i),
      realmId,
      true,
      false,
      idle,
      idle ? plan.idleFrom[i]! : null,
    ]);
    pg.row("zerver_recipient", [RECIPIENT.personal(uid[i]!), uid[i]!, 1]);
  }
  channelIds.forEach((id, j) => {
    pg.row("zerver_recipient", [RECIPIENT.stream(id), id, 2]);
    pg.row("zerver_stream", [
      id,
      names[j]!,
      realmId,
      false,
      RECIPIENT.stream(id),
      true,
      new Date(now * 1000).toISOString(),
    ]);
  });
  let subId = 0;
  for (let i = 0; i < users; i++)
    pg.row("zerver_subscription", [++subId, uid[i]!, RECIPIENT.personal(uid[i]!), true, false]);
  for (const [k, active] of world.everSubscribed) {
    const [u, j] = k.split(":").map(Number) as [number, number];
    pg.row("zerver_subscription", [++subId, uid[u]!, RECIPIENT.stream(channelIds[j]!), active, false]);
  }
  // Group DMs: a recipient of type 3 and an (active) subscription per participant.
  for (const { seq, members } of huddles.values()) {
    pg.row("zerver_recipient", [RECIPIENT.huddle(seq), seq, 3]);
    for (const userId of members) pg.row("zerver_subscription", [++subId, userId, RECIPIENT.huddle(seq), true, false]);
  }
  let topicId = 0;
  for (const m of mutedTopics)
    pg.row("zerver_usertopic", [
      ++topicId,
      m.userId,
      m.channelId,
      RECIPIENT.stream(m.channelId),
      m.topic,
      new Date(now * 1000).toISOString(),
      1,
    ]);
}
